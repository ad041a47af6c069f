"""Judge one conversation against a scenario's goals or an SOP's steps, into a typed `ConversationResult`.

Two steps, one path: first the judge decides every LLM-judged check (async,
concurrently, only when a judge is given), then every check runs, pure and
synchronous, with those judgements handed in. A check that crashes becomes an
`error` result with its exception kept, never a crash of the batch.
"""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import islice
from typing import Any, TypeVar

import msgspec

from .checks.base import CheckResult
from .checks.judged import Judgement
from .events.model import Conversation
from .events.trace import trace_context
from .judge.base import Judge, judge_one, uncalibrated
from .judge.samples import judge_samples
from .results.codec import quality_scores
from .results.model import ConversationResult, Crash
from .subject import JudgeItems, Standard, Subject

#: What is done to a result once judged, with the subject and conversation it came of (`iter_results`' `finish`).
Finish = Callable[[Subject, Conversation, ConversationResult], Awaitable[ConversationResult]]


def judge_requests(subject: Subject) -> JudgeItems:
    """Every item a judge must decide for a scenario or an SOP, keyed `criterion:N` and `sop:STEP_ID`."""
    return subject.judge_items()


async def run_judge(conversation: Conversation, items: JudgeItems, judge: Judge) -> dict[str, Judgement]:
    """Ask the judge every item at once; every failure comes back as an `error` judgement."""
    import asyncio  # here, not at the top: checking without a judge never pays for importing it

    samples = getattr(judge, "samples", 1)
    if samples > 1:
        judgements = await asyncio.gather(*(judge_samples(judge, conversation, request, samples) for _, request in items))
    else:
        judgements = await asyncio.gather(*(judge_one(judge, conversation, request) for _, request in items))
    reason = getattr(judge, "uncalibrated", None)  # --require-calibration: a judge below the floor decides nothing
    if reason is not None:
        judgements = [uncalibrated(judgement, reason) for judgement in judgements]
    return {key: judgement for (key, _), judgement in zip(items, judgements)}


def _crash(result: CheckResult) -> Crash:
    """The exception of a check that crashed, as plain data (type, message, traceback), with the check that raised it."""
    error = result.exception
    return Crash(type(error).__name__, str(error), "".join(traceback.format_exception(error)), where=result.check.label)


_Result = TypeVar("_Result", bound=CheckResult)


def _without_exception(result: _Result) -> _Result:
    """The result with its exception left out, once `_crash` has kept it: a result stays plain data (it travels
    between processes, and an exception may not)."""
    return msgspec.structs.replace(result, exception=None)


def _usage(judged: Mapping[str, Judgement]) -> Any:
    usages = [j.usage for j in judged.values() if j.usage is not None]
    return sum(usages[1:], usages[0]) if usages else None


def _judged_for(subject: Subject, conversation: Conversation, judge: Judge | None, no_judge: bool, judged):
    if judged is not None:
        return judged
    items = judge_requests(subject)
    if judge is None or no_judge or not items:
        return {}
    import asyncio

    return asyncio.run(run_judge(conversation, items, judge))


def _judge_checks(subject: Subject, conversation: Conversation, judged: Mapping[str, Judgement], no_judge: bool) -> ConversationResult:
    """Every check of `subject` on `conversation`, with the judgements already made."""
    assertions, criteria, sop = subject.run_checks(conversation, judged, no_judge)
    step_results = [s.result for s in sop.results] if sop is not None else []
    crashed = [r for r in (*assertions, *step_results, *criteria) if r.exception is not None]
    if crashed:  # rare: the exceptions kept as crashes, and left out of the results
        assertions = tuple(_without_exception(r) if r.exception is not None else r for r in assertions)
        criteria = tuple(_without_exception(r) if r.exception is not None else r for r in criteria)
        if sop is not None:
            sop = replace(sop, results=tuple(replace(s, result=_without_exception(s.result)) if s.result.exception is not None else s for s in sop.results))
    return ConversationResult(
        source=conversation.source,
        subject=subject.name,
        assertions=assertions,
        sop=sop,
        criteria=criteria,
        conversation_id=conversation.conversation_id,
        notes=subject.notes,
        usage=_usage(judged),
        warnings=conversation.warnings,
        crashes=tuple(_crash(r) for r in crashed),
        trace=trace_context(conversation),
    )


