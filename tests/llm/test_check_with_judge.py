"""`dialogcheck check` with a judge configured in eval/conftest.yml, served by a real loopback server."""

import json

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.llm.conftest import Answer, error_body, openai_body

SCENARIO = """
scenario:
  name: Judged
  simulation_context: You want a new card.
  goals:
    criteria:
      - The agent confirms before ordering
    assertions:
      - bot_uttered: {text_matches: ordered}
    sop:
      - id: polite
        evaluator: {type: llm_judge, criterion: The agent is polite}
"""
EVENTS = [
    {"event": "user", "text": "replace my card"},
    {"event": "bot", "text": "Shall I order it?"},
    {"event": "user", "text": "yes"},
    {"event": "tool_executed", "tool_name": "order_replacement", "arguments": {}, "source": "local"},
    {"event": "bot", "text": "Your card is ordered."},
]
PASS = openai_body('{"verdict": "PASS", "rationale": "it asked first"}')


def project(tmp_path, server, extra: str = ""):
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(
        "evaluation:\n"
        f"  llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: judge, max_retries: 1, timeout: 5}}\n"
        f"{extra}"
    )
    scenario = tmp_path / "eval" / "scenarios" / "judged.yml"
    scenario.write_text(SCENARIO)
    conversation = tmp_path / "run.jsonl"
    conversation.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    return str(scenario), str(conversation)


def check(*args):
    return CliRunner().invoke(cli, ["check", "--format", "json", *args])


def test_criteria_and_llm_judge_steps_are_judged_and_a_rerun_makes_no_call(tmp_path, openai_server):
    openai_server.answer(Answer(body=PASS))
    scenario, conversation = project(tmp_path, openai_server)
    first = check("--scenario", scenario, conversation)
    assert first.exit_code == 0, first.output
    document = json.loads(first.stdout)
    assert document["criteria"] == [
        {
            "criterion": "The agent confirms before ordering",
            "outcome": "pass",
            "detail": "it asked first",
            "usage": {"input_tokens": 11, "output_tokens": 7, "cost": None},
        }
    ]
    assert document["sop"][0]["outcome"] == "pass"
    assert openai_server.count == 2
    prompt = openai_server.bodies[0]["messages"][0]["content"]
    assert "USER: replace my card" in prompt and "tool order_replacement() -> ok" in prompt
    assert (tmp_path / ".dialogcheck" / "cache").is_dir()

    second = check("--scenario", scenario, conversation)
    assert openai_server.count == 2  # every answer came from the cache
    assert json.loads(second.stdout)["criteria"][0]["outcome"] == "pass"

    check("--no-cache", "--scenario", scenario, conversation)
    assert openai_server.count == 4


def test_a_failing_verdict_fails_the_run(tmp_path, openai_server):
    openai_server.answer(Answer(body=openai_body('{"verdict": "FAIL", "rationale": "it never asked"}')))
    scenario, conversation = project(tmp_path, openai_server)
    result = check("--scenario", scenario, conversation)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["criteria"][0]["detail"] == "it never asked"


def test_a_malformed_answer_then_a_valid_one(tmp_path, openai_server):
    openai_server.answer(Answer(body=openai_body("Sure! PASS.")), Answer(body=PASS))
    scenario, conversation = project(tmp_path, openai_server, "  max_concurrent_llm_calls: 1\n")
    result = check("--scenario", scenario, conversation)
    assert result.exit_code == 0, result.output
    assert openai_server.count == 3  # one malformed answer, retried once, then the other item


def test_a_broken_provider_errors_the_run_exit_3(tmp_path, openai_server, monkeypatch):
    monkeypatch.setattr("dialogcheck.llm.retry.DEFAULT_BACKOFF_BASE", 0.01)
    openai_server.answer(Answer(500, error_body("kaput")))
    scenario, conversation = project(tmp_path, openai_server)
    result = check("--scenario", scenario, conversation)
    assert result.exit_code == 3
    criterion = json.loads(result.stdout)["criteria"][0]
    assert criterion["outcome"] == "error"
    assert criterion["detail"] == (
        f"judge error: openai_compatible model 'judge' at {openai_server.root}/v1 failed after 2 attempts: "
        "HTTP 500: Error code: 500 - kaput"
    )
    assert openai_server.count == 4  # two items, each tried twice


def test_quality_metrics_are_scored_and_never_decide(tmp_path, openai_server):
    metrics = '{"task_completion": {"passed": false, "reasoning": "r"}, "tone": {"score": 2, "reasoning": "curt"}}'
    scenario, conversation = project(tmp_path, openai_server, "  metrics: [task_completion, tone]\n  max_concurrent_llm_calls: 1\n")
    openai_server.answer(Answer(body=PASS), Answer(body=PASS), Answer(body=openai_body(metrics)))
    result = check("--scenario", scenario, conversation)
    document = json.loads(result.stdout)
    assert result.exit_code == 0
    assert document["metrics"]["tone"] == {"score": 2, "reasoning": "curt"}
    assert document["metrics"]["task_completion"]["passed"] is False
    assert document["verdict"] == "pass"
