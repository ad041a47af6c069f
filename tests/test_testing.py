"""`dialogcheck.testing`: `assert_passes` with dialogcheck's explanation, and the `dialogcheck_run` fixture running
scenarios against a test's own agent function and judging recorded conversations."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dialogcheck.testing import Dialogcheck, assert_passes, explain
from tests.conftest import EXAMPLE

pytest_plugins = ["pytester"]

SCENARIOS = EXAMPLE / "eval" / "scenarios"
CONVERSATIONS = EXAMPLE / "conversations"


def echo_agent(conversation_id, text):
    """An agent of the test's own: records a lookup of whatever it is told."""
    if text is None:
        return {"messages": [{"text": "Hi"}], "events": []}
    return {"messages": [{"text": f"Looked up {text}"}], "events": [{"event": "tool_executed", "tool_name": "lookup", "arguments": {"q": text}, "source": "local"}]}


SCENARIO = """
scenario:
  name: Looks up what it is asked
  simulation_context: c
  script: [{message}]
  goals:
    assertions:
      - tool_executed: {{tool_name: lookup, source: local, arguments: {{q: card}}}}
"""


def scenario_file(folder: Path, message: str) -> Path:
    path = folder / "eval" / "scenarios" / "lookup.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    (folder / "eval" / "conftest.yml").write_text("{}\n")
    path.write_text(SCENARIO.format(message=message))
    return path


def test_a_function_agent_runs_a_scenario_and_passes(tmp_path):
    batch = Dialogcheck(tmp_path / "results")(scenario_file(tmp_path / "p", "card"), agent=echo_agent)
    assert_passes(batch)
    assert batch.passed == 1
    assert [p.name for p in (tmp_path / "results").glob("dialogcheck-*/summary.json")] == ["summary.json"]


def test_an_async_function_agent_works_too(tmp_path):
    async def agent(conversation_id, text):
        return echo_agent(conversation_id, text)

    assert_passes(Dialogcheck(tmp_path / "results")(scenario_file(tmp_path / "p", "card"), agent=agent))


def test_a_failing_run_fails_the_assertion_with_the_explanation(tmp_path):
    batch = Dialogcheck(tmp_path / "results")(scenario_file(tmp_path / "p", "balance"), agent=echo_agent)
    with pytest.raises(AssertionError) as raised:
        assert_passes(batch)
    message = str(raised.value)
    assert message.startswith("1 of 1 did not pass:")
    assert "lookup run 1: FAIL (0 passed, 1 failed)" in message
    assert "FAIL  tool_executed lookup (local)" in message
    assert "arguments.q was 'balance', expected 'card'" in message
    assert "USER  balance" in message and "AGENT Looked up balance" in message


def test_the_projects_own_agent_is_used_when_none_is_given(tmp_path):
    with pytest.raises(AssertionError, match="run_stolen_card run 1: FAIL"):
        assert_passes(Dialogcheck(tmp_path)(SCENARIOS / "run_stolen_card.yml"))
    assert_passes(Dialogcheck(tmp_path)(SCENARIOS / "run_cancel.yml"))


def test_an_errored_run_does_not_pass(tmp_path):
    def broken(conversation_id, text):
        raise RuntimeError("database down")

    batch = Dialogcheck(tmp_path)(scenario_file(tmp_path / "p", "card"), agent=broken)
    with pytest.raises(AssertionError) as raised:
        assert_passes(batch)
    assert "lookup run 1: ERROR" in str(raised.value)
    assert "RuntimeError: database down" in str(raised.value)


def test_recorded_conversations_are_judged_and_asserted(tmp_path):
    check = Dialogcheck(tmp_path).check
    good = check(SCENARIOS / "card_replace_confirms_first.yml", CONVERSATIONS / "damaged_card_ok.jsonl")
    assert_passes(good)
    bad = check(SCENARIOS / "card_replace_confirms_first.yml", CONVERSATIONS / "damaged_card_no_confirmation.jsonl")
    with pytest.raises(AssertionError) as raised:
        assert_passes(bad)
    assert "damaged_card_no_confirmation.jsonl" in str(raised.value)
    assert "verdict: FAIL" in str(raised.value)
    assert explain(good) == ""


def test_nothing_to_judge_and_the_wrong_type_do_not_pass():
    with pytest.raises(AssertionError, match="nothing was judged"):
        assert_passes([])
    with pytest.raises(TypeError, match="not str"):
        assert_passes("run_1.json")


def test_the_fixture_in_a_users_test_file(pytester):
    """What a user writes: the fixture from the plugin, an agent of their own, and assert_passes."""
    project = pytester.path / "card_replace"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".dialogcheck", "results"))
    pytester.makepyfile(
        test_agent=f"""
        from dialogcheck.testing import assert_passes

        SCENARIOS = {str(project / "eval" / "scenarios")!r}

        def test_cancel(dialogcheck_run):
            assert_passes(dialogcheck_run(SCENARIOS + "/run_cancel.yml", no_judge=True))

        def test_stolen(dialogcheck_run):
            assert_passes(dialogcheck_run(SCENARIOS + "/run_stolen_card.yml", no_judge=True))
        """
    )
    result = pytester.runpytest("test_agent.py", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    assert "AssertionError: 1 of 1 did not pass:" in result.stdout.str()
    assert "closest: bot message utter_greet" in result.stdout.str()
    assert not (project / "eval" / "results").exists()  # results went to the test's tmp_path
