"""`evaluate`: criteria and llm_judge steps go to the judge; without one they are error or skip, never pass."""

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.judged import NO_JUDGE_REASON, Judgement
from dialogcheck.judge.base import JudgeError, JudgeVerdict
from dialogcheck.judging import evaluate, judge_requests
from dialogcheck.llm.base import Usage
from dialogcheck.scenario.load import load_scenario
from tests.conftest import FakeJudge, bot, conv, user

SCENARIO = """
scenario:
  name: Judged
  simulation_context: c
  goals:
    criteria:
      - The agent greets
      - The agent is brief
    assertions:
      - bot_uttered: {text_matches: hello}
    sop:
      - id: polite
        evaluator: {type: llm_judge, criterion: The agent is polite, rubric: strict}
"""
CONVERSATION = conv(user("hi"), bot("hello"))


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "judged.yml"
    path.write_text(SCENARIO)
    return load_scenario(path)


def test_every_judged_item_is_requested_once(scenario):
    keys = [key for key, _ in judge_requests(scenario)]
    assert keys == ["criterion:0", "criterion:1", "sop:polite"]
    judge = FakeJudge(JudgeVerdict(True, "yes"))
    result = evaluate(scenario, CONVERSATION, judge=judge)
    assert sorted(r.criterion for _, r in judge.requests) == ["The agent greets", "The agent is brief", "The agent is polite"]
    assert [c.outcome for c in result.criteria] == [Outcome.PASS, Outcome.PASS]
    assert result.sop.results[0].outcome is Outcome.PASS
    assert result.verdict is Outcome.PASS


def test_a_failed_criterion_fails_the_conversation(scenario):
    judge = FakeJudge(JudgeVerdict(True, "yes"), by_criterion={"The agent is brief": JudgeVerdict(False, "it rambled")})
    result = evaluate(scenario, CONVERSATION, judge=judge)
    assert [(c.outcome, c.detail) for c in result.criteria] == [(Outcome.PASS, "yes"), (Outcome.FAIL, "it rambled")]
    assert result.verdict is Outcome.FAIL


def test_without_a_judge_criteria_are_errors_and_the_run_is_errored(scenario):
    result = evaluate(scenario, CONVERSATION)
    assert [(c.outcome, c.detail) for c in result.criteria] == [(Outcome.ERROR, NO_JUDGE_REASON)] * 2
    assert result.assertions[0].passed
    assert result.verdict is Outcome.ERROR


def test_no_judge_skips_and_asks_nothing(scenario):
    judge = FakeJudge(JudgeVerdict(True, "yes"))
    result = evaluate(scenario, CONVERSATION, judge=judge, no_judge=True)
    assert judge.requests == []
    assert [c.outcome for c in result.criteria] == [Outcome.SKIP, Outcome.SKIP]
    assert result.verdict is Outcome.PASS


def test_judge_errors_are_errors_with_the_raw_answer(scenario):
    result = evaluate(scenario, CONVERSATION, judge=FakeJudge(error=JudgeError("not JSON", raw="PASS!!")))
    assert result.criteria[0].outcome is Outcome.ERROR
    assert result.criteria[0].detail == "judge error: not JSON; raw answer: 'PASS!!'"
    assert result.verdict is Outcome.ERROR


def test_judgements_handed_in_are_used_and_usage_is_summed(scenario):
    judged = {
        "criterion:0": Judgement(Outcome.PASS, "a", Usage(10, 2, 0.001)),
        "criterion:1": Judgement(Outcome.FAIL, "b", Usage(5, 1, None)),
        "sop:polite": Judgement(Outcome.PASS, "c"),
    }
    result = evaluate(scenario, CONVERSATION, judged=judged)
    assert [c.outcome for c in result.criteria] == [Outcome.PASS, Outcome.FAIL]
    assert result.usage == Usage(15, 3, 0.001)


def test_a_crashing_check_is_an_error_not_a_crash(scenario, monkeypatch):
    check = scenario.goals.assertions[0]
    monkeypatch.setattr(type(check), "evaluate", lambda self, c: 1 / 0)
    result = evaluate(scenario, CONVERSATION, no_judge=True)
    assert result.assertions[0].outcome is Outcome.ERROR
    assert result.assertions[0].detail == "the check crashed: ZeroDivisionError: division by zero"


def test_a_scenario_and_an_sop_are_subjects_and_one_evaluate_judges_both():
    from dialogcheck import evaluate_sop, load_conversation, load_sop
    from dialogcheck.pairing import ScenarioSet
    from dialogcheck.subject import Standard, Subject
    from tests.conftest import EXAMPLE

    scenario = load_scenario(EXAMPLE / "eval" / "scenarios" / "card_replace_confirms_first.yml")
    sop = load_sop(EXAMPLE / "sops" / "replace_card.yml")
    several = ScenarioSet.of([scenario])
    assert isinstance(scenario, Subject) and isinstance(sop, Subject) and not isinstance(several, Subject)
    assert all(isinstance(standard, Standard) for standard in (scenario, sop, several))
    assert several.several and not scenario.several and several.own(scenario.slug) is scenario and sop.own(None) is sop
    conversation = load_conversation(EXAMPLE / "conversations" / "sop_orders_without_confirming.jsonl")
    assert evaluate_sop is evaluate
    judged = evaluate(sop, conversation, no_judge=True)
    assert judged.sop is not None and judged.sop.results == sop.evaluate(conversation, no_judge=True).results
    assert judged.subject == sop.name and judged.assertions == () and judged.notes == ()
    assert evaluate(scenario, conversation, no_judge=True).subject == scenario.name
