"""Step sets: verdict from required steps, score from weights, the threshold, and errors as data."""

from dataclasses import dataclass

import pytest

from dialogcheck.checks.base import Check, CheckResult, Outcome
from dialogcheck.checks.judged import Judgement, JudgeRequest
from dialogcheck.checks.sop_judge import LlmJudge
from dialogcheck.sop import Step, StepSet
from tests.conftest import conv, tool, user
from tests.sop.conftest import steps_from_yaml

P, F, S, E = Outcome.PASS, Outcome.FAIL, Outcome.SKIP, Outcome.ERROR
CONVERSATION = conv(user("hi"), tool("lookup_card"))


@dataclass(frozen=True)
class Fixed(Check):
    """An evaluator that always comes out the same."""

    key = "fixed"
    outcome: Outcome

    def evaluate(self, conversation):
        return CheckResult(self, self.outcome, f"always {self.outcome}")


@dataclass(frozen=True)
class Broken(Check):
    key = "broken"

    def evaluate(self, conversation):
        raise KeyError("oops")


def step_set(*specs, threshold=None):
    """Each spec is an outcome, or (outcome, required, weight)."""
    steps = []
    for i, spec in enumerate(specs, 1):
        outcome, required, weight = spec if isinstance(spec, tuple) else (spec, True, 1.0)
        steps.append(Step(f"s{i}", None, required, weight, Fixed(outcome)))
    return StepSet(tuple(steps), threshold)


@pytest.mark.parametrize(
    ("specs", "threshold", "score", "outcome"),
    [
        ((P, P), None, 1.0, P),
        ((P, F), None, 0.5, F),
        ((P, S), None, 1.0, P),  # a skip is left out of the score
        ((S, S), None, None, P),  # nothing applicable: no score
        ((P, E), None, 0.5, E),  # nothing failed, a required step errored
        ((F, E), None, 0.0, F),  # a failure wins over an error
        ((P, (F, False, 1)), None, 0.5, P),  # a non-required failure moves only the score
        ((P, (E, False, 1)), None, 0.5, P),
        ((P, (F, False, 1)), 0.5, 0.5, P),  # the threshold is met at equality
        ((P, (F, False, 1)), 0.6, 0.5, F),
        (((P, True, 3), (F, False, 1)), 0.75, 0.75, P),  # weights
        (((P, True, 1), (F, False, 3)), 0.75, 0.25, F),
        (((P, True, 0), (F, False, 0)), 0.5, None, P),  # total weight 0: no score, no threshold to apply
        (((P, True, 0), (F, False, 2)), None, 0.0, P),
        ((S, S), 0.9, None, P),
        ((P, (E, False, 1)), 0.9, 0.5, E),  # only the errored step keeps the threshold undecided
        ((P, (E, False, 1), (F, False, 2)), 0.9, 0.25, F),  # even if it had passed, 0.5 < 0.9
        ((E, (F, False, 3)), 0.5, 0.0, F),
    ],
)
def test_verdict_and_score(specs, threshold, score, outcome):
    result = step_set(*specs, threshold=threshold).evaluate(CONVERSATION)
    assert result.score == (pytest.approx(score) if score is not None else None)
    assert result.outcome is outcome
    assert result.threshold == threshold


def test_results_keep_each_step_in_order():
    result = step_set(P, F, S).evaluate(CONVERSATION)
    assert [(r.id, r.type, r.outcome, r.detail) for r in result.results] == [
        ("s1", "fixed", P, "always pass"),
        ("s2", "fixed", F, "always fail"),
        ("s3", "fixed", S, "always skip"),
    ]
    assert not result.passed
    assert result.summary == "3 steps: 1 pass, 1 fail, 1 skip; score 0.50"


def test_summary_with_threshold():
    assert step_set(P, (F, False, 1), threshold=0.6).evaluate(CONVERSATION).summary == (
        "2 steps: 1 pass, 1 fail; score 0.50 (threshold 0.6 missed)"
    )


def test_a_crashing_evaluator_is_an_error_result():
    steps = StepSet((Step("boom", None, True, 1.0, Broken()),))
    result = steps.evaluate(CONVERSATION)
    assert result.outcome is E
    assert result.results[0].detail == "the check crashed: KeyError: 'oops'"


def test_llm_judge_steps_take_their_judgement_by_step_id():
    steps = StepSet((
        Step("a", None, True, 1.0, LlmJudge("good")),
        Step("b", None, False, 1.0, LlmJudge("bad")),
    ))
    assert steps.judge_requests() == [("a", JudgeRequest("good")), ("b", JudgeRequest("bad"))]
    judged = steps.evaluate(CONVERSATION, {"a": Judgement(P, "because"), "b": Judgement(F, "because")})
    assert [r.outcome for r in judged.results] == [P, F]
    assert judged.outcome is P and judged.score == 0.5
    unjudged = steps.evaluate(CONVERSATION)
    assert [r.outcome for r in unjudged.results] == [E, E]
    assert unjudged.outcome is E
    skipped = steps.evaluate(CONVERSATION, no_judge=True)
    assert [r.outcome for r in skipped.results] == [S, S]
    assert skipped.outcome is P and skipped.score is None


def test_step_fields_from_yaml():
    steps = steps_from_yaml(
        """
        - type: tool_called
          toolSlug: lookup_card
        - id: confirm
          label: Confirm first
          required: false
          weight: 2.5
          evaluator: {type: tool_called, toolSlug: order_replacement}
        - evaluator: {type: no_tool_called, toolSlugs: [submit_transfer]}
          weight: 0
        """
    )
    assert [(s.id, s.label, s.required, s.weight, s.type) for s in steps.steps] == [
        ("step-1", None, True, 1.0, "tool_called"),
        ("confirm", "Confirm first", False, 2.5, "tool_called"),
        ("step-3", None, True, 0.0, "no_tool_called"),
    ]
    assert steps.threshold is None
    result = steps.evaluate(CONVERSATION)
    assert [r.outcome for r in result.results] == [P, F, P]
    assert result.outcome is P
    assert result.score == pytest.approx(1 / 3.5)  # passed weights 1 + 0 over 1 + 2.5 + 0
