"""Judge one conversation against a scenario's goals (or an SOP) into plain result data.

Two steps, one path: first the judge decides every LLM-judged item (async,
concurrently, only when a judge is given), then every check runs, pure and
synchronous, with those judgements handed in. `evaluate` does both for one
conversation; the CLI asks the judge for many conversations at once and then
calls `evaluate(..., judged=...)`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .checks.base import CheckResult, Outcome
from .checks.judged import Judgement, JudgeRequest, unjudged
from .checks.patterns import PatternTimeout
from .errors import Problem
from .events.model import Conversation
from .judge.base import Judge, judge_one
from .scenario.model import Scenario


@dataclass(frozen=True)
class CriterionResult:
    criterion: str
    outcome: Outcome
    detail: str
    usage: Any = None


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
    #: Quality metric scores, when asked for; never part of the verdict.
    metrics: Mapping[str, Any] | None = None
    #: Token counts and cost of every judge call made for this conversation.
    usage: Any = None
    #: Probable typos in the record's names, where they are (never part of the verdict).
    warnings: tuple[Problem, ...] = ()
    #: The slug of the scenario the conversation was paired with, when a batch judges several (`pairing.py`).
    scenario: str | None = None

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
    def check_outcomes(self) -> list[Outcome]:
        """The outcome of every single check, optional SOP steps included."""
        found = [r.outcome for r in self.assertions] + [c.outcome for c in self.criteria]
        if self.sop is not None:
            found += [s.outcome for s in self.sop.results]
        return found


JudgeItems = list[tuple[str, JudgeRequest]]


def judge_requests(subject: Any) -> JudgeItems:
    """Every item a judge must decide for a scenario or an SOP, keyed `criterion:N` and `sop:STEP_ID`."""
    tools = subject.framework_tools
    if isinstance(subject, Scenario):
        items = [(f"criterion:{i}", JudgeRequest(c, framework_tools=tools)) for i, c in enumerate(subject.goals.criteria)]
        steps = subject.goals.sop
    else:
        items, steps = [], subject.steps
    if steps is not None:
        items += [(f"sop:{step_id}", replace(request, framework_tools=tools)) for step_id, request in steps.judge_requests()]
    return items


async def run_judge(conversation: Conversation, items: JudgeItems, judge: Judge) -> dict[str, Judgement]:
    """Ask the judge every item at once; every failure comes back as an `error` judgement."""
    judgements = await asyncio.gather(*(judge_one(judge, conversation, request) for _, request in items))
    return {key: judgement for (key, _), judgement in zip(items, judgements)}


def run_check(check: Any, conversation: Conversation) -> CheckResult:
    """Evaluate one check; a check that crashes becomes an `error` result, never a crash."""
    try:
        return check.evaluate(conversation)
    except PatternTimeout as err:
        return CheckResult(check, Outcome.ERROR, str(err))
    except Exception as err:  # noqa: BLE001 - a bug in one check must not hide the others
        return CheckResult(check, Outcome.ERROR, f"the check crashed: {type(err).__name__}: {err}")


def _sop_judged(judged: Mapping[str, Judgement]) -> dict[str, Judgement]:
    return {key.removeprefix("sop:"): j for key, j in judged.items() if key.startswith("sop:")}


def _usage(judged: Mapping[str, Judgement]) -> Any:
    usages = [j.usage for j in judged.values() if j.usage is not None]
    return sum(usages[1:], usages[0]) if usages else None


def _judged_for(subject: Any, conversation: Conversation, judge: Judge | None, no_judge: bool, judged):
    if judged is not None:
        return judged
    items = judge_requests(subject)
    if judge is None or no_judge or not items:
        return {}
    return asyncio.run(run_judge(conversation, items, judge))


def evaluate(
    scenario: Scenario,
    conversation: Conversation,
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    judged: Mapping[str, Judgement] | None = None,
) -> ConversationResult:
    """Run every assertion, SOP step and criterion of `scenario` on `conversation`.

    Criteria and `llm_judge` steps are decided by `judge` (or taken from
    `judged`, as `run_judge` returns it); with neither they come out `error`,
    or `skip` when `no_judge` is set.
    """
    judged = _judged_for(scenario, conversation, judge, no_judge, judged)
    goals = scenario.goals
    criteria = []
    for i, criterion in enumerate(goals.criteria):
        judgement = judged.get(f"criterion:{i}") or unjudged(no_judge)
        criteria.append(CriterionResult(criterion, judgement.outcome, judgement.detail, judgement.usage))
    sop = goals.sop.evaluate(conversation, _sop_judged(judged), no_judge) if goals.sop is not None else None
    return ConversationResult(
        source=conversation.source,
        subject=scenario.name,
        assertions=tuple(run_check(check, conversation) for check in goals.assertions),
        sop=sop,
        criteria=tuple(criteria),
        conversation_id=conversation.conversation_id,
        event_count=len(conversation),
        turn_count=conversation.turn_count,
        notes=("the scenario has no goals: it passes with zero checks",) if goals.empty else (),
        usage=_usage(judged),
        warnings=conversation.warnings,
    )


def evaluate_sop(
    sop: Any,
    conversation: Conversation,
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    judged: Mapping[str, Judgement] | None = None,
) -> ConversationResult:
    """Apply an SOP file's steps to one recorded conversation."""
    judged = _judged_for(sop, conversation, judge, no_judge, judged)
    return ConversationResult(
        source=conversation.source,
        subject=sop.name,
        sop=sop.steps.evaluate(conversation, _sop_judged(judged), no_judge),
        conversation_id=conversation.conversation_id,
        event_count=len(conversation),
        turn_count=conversation.turn_count,
        usage=_usage(judged),
        warnings=conversation.warnings,
    )



