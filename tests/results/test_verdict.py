"""A result's verdict and counts: one rule (`worst`) for a conversation's verdict and for counted outcomes."""

import pytest

from dialogcheck.checks.base import CheckResult, Outcome
from dialogcheck.results.model import CheckRef, ConversationResult, Counts, worst
from dialogcheck.sop.model import Step, StepResult, StepSetResult

P, F, S, E = Outcome.PASS, Outcome.FAIL, Outcome.SKIP, Outcome.ERROR


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [((), P), ((P, S), P), ((P, E, S), E), ((E, F), F), ((F, P), F), ((S,), P)],
)
def test_the_worst_outcome_is_a_fail_then_an_error_and_skips_decide_nothing(outcomes, expected):
    assert worst(outcomes) is expected
    assert Counts(outcomes).worst is expected


def _result(assertions, steps=(), set_outcome=None):
    ref = CheckRef("k", "k")
    sop = None
    if set_outcome is not None:
        results = tuple(StepResult(Step(f"s{i}", None, False, 1.0, ref), CheckResult(ref, o, "")) for i, o in enumerate(steps))
        sop = StepSetResult(results, 1.0, None, set_outcome)
    return ConversationResult("a.jsonl", "subject", assertions=tuple(CheckResult(ref, o, "") for o in assertions), sop=sop)


def test_a_conversation_counts_its_sop_as_the_steps_set_verdict_and_every_step_in_its_outcomes():
    failing_optional_step = _result([P], steps=[P, F], set_outcome=P)
    assert failing_optional_step.verdict is P  # an optional step's fail does not fail the set
    assert failing_optional_step.outcomes == (P, P, F)
    assert failing_optional_step.check_counts().failed == 1
    assert [line.outcome for line in failing_optional_step.checks()] == list(failing_optional_step.outcomes)
    assert _result([P, E]).verdict is E and _result([P, E]).any_error
    assert _result([E], steps=[P], set_outcome=F).verdict is F
    assert not _result([P, S]).any_error and _result([P, S]).verdict is P


def test_an_uncalibrated_llm_judge_step_is_read_back_as_such_and_counted_apart():
    """A `check --output` shard read back by `report` keeps what the judge's marks said of an SOP step."""
    from dialogcheck.results.codec import conversation_document, decode_conversation
    from dialogcheck.results.stats import CheckStats

    step = {"id": "ask", "type": "llm_judge", "label": None, "required": True, "weight": 1.0, "outcome": "error", "detail": "uncalibrated (no file)", "evidence": []}
    document = {"source": "log.jsonl#1", "verdict": "error", "subject": "S", "assertions": [], "sop": [step | {"uncalibrated": True}], "criteria": []}
    back = decode_conversation(document, "part-00000.jsonl", 1)
    assert conversation_document(back, with_source=True)["sop"][0]["uncalibrated"] is True
    stats = CheckStats()
    stats.add(back, "log.jsonl#1")
    stats.add(decode_conversation(document | {"sop": [step]}, "part-00000.jsonl", 2), "log.jsonl#2")  # a plain error
    assert [(row.counts.errored, row.uncalibrated) for row in stats] == [(2, 1)]
