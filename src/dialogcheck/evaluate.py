"""Judge one conversation against a scenario's goals (or an SOP) into plain result data.

This is the meeting point of checks and judge: deterministic checks run
here, criteria go to the judge when one is given. The result records every
check with its outcome and explanation; reporters only read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .checks.base import CheckResult, Outcome
from .events.model import Conversation
from .judge.base import NO_JUDGE_REASON, Judge, JudgeError, JudgeRequest
from .scenario.model import Scenario


@dataclass(frozen=True)
class CriterionResult:
    criterion: str
    outcome: Outcome
    detail: str


@dataclass(frozen=True)
class ConversationResult:
    """Everything decided about one conversation. `sop` is a `StepSetResult` or None."""

    source: str
    subject: str
    assertions: tuple[CheckResult, ...] = ()
    sop: Any = None
    criteria: tuple[CriterionResult, ...] = ()
    conversation_id: str | None = None
    event_count: int = 0
    turn_count: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def outcomes(self) -> list[Outcome]:
        found = [r.outcome for r in self.assertions] + [c.outcome for c in self.criteria]
        if self.sop is not None:
            found.append(self.sop.outcome)
        return found

    @property
    def verdict(self) -> Outcome:
        """FAIL if any check failed; else ERROR if any errored; else PASS (SKIPs do not count)."""
        outcomes = self.outcomes
        if Outcome.FAIL in outcomes:
            return Outcome.FAIL
        if Outcome.ERROR in outcomes:
            return Outcome.ERROR
        return Outcome.PASS

    @property
    def check_count(self) -> int:
        sop_steps = len(self.sop.results) if self.sop is not None else 0
        return len(self.assertions) + len(self.criteria) + sop_steps


def judge_criteria(
    conversation: Conversation, criteria: tuple[str, ...], judge: Judge | None, no_judge: bool
) -> tuple[CriterionResult, ...]:
    results = []
    for criterion in criteria:
        if no_judge:
            results.append(CriterionResult(criterion, Outcome.SKIP, "skipped: --no-judge"))
        elif judge is None:
            results.append(CriterionResult(criterion, Outcome.ERROR, NO_JUDGE_REASON))
        else:
            try:
                verdict = judge.judge(conversation, JudgeRequest(criterion))
            except JudgeError as err:
                raw = f" (raw answer: {err.raw!r})" if err.raw else ""
                results.append(CriterionResult(criterion, Outcome.ERROR, f"judge error: {err}{raw}"))
                continue
            outcome = Outcome.PASS if verdict.passed else Outcome.FAIL
            results.append(CriterionResult(criterion, outcome, verdict.reasoning))
    return tuple(results)


def run_check(check: Any, conversation: Conversation) -> CheckResult:
    """Evaluate one check; a check that crashes becomes an `error` result, never a crash."""
    try:
        return check.evaluate(conversation)
    except Exception as err:  # noqa: BLE001 - a bug in one check must not hide the others
        return CheckResult(check, Outcome.ERROR, f"the check crashed: {type(err).__name__}: {err}")


def evaluate(
    scenario: Scenario, conversation: Conversation, *, judge: Judge | None = None, no_judge: bool = False
) -> ConversationResult:
    """Run every assertion, SOP step and criterion of `scenario` on `conversation`."""
    goals = scenario.goals
    assertions = tuple(run_check(check, conversation) for check in goals.assertions)
    sop = goals.sop.evaluate(conversation, judge=judge, no_judge=no_judge) if goals.sop is not None else None
    return ConversationResult(
        source=conversation.source,
        subject=scenario.name,
        assertions=assertions,
        sop=sop,
        criteria=judge_criteria(conversation, goals.criteria, judge, no_judge),
        conversation_id=conversation.conversation_id,
        event_count=len(conversation),
        turn_count=conversation.turn_count,
        notes=("the scenario has no goals: it passes with zero checks",) if goals.empty else (),
    )


def evaluate_sop(sop: Any, conversation: Conversation, *, judge: Judge | None = None, no_judge: bool = False) -> ConversationResult:
    """Apply an SOP file's steps to one recorded conversation."""
    return ConversationResult(
        source=conversation.source,
        subject=sop.name,
        sop=sop.steps.evaluate(conversation, judge=judge, no_judge=no_judge),
        conversation_id=conversation.conversation_id,
        event_count=len(conversation),
        turn_count=conversation.turn_count,
    )
