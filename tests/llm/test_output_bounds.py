"""Every LLM request carries an output bound suited to its role, and a server that refuses `json_schema` is learned once.

A small model on llama.cpp wrote 7,363 tokens for one judge answer: nothing
bounded it. The servers here are real loopback servers that keep each request
body, as llama.cpp's, vLLM's and Ollama's OpenAI-compatible servers receive it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.config import LLMSettings
from dialogcheck.llm import ChatMessage, LLMError
from dialogcheck.llm.factory import make_client
from dialogcheck.llm.structured import ask_json
from tests.cli.test_run import AGENT
from tests.llm.conftest import Answer, asked_criterion, openai_body
from tests.llm.test_format_fallback import SCHEMA, llama_cpp
from tests.test_config import error

SCENARIO = """
scenario:
  name: Card lookup
  simulation_context: You are Ana and you want to know about your card.
  goals:
    criteria: [The agent greets]
"""


def role_of(body: dict) -> str:
    """Which role asked, from the schema its answer must follow."""
    properties = body["response_format"]["json_schema"]["schema"]["properties"]
    return "user" if "done" in properties else "reviewer" if "faults" in properties else "judge" if "verdict" in properties else "metrics"


def answer(body: dict) -> dict:
    role = role_of(body)
    if role == "user":
        return openai_body(json.dumps({"message": "my card please", "done": True}))
    if role == "reviewer":
        return openai_body(json.dumps({"faults": []}))
    if role == "judge":
        return openai_body(json.dumps({"criterion": asked_criterion(body), "verdict": "PASS", "rationale": "it greets", "evidence": {}}))
    return openai_body(json.dumps({"tone": {"score": 4, "reasoning": "polite"}}))


def project(root, server, evaluation: str = "", simulation: str = "", review: str = ""):
    llm = f"provider: openai_compatible, base_url: '{server.root}/v1', max_retries: 0, timeout: 60"
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text(
        "agent: {type: python, callable: 'agent:respond'}\n"
        f"simulation:\n  llm: {{{llm}, model: sim{simulation}}}\n  review:\n    llm: {{{llm}, model: rev{review}}}\n"
        f"evaluation:\n  llm: {{{llm}, model: judge{evaluation}}}\n  metrics: [tone]\n"
    )
    (root / "agent.py").write_text(AGENT)
    (root / "eval" / "scenarios" / "lookup.yml").write_text(SCENARIO)
    return root


def bounds_by_role(server) -> dict[str, set]:
    found: dict[str, set] = {}
    for body in server.bodies:
        found.setdefault(role_of(body), set()).add((body.get("max_tokens"), body.get("max_completion_tokens")))
    return found


def test_every_role_sends_its_own_default_max_tokens(tmp_path, openai_server):
    openai_server.answer(Answer(body=answer))
    root = project(tmp_path / "p", openai_server)
    result = CliRunner().invoke(cli, ["run", str(root), "--simulate", "llm", "--no-cache", "--results", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert bounds_by_role(openai_server) == {"user": {(512, None)}, "reviewer": {(1024, None)}, "judge": {(2048, None)}, "metrics": {(2048, None)}}


def test_the_config_sets_the_bound_per_llm_block_and_max_completion_tokens_replaces_max_tokens(tmp_path, openai_server):
    openai_server.answer(Answer(body=answer))
    root = project(tmp_path / "p", openai_server, evaluation=", max_tokens: 300", simulation=", max_completion_tokens: 64", review=", max_tokens: 99")
    result = CliRunner().invoke(cli, ["run", str(root), "--simulate", "llm", "--no-cache", "--results", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert bounds_by_role(openai_server) == {"user": {(None, 64)}, "reviewer": {(99, None)}, "judge": {(300, None)}, "metrics": {(300, None)}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("evaluation:\n  llm: {provider: openai, model: m, max_tokens: 0}\n", "conftest.yml:2:49: `max_tokens` in `evaluation.llm` must be an integer from 1 to 1000000, got 0"),
        ("simulation:\n  llm: {provider: openai, model: m, max_tokens: lots}\n", "conftest.yml:2:49: `max_tokens` in `simulation.llm` must be an integer, got a string"),
        ("evaluation:\n  llm: {provider: openai, model: m, max_completion_tokens: 2.5}\n", "conftest.yml:2:60: `max_completion_tokens` in `evaluation.llm` must be an integer, got a number"),
        ("evaluation:\n  llm: {provider: openai, model: m, max_token: 10}\n", "conftest.yml:2:37: unknown field `max_token` in `evaluation.llm` (did you mean `max_tokens`?)"),
    ],
)
def test_a_bad_output_bound_is_a_load_error_at_its_place(tmp_path, text, message):
    assert error(tmp_path, text).startswith(message)


def test_an_answer_cut_short_at_its_bound_errors_naming_the_bound(tmp_path, openai_server):
    cut = openai_body('{"criterion": "criterion:0", "verdict": "PA')
    cut["choices"][0]["finish_reason"] = "length"
    openai_server.answer(Answer(body=cut))
    settings = LLMSettings(provider="openai_compatible", model="m", base_url=f"{openai_server.root}/v1", max_retries=0, timeout=60)
    client = make_client(settings, cache=None, max_in_flight=1)
    with pytest.raises(LLMError) as info:
        asyncio.run(ask_json(client, settings, [], SCHEMA, max_tokens=77))
    assert str(info.value).endswith("the answer was cut short at its output bound (max_tokens 77: raise `max_tokens` of the llm block in eval/conftest.yml)")
    assert {body["max_tokens"] for body in openai_server.bodies} == {77}


def test_anthropic_gets_the_role_s_bound_as_its_required_max_tokens(anthropic_server):
    from tests.llm.conftest import anthropic_body

    anthropic_server.answer(Answer(body=anthropic_body('{"verdict": "PASS"}')))
    settings = LLMSettings(provider="anthropic", model="claude-test", base_url=anthropic_server.root, api_key="k" * 20, max_retries=0, timeout=60)
    client = make_client(settings, cache=None, max_in_flight=1)
    asyncio.run(ask_json(client, settings, [], SCHEMA, max_tokens=2048))
    asyncio.run(ask_json(client, replace(settings, options={"max_completion_tokens": 300}), [], SCHEMA))
    assert [body["max_tokens"] for body in anthropic_server.bodies] == [2048, 300]
    assert "max_completion_tokens" not in anthropic_server.bodies[1]


def test_a_first_wave_sent_together_asks_json_schema_once(caplog):
    """llama-cpp-python refuses json_schema with a 500: of eight requests sent at once, one is refused, not each."""
    with llama_cpp() as server:
        server.delay = 1.0  # the refusal comes late: the whole wave is waiting by then, on any machine
        settings = LLMSettings(provider="openai_compatible", model="m", base_url=f"{server.root}/v1", timeout=60.0, max_retries=3)
        client = make_client(settings, cache=None, max_in_flight=8)

        async def wave():
            return await asyncio.gather(*(ask_json(client, settings, [ChatMessage("user", "Judge it.")], SCHEMA, sample=n) for n in range(8)))

        answers = asyncio.run(wave())
    assert [a.value["verdict"] for a in answers] == ["PASS"] * 8
    assert server.formats.count("json_schema") == 1 and server.formats.count("json_object") == 8
    assert sum("refused response_format json_schema" in r.getMessage() for r in caplog.records) == 1


def test_a_request_past_its_wall_clock_limit_is_retried_then_errors_the_check_naming_the_limit(tmp_path, openai_server):
    openai_server.answer(Answer(delay=60))  # a model that writes for ten minutes: the limit stops the wait, not the server
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(
        f"evaluation:\n  llm: {{provider: llama_cpp, base_url: '{openai_server.root}/v1', model: m, max_retries: 1, timeout: 0.5}}\n"
    )
    (tmp_path / "eval" / "scenarios" / "s.yml").write_text(SCENARIO)
    (tmp_path / "c.jsonl").write_text('{"event": "user", "text": "hi"}\n{"event": "bot", "text": "Hello"}\n')
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--no-cache", "--scenario", str(tmp_path / "eval/scenarios/s.yml"), str(tmp_path / "c.jsonl")])
    assert result.exit_code == 3, result.output
    detail = json.loads(result.stdout)["criteria"][0]["detail"]
    assert detail.endswith("failed after 2 attempts: timed out after 0.5 s (`timeout`, the limit of each attempt)")
    assert 1 <= openai_server.count <= 2  # the second attempt may time out before it reaches a loaded server