def evaluate(
    subject: Subject,
    conversation: Conversation,
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    judged: Mapping[str, Judgement] | None = None,
) -> ConversationResult:
    """Run every check of `subject`, a scenario (its assertions, SOP steps and criteria) or an SOP (its steps), on `conversation`.

    Criteria and `llm_judge` steps are decided by `judge` (or taken from
    `judged`, as `run_judge` returns it); with neither they come out `error`,
    or `skip` when `no_judge` is set.
    """
    return _judge_checks(subject, conversation, _judged_for(subject, conversation, judge, no_judge, judged), no_judge)


#: `evaluate` by the name it had for an SOP: one function judges both.
evaluate_sop = evaluate


async def evaluate_async(
    subject: Subject,
    conversation: Conversation,
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    metrics: tuple[str, ...] = (),
) -> ConversationResult:
    """Ask the judge (and score metrics) for one conversation, then run its checks: a scenario or an SOP."""
    items = judge_requests(subject) if judge is not None and not no_judge else []
    judged = await run_judge(conversation, items, judge) if items else {}  # type: ignore[arg-type]  # items only with a judge
    scorer = getattr(judge, "score_metrics", None) if metrics and not no_judge else None
    scores = await scorer(conversation, metrics, subject.brief, framework_tools=subject.framework_tools) if scorer else None
    result = _judge_checks(subject, conversation, judged, no_judge)
    return replace(result, metrics=quality_scores(scores)) if scores is not None else result


async def evaluate_pairs(
    pairs: Sequence[tuple[Subject, Conversation]],
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    metrics: tuple[str, ...] = (),
    in_flight: int = 16,
    finish: Finish | None = None,
) -> list[ConversationResult]:
    """Judge many conversations, each with its own scenario or SOP, asking the judge for several at once.

    The judge's client bounds the LLM calls in flight; `in_flight` bounds how
    many conversations wait on it, so memory stays flat on big batches.
    `finish` is awaited on each result as it is judged, on the same event loop.
    """
    import asyncio

    gate = asyncio.Semaphore(in_flight)

    async def one(subject: Subject, conversation: Conversation) -> ConversationResult:
        async with gate:
            result = await evaluate_async(subject, conversation, judge=judge, no_judge=no_judge, metrics=metrics)
            return await finish(subject, conversation, result) if finish is not None else result

    return list(await asyncio.gather(*(one(s, c) for s, c in pairs)))


#: Conversations waiting on the judge at once when many are judged in order.
JUDGED_AHEAD = 64


def iter_results(
    subject: Standard,
    conversations: Iterable[Conversation],
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    metrics: tuple[str, ...] = (),
    window: int = JUDGED_AHEAD,
    finish: Finish | None = None,
) -> Iterator[ConversationResult]:
    """One result per conversation, in order, for a scenario, an SOP, or a `ScenarioSet`.

    Conversations come from a lazy iterator and results go out as they are
    decided, so memory stays flat however long the input is. Without a judge
    this is plain synchronous code; with one, a window of conversations waits
    on it at once and results still come out in input order. With a
    `ScenarioSet` each conversation is judged against its own scenario, and
    the first that has none raises `LoadError` there, before it is judged.
    With a judge, `finish` is awaited on each result (naming its scenario) as it is judged, beside the judge's
    calls and on their event loop (`check --blame llm` asks the judge's model there); without one it is not used.
    """
    several = subject.several
    pairs = subject.pairs(conversations)
    if judge is None or no_judge:
        for scenario, conversation in pairs:
            yield _paired(several, scenario, _judge_checks(scenario, conversation, {}, no_judge))
        return
    import asyncio

    async def paired_then_finished(scenario: Subject, conversation: Conversation, result: ConversationResult) -> ConversationResult:
        return await finish(scenario, conversation, _paired(several, scenario, result))  # type: ignore[misc]  # only when given

    named = paired_then_finished if finish is not None else None
    loop = asyncio.new_event_loop()
    try:
        while window_pairs := list(islice(pairs, window)):
            results = loop.run_until_complete(
                evaluate_pairs(window_pairs, judge=judge, no_judge=no_judge, metrics=metrics, in_flight=window, finish=named)
            )
            yield from (_paired(several, scenario, result) for (scenario, _), result in zip(window_pairs, results))
    finally:
        loop.close()


def _paired(several: bool, scenario: Subject, result: ConversationResult) -> ConversationResult:
    """A result judged against one of several scenarios names it, so every output can say which."""
    return replace(result, scenario=scenario.key) if several else result
