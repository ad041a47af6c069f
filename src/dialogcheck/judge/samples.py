"""Self-consistency: a criterion asked several times, the majority deciding.

A judge that answers the same question differently from one sample to the
next is marked `unstable` with the split, so a flip between two batches can
be traced to the judge rather than the agent. Without a majority (samples
split three ways) the criterion is an `error`: nothing decided it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from ..checks.base import Outcome
from ..checks.judged import Judgement, JudgeRequest
from ..events.model import Conversation
from .base import Judge, judge_one


def _said(judgement: Judgement) -> str:
    """What one sample said: pass, fail, inconclusive or error."""
    return "inconclusive" if judgement.inconclusive else judgement.outcome.value


def split_text(split: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{n} {said}" for said, n in split)


async def judge_samples(judge: Judge, conversation: Conversation, request: JudgeRequest, samples: int) -> Judgement:
    """Ask `samples` times (each a sample of its own, with its own seed) and take the majority."""
    judgements = [await judge_one(judge, conversation, replace(request, sample=n)) for n in range(samples)]
    return majority(judgements)


def majority(judgements: list[Judgement]) -> Judgement:
    """The verdict more than half the samples gave (its first such judgement), marked with the split when some
    disagreed; an `error` when no verdict has a majority. Usage is the sum of every sample's."""
    counts = Counter(_said(j) for j in judgements)
    usage = _total_usage(judgements)
    split = tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))) if len(counts) > 1 else ()
    said, n = counts.most_common(1)[0]
    cached = all(j.cached for j in judgements)
    if n * 2 <= len(judgements):
        detail = f"the judge's samples have no majority ({split_text(split)}): unstable"
        return Judgement(Outcome.ERROR, detail, usage, cached, split=split)
    chosen = next(j for j in judgements if _said(j) == said)
    detail = f"{chosen.detail} (unstable: {split_text(split)})" if split else chosen.detail
    return replace(chosen, detail=detail, usage=usage, cached=cached, split=split)


def _total_usage(judgements: list[Judgement]) -> Any:
    usages = [j.usage for j in judgements if j.usage is not None]
    return sum(usages[1:], usages[0]) if usages else None
