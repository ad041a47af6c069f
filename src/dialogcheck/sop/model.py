"""Steps of a standard operating procedure, and how a set of them is scored.

A step wraps one SOP evaluator with an id, a weight and whether it is
required. The verdict (pass/fail/error) and the score are kept apart: a
non-required step moves the score, never the verdict, unless a threshold
is set (docs/sop-reference.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from .._shown import counted
from ..checks.base import Check, CheckResult, Outcome
from ..checks.judged import JudgedCheck, Judgement, JudgeRequest, unjudged
from ..checks.running import run_check
from ..events.model import FRAMEWORK_TOOLS, Conversation
from ..lone import LoneStandard


@dataclass(frozen=True)
class Step:
    id: str
    label: str | None
    required: bool
    weight: float
    evaluator: Check

    @property
    def type(self) -> str:
        return self.evaluator.key


@dataclass(frozen=True)
class StepResult:
    step: Step
    result: CheckResult

    @property
    def outcome(self) -> Outcome:
        return self.result.outcome

    @property
    def id(self) -> str:
        return self.step.id

    @property
    def type(self) -> str:
        return self.step.type

    @property
    def detail(self) -> str:
        return self.result.detail


@dataclass(frozen=True)
class StepSetResult:
    results: tuple[StepResult, ...]
    score: float | None
    threshold: float | None
    outcome: Outcome

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS

    @property
    def summary(self) -> str:
        """One line: how many steps passed, the score and the threshold."""
        counts = {o: sum(r.outcome is o for r in self.results) for o in Outcome}
        parts = [f"{counts[o]:,} {o}" for o in Outcome if counts[o]]
        text = f"{counted(len(self.results), 'step')}: " + ", ".join(parts)
        if self.score is not None:
            text += f"; score {self.score:.2f}"
        if self.threshold is not None:
            met = self.score is None or self.score >= self.threshold
            text += f" (threshold {self.threshold:g} {'met' if met else 'missed'})"
        return text


def _run(step: Step, conversation: Conversation, judged: Mapping[str, Judgement], no_judge: bool) -> CheckResult:
    """One step's result: the judge's for an `llm_judge` step, else its evaluator's (a crash becomes an `error`)."""
    evaluator = step.evaluator
    if isinstance(evaluator, JudgedCheck):
        return evaluator.judged(judged.get(step.id) or unjudged(no_judge))
    return run_check(evaluator, conversation)


def _score(results: tuple[StepResult, ...], count_errors_as_passed: bool = False) -> float | None:
    counted = [r for r in results if r.outcome is not Outcome.SKIP]
    total = sum(r.step.weight for r in counted)
    if not counted or total == 0:
        return None
    good = (Outcome.PASS, Outcome.ERROR) if count_errors_as_passed else (Outcome.PASS,)
    return sum(r.step.weight for r in counted if r.outcome in good) / total


def verdict(results: tuple[StepResult, ...], threshold: float | None) -> tuple[float | None, Outcome]:
    """Score and outcome of a set of step results.

    FAIL when a required step failed, or the threshold is missed even if every
    errored step had passed; ERROR when nothing failed for sure but a required
    step errored, or errored steps alone decide the threshold; else PASS. With
    every step skipped there is no score and the threshold is not applied.
    """
    score = _score(results)
    required = [r for r in results if r.step.required]
    if any(r.outcome is Outcome.FAIL for r in required):
        return score, Outcome.FAIL
    undecided = any(r.outcome is Outcome.ERROR for r in required)
    if threshold is not None and score is not None and score < threshold:
        best = _score(results, count_errors_as_passed=True)
        if best is None or best < threshold:
            return score, Outcome.FAIL
        undecided = True
    return score, Outcome.ERROR if undecided else Outcome.PASS


@dataclass(frozen=True)
class StepSet:
    steps: tuple[Step, ...]
    threshold: float | None = None

    def judge_requests(self) -> list[tuple[str, JudgeRequest]]:
        """What the judge must decide before `evaluate`: one request per `llm_judge` step, by step id."""
        return [(step.id, step.evaluator.request()) for step in self.steps if isinstance(step.evaluator, JudgedCheck)]

    def evaluate(
        self, conversation: Conversation, judged: Mapping[str, Judgement] | None = None, no_judge: bool = False
    ) -> StepSetResult:
        """Every step's result; `llm_judge` steps take theirs from `judged` (by step id)."""
        judged = judged or {}
        results = tuple(StepResult(step, _run(step, conversation, judged, no_judge)) for step in self.steps)
        score, outcome = verdict(results, self.threshold)
        return StepSetResult(results, score, self.threshold, outcome)

    def judge_items(self, framework_tools: frozenset[str]) -> list[tuple[str, JudgeRequest]]:
        """`judge_requests` as a subject's judge items: keyed `sop:STEP_ID`, with the subject's framework tools."""
        return [(f"sop:{step_id}", replace(request, framework_tools=framework_tools, id=f"sop:{step_id}")) for step_id, request in self.judge_requests()]

    def evaluate_keyed(self, conversation: Conversation, judged: Mapping[str, Judgement], no_judge: bool) -> StepSetResult:
        """`evaluate`, the `llm_judge` steps' judgements taken from a subject's (keyed `sop:STEP_ID`)."""
        return self.evaluate(conversation, {key.removeprefix("sop:"): j for key, j in judged.items() if key.startswith("sop:")}, no_judge)


@dataclass(frozen=True)
class Sop(LoneStandard):
    """An SOP file (docs/sop-reference.md): named steps applied to recorded conversations."""

    id: str
    name: str
    steps: StepSet
    path: str = "<memory>"
    #: Tool names its evaluators leave out of the tool log (`sop.framework_tools`; `FRAMEWORK_TOOLS` by default).
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS

    def evaluate(
        self, conversation: Conversation, judged: Mapping[str, Judgement] | None = None, no_judge: bool = False
    ) -> StepSetResult:
        return self.steps.evaluate(conversation, judged, no_judge)

    # A subject (`subject.Subject`), and a standard of one subject (`subject.Standard`).

    @property
    def key(self) -> str:
        return self.id

    @property
    def brief(self) -> str | None:
        return None

    @property
    def notes(self) -> tuple[str, ...]:
        return ()

    def judge_items(self) -> list[tuple[str, JudgeRequest]]:
        return self.steps.judge_items(self.framework_tools)

    def run_checks(self, conversation: Conversation, judged: Mapping[str, Judgement], no_judge: bool) -> tuple[tuple[()], tuple[()], StepSetResult]:
        return (), (), self.steps.evaluate_keyed(conversation, judged, no_judge)


__all__ = ["Sop", "Step", "StepResult", "StepSet", "StepSetResult", "verdict"]
