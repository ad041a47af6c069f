"""`dialogcheck check` with a judge configured in eval/conftest.yml, served by a real loopback server."""

import json

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.llm.conftest import Answer, error_body, judge_says, openai_body

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
PASS = judge_says("PASS", "it asked first", turns=[1])


def project(tmp_path, server, extra: str = ""):
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(
        "evaluation:\n"
        f"  llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: judge, max_retries: 1, timeout: 60}}\n"
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
            "evidence": [0, 1],
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
    openai_server.answer(Answer(body=judge_says("FAIL", "it never asked")))
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


def test_cited_events_are_the_criterion_s_evidence_in_json_and_text(tmp_path, openai_server):
    openai_server.answer(Answer(body=judge_says("PASS", "it asked at turn 1 and ordered after the yes", turns=[1], events=[3])))
    scenario, conversation = project(tmp_path, openai_server)
    document = json.loads(check("--scenario", scenario, conversation).stdout)
    assert document["criteria"][0]["evidence"] == [0, 1, 3]
    assert document["sop"][0]["evidence"] == [0, 1, 3]
    text = CliRunner().invoke(cli, ["check", "--scenario", scenario, conversation]).stdout
    # The second check is answered from the cache, and says so.
    assert "criterion 'The agent confirms before ordering': it asked at turn 1 and ordered after the yes [answered from the cache] [cited: event 0, 1, 3]" in text
    assert "bot_uttered /ordered/: matched" in text and "[cited:" not in text.split("bot_uttered")[1].split("\n")[0]


def test_inconclusive_is_an_error_shown_with_the_judge_s_reason(tmp_path, openai_server):
    openai_server.answer(Answer(body=judge_says("INCONCLUSIVE", "the transcript never says which card")))
    scenario, conversation = project(tmp_path, openai_server)
    result = check("--scenario", scenario, conversation)
    assert result.exit_code == 3
    document = json.loads(result.stdout)
    criterion = document["criteria"][0]
    assert (criterion["outcome"], criterion["detail"], criterion["inconclusive"]) == ("error", "inconclusive: the transcript never says which card", True)
    assert (document["sop"][0]["outcome"], document["sop"][0]["inconclusive"]) == ("error", True)
    assert document["verdict"] == "error"
    text = CliRunner().invoke(cli, ["check", "--scenario", scenario, conversation]).stdout
    assert "ERROR criterion 'The agent confirms before ordering': inconclusive: the transcript never says which card" in text


def test_a_criterion_answered_for_another_id_is_asked_again_then_errors(tmp_path, openai_server):
    wrong = openai_body(json.dumps({"criterion": "criterion:7", "verdict": "PASS", "rationale": "fine", "evidence": {}}))
    openai_server.answer(Answer(body=wrong))
    scenario, conversation = project(tmp_path, openai_server, "  max_concurrent_llm_calls: 1\n")
    result = check("--scenario", scenario, conversation)
    assert result.exit_code == 3
    detail = json.loads(result.stdout)["criteria"][0]["detail"]
    assert detail.startswith("judge error: no valid answer: it answers criterion 'criterion:7', but the question was criterion 'criterion:0'")
    assert openai_server.count == 4  # each of the two items asked twice