async def evaluate_async(
    subject: Any,
    conversation: Conversation,
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    metrics: tuple[str, ...] = (),
) -> ConversationResult:
    """Ask the judge (and score metrics) for one conversation, then run its checks: a scenario or an SOP."""
    items = judge_requests(subject) if judge is not None and not no_judge else []
    judged = await run_judge(conversation, items, judge) if items else {}
    scorer = getattr(judge, "score_metrics", None) if metrics and not no_judge else None
    context = subject.simulation_context if isinstance(subject, Scenario) else None
    scores = await scorer(conversation, metrics, context, framework_tools=subject.framework_tools) if scorer else None
    check = evaluate if isinstance(subject, Scenario) else evaluate_sop
    result = check(subject, conversation, no_judge=no_judge, judged=judged)
    return replace(result, metrics=scores) if scores is not None else result


async def evaluate_batch(
    subject: Any,
    conversations: Sequence[Conversation],
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    metrics: tuple[str, ...] = (),
    in_flight: int = 16,
) -> list[ConversationResult]:
    """Judge many conversations against one scenario or SOP, asking the judge for several at once.

    The judge's client bounds the LLM calls in flight; `in_flight` bounds how
    many conversations wait on it, so memory stays flat on big batches.
    """
    return await evaluate_pairs([(subject, c) for c in conversations], judge=judge, no_judge=no_judge, metrics=metrics, in_flight=in_flight)


async def evaluate_pairs(
    pairs: Sequence[tuple[Any, Conversation]],
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    metrics: tuple[str, ...] = (),
    in_flight: int = 16,
) -> list[ConversationResult]:
    """`evaluate_batch` where each conversation comes with its own scenario (or SOP)."""
    gate = asyncio.Semaphore(in_flight)

    async def one(subject: Any, conversation: Conversation) -> ConversationResult:
        async with gate:
            return await evaluate_async(subject, conversation, judge=judge, no_judge=no_judge, metrics=metrics)

    return list(await asyncio.gather(*(one(s, c) for s, c in pairs)))
