"""Judge a stream of recorded conversations in order, holding only a window of them at a time.

`dialogcheck check` reads batches of any size through this: conversations
come from a lazy iterator, results go out as they are decided, so memory
stays flat however long the input is. Without a judge everything is plain
synchronous code; with one, a window of conversations waits on the judge at
once (its client bounds the calls in flight) and results still come out in
input order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import islice
from typing import Any

from .evaluate import ConversationResult, evaluate, evaluate_pairs, evaluate_sop
from .events.model import Conversation
from .judge.base import Judge
from .scenario.model import Scenario

DEFAULT_WINDOW = 64


def iter_results(
    subject: Any,
    conversations: Iterable[Conversation],
    *,
    judge: Judge | None = None,
    no_judge: bool = False,
    metrics: tuple[str, ...] = (),
    window: int = DEFAULT_WINDOW,
) -> Iterator[ConversationResult]:
    """One result per conversation, in order, for a scenario, an SOP, or a `ScenarioSet` (each conversation
    against its own scenario; the first that has none raises `LoadError` there, before it is judged)."""
    several = hasattr(subject, "pairs")  # a pairing.ScenarioSet
    pairs = subject.pairs(conversations) if several else ((subject, c) for c in conversations)
    if judge is None or no_judge:
        check = evaluate if several or isinstance(subject, Scenario) else evaluate_sop
        for scenario, conversation in pairs:
            yield _paired(several, scenario, check(scenario, conversation, no_judge=no_judge))
        return
    loop = asyncio.new_event_loop()
    try:
        while window_pairs := list(islice(pairs, window)):
            results = loop.run_until_complete(evaluate_pairs(window_pairs, judge=judge, no_judge=no_judge, metrics=metrics, in_flight=window))
            yield from (_paired(several, scenario, result) for (scenario, _), result in zip(window_pairs, results))
    finally:
        loop.close()


def _paired(several: bool, scenario: Any, result: ConversationResult) -> ConversationResult:
    """A result judged against one of several scenarios names it, so every output can say which."""
    return replace(result, scenario=scenario.slug) if several else result
