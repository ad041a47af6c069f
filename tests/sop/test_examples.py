"""The example SOP (replace a card) against its recorded conversations."""

from dialogcheck.checks.base import Outcome
from dialogcheck.events import load_conversation
from dialogcheck.judge.base import JudgeVerdict
from dialogcheck.judging import evaluate_sop
from dialogcheck.sop import load_sop
from tests.conftest import EXAMPLE, FakeJudge

SOP = EXAMPLE / "sops" / "replace_card.yml"
DETERMINISTIC = ["look_up_first", "card_is_active", "confirm_before_ordering", "valid_order", "no_money_moved"]


def outcomes(name, **kw):
    result = evaluate_sop(load_sop(SOP), load_conversation(EXAMPLE / "conversations" / f"{name}.jsonl"), **kw).sop
    return result, {r.id: r.outcome for r in result.results}


def test_the_example_sop_loads():
    sop = load_sop(SOP)
    assert sop.id == "replace_card"
    assert [s.id for s in sop.steps.steps] == [*DETERMINISTIC, "one_order_clearly_explained"]
    judge_step = sop.steps.steps[-1]
    assert (judge_step.type, judge_step.required) == ("llm_judge", False)


def test_following_the_procedure_passes_every_deterministic_step():
    result, by_id = outcomes("sop_follows_procedure", no_judge=True)
    assert all(by_id[step] is Outcome.PASS for step in DETERMINISTIC)
    assert by_id["one_order_clearly_explained"] is Outcome.SKIP
    assert result.outcome is Outcome.PASS and result.score == 1.0
    judge = FakeJudge(JudgeVerdict(True, "one order, arrival date given"))
    judged, _ = outcomes("sop_follows_procedure", judge=judge)
    assert [r.criterion for _, r in judge.requests] == [load_sop(SOP).steps.steps[-1].evaluator.criterion]
    assert judged.outcome is Outcome.PASS and judged.score == 1.0


def test_a_missing_judge_does_not_hide_a_pass_of_the_required_steps():
    result, by_id = outcomes("sop_follows_procedure")
    assert by_id["one_order_clearly_explained"] is Outcome.ERROR
    assert result.outcome is Outcome.PASS  # the judged step is not required


def test_ordering_without_confirming_fails_the_confirmation_step_only():
    result, by_id = outcomes("sop_orders_without_confirming", no_judge=True)
    assert by_id["confirm_before_ordering"] is Outcome.FAIL
    assert all(by_id[step] is Outcome.PASS for step in DETERMINISTIC if step != "confirm_before_ordering")
    assert result.outcome is Outcome.FAIL
    confirm = next(r for r in result.results if r.id == "confirm_before_ordering")
    assert confirm.detail.startswith(
        "order_replacement at event 8 (turn 1): no bot message before it in turns 0-1 matched /(?i)shall I|confirm|do you want/"
    )
