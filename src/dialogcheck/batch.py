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
from itertools import islice
from typing import Any

from .evaluate import ConversationResult, evaluate, evaluate_batch, evaluate_sop
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
    """One result per conversation, in order, for a scenario or an SOP."""
    if judge is None or no_judge:
        check = evaluate if isinstance(subject, Scenario) else evaluate_sop
        for conversation in conversations:
            yield check(subject, conversation, no_judge=no_judge)
        return
    iterator = iter(conversations)
    loop = asyncio.new_event_loop()
    try:
        while chunk := list(islice(iterator, window)):
            yield from loop.run_until_complete(
                evaluate_batch(subject, chunk, judge=judge, no_judge=no_judge, metrics=metrics, in_flight=window)
            )
    finally:
        loop.close()
