"""`eval/conftest.yml`: Mantle keys, extensions, and every load error with its position."""

from pathlib import Path

import pytest

from dialogcheck.config import QUALITY_METRICS, find_config, load_config
from dialogcheck.errors import LoadError


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "eval" / "conftest.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def error(tmp_path: Path, text: str) -> str:
    path = write_config(tmp_path, text)
    with pytest.raises(LoadError) as info:
        load_config(path)
    return str(info.value).replace(f"{path}:", "conftest.yml:")


def test_the_mantle_form(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge.j2").write_text("{{ criterion }}")
    config = load_config(
        write_config(
            tmp_path,
            "simulation:\n"
            "  llm: {provider: openai, model: gpt-5-mini, temperature: 0.7}\n"
            "  max_concurrent_llm_calls: 5\n"
            "evaluation:\n"
            "  llm: {provider: anthropic, model: claude-x, max_tokens: 2000}\n"
            "  criteria_judge_prompt: prompts/judge.j2\n",
        )
    )
    assert config.root == tmp_path.resolve()
    sim, judge = config.simulation, config.evaluation
    assert (sim.llm.provider, sim.llm.model, dict(sim.llm.options), sim.max_concurrent_llm_calls) == (
        "openai", "gpt-5-mini", {"temperature": 0.7}, 5,
    )
    assert (judge.llm.provider, dict(judge.llm.options), judge.max_concurrent_llm_calls) == ("anthropic", {"max_tokens": 2000}, 3)
    assert judge.prompts == {"criteria_judge_prompt": (tmp_path / "prompts" / "judge.j2").resolve()}
    assert config.cache.enabled and config.cache.dir == tmp_path.resolve() / ".dialogcheck" / "cache"


def test_extensions_and_defaults(tmp_path):
    config = load_config(
        write_config(
            tmp_path,
            "max_concurrent_llm_calls: 7\n"
            "evaluation:\n"
            "  llm: {provider: ollama, model: qwen3, timeout: 12.5, max_retries: 0, structured_output: json_object, max_prompt_chars: 5000}\n"
            "  metrics: true\n"
            "agent: {type: python, callable: 'agent:respond'}\n"
            "cache: {enabled: false, dir: .llm-cache}\n",
        )
    )
    llm = config.evaluation.llm
    assert (llm.base_url, llm.timeout, llm.max_retries, llm.structured_output) == ("http://localhost:11434/v1", 12.5, 0, "json_object")
    assert llm.max_prompt_chars == 5000 and "max_prompt_chars" not in llm.options
    assert config.evaluation.max_concurrent_llm_calls == 7 and config.simulation.max_concurrent_llm_calls == 7
    assert config.evaluation.metrics == QUALITY_METRICS
    assert (config.agent.type, config.agent.callable) == ("python", "agent:respond")
    assert (config.cache.enabled, config.cache.dir) == (False, tmp_path.resolve() / ".llm-cache")


def test_an_empty_config_is_no_llm(tmp_path):
    config = load_config(write_config(tmp_path, ""))
    assert config.evaluation.llm is None and config.simulation.llm is None and config.agent is None


@pytest.mark.parametrize(
    "text, message",
    [
        ("evaluation:\n  llm: {model: m}\n", "conftest.yml:2:8: `evaluation.llm` is missing required field `provider`"),
        (
            "evaluation:\n  llm: {provider: openia, model: m}\n",
            "conftest.yml:2:19: `provider` in `evaluation.llm` must be one of openai, openai_compatible, vllm, ollama, "
            "llama_cpp, anthropic, got 'openia' (did you mean `openai`?)",
        ),
        ("evaluation:\n  llm: {provider: vllm, model: m}\n", "conftest.yml:2:8: `evaluation.llm` with `provider: vllm` needs `base_url` (the server's /v1 address)"),
        ("evaluation:\n  llm: {provider: openai, model: m, timout: 3}\n", "conftest.yml:2:37: unknown field `timout` in `evaluation.llm` (did you mean `timeout`?)"),
        ("evaluation:\n  llm: {provider: openai, model: m, timeout: 0}\n", "conftest.yml:2:46: `timeout` in `evaluation.llm` must be a number at least 0.001, got 0"),
        (
            "evaluation:\n  llm: {provider: openai, model: m, max_prompt_chars: 10}\n",
            "conftest.yml:2:55: `max_prompt_chars` in `evaluation.llm` must be an integer at least 1000, got 10",
        ),
        ("simulation:\n  max_concurrent_llm_calls: 0\n", "conftest.yml:2:29: `max_concurrent_llm_calls` in `simulation` must be an integer at least 1, got 0"),
        ("evaluation:\n  criteria_judge_prompt: ../../etc/passwd\n", "conftest.yml:2:26: `criteria_judge_prompt` must stay inside the project folder"),
        ("evaluation:\n  metrics_judge_prompt: missing.j2\n", "conftest.yml:2:25: `metrics_judge_prompt`: no such template file 'missing.j2'"),
        ("evaluation:\n  metrics: [tone, helpfullness]\n", "conftest.yml:2:12: unknown quality metric 'helpfullness' in `evaluation.metrics` (did you mean `helpfulness`?)"),
        ("simulation:\n  criteria_judge_prompt: x.j2\n", "conftest.yml:2:3: unknown field `criteria_judge_prompt` in `simulation`"),
        ("agent: {type: rasa}\n", "conftest.yml:1:8: `agent` of type rasa needs `url`"),
        ("agent: {type: python, callable: agent}\n", "conftest.yml:1:8: `agent` of type python needs `callable: MODULE:FUNCTION`"),
        ("cache: {enabled: maybe}\n", "conftest.yml:1:18: `enabled` in `cache` must be true or false, got a string"),
        ("evalution: {}\n", "conftest.yml:1:1: unknown field `evalution` in the config (did you mean `evaluation`?)"),
    ],
)
def test_load_errors(tmp_path, text, message):
    assert error(tmp_path, text).startswith(message)


def test_find_config_from_a_scenario_file(tmp_path):
    path = write_config(tmp_path, "")
    scenario = tmp_path / "eval" / "scenarios" / "a.yml"
    scenario.parent.mkdir()
    scenario.write_text("")
    assert find_config(scenario) == path
    assert find_config(tmp_path) == path
    assert find_config(tmp_path.parent / "elsewhere.yml") is None or find_config(tmp_path.parent / "elsewhere.yml") != path


def test_a_batch_sizes_llm_limits_to_its_parallelism_unless_the_file_sets_them(tmp_path):
    from dialogcheck.config import in_flight_for

    unset = load_config(write_config(tmp_path, "simulation:\n  llm: {provider: openai, model: m}\n"))
    assert (unset.simulation.limit_given, in_flight_for(unset.simulation, 50), in_flight_for(unset.simulation, 1)) == (False, 50, 3)
    per_role = load_config(write_config(tmp_path, "simulation:\n  max_concurrent_llm_calls: 4\n"))
    assert (per_role.simulation.limit_given, in_flight_for(per_role.simulation, 50)) == (True, 4)
    top = load_config(write_config(tmp_path, "max_concurrent_llm_calls: 6\n"))
    assert in_flight_for(top.evaluation, 50) == 6 and in_flight_for(top.simulation, 50) == 6


def test_simulation_seed(tmp_path):
    llm = "  llm: {provider: openai, model: m}\n"
    assert load_config(write_config(tmp_path, f"simulation:\n{llm}  seed: 42\n")).simulation.seed == 42
    assert load_config(write_config(tmp_path, f"simulation:\n{llm}")).simulation.seed is None
    assert error(tmp_path, "simulation:\n  seed: -1\n") == "conftest.yml:2:9: `seed` in `simulation` must be an integer from 0 to 2147483647, got -1"
    assert error(tmp_path, "simulation:\n  seed: 1.5\n") == "conftest.yml:2:9: `seed` in `simulation` must be an integer, got a number"
    assert error(tmp_path, "evaluation:\n  seed: 1\n").startswith("conftest.yml:2:3: unknown field `seed` in `evaluation`")
