"""`sequencing`: each step matches an event strictly after the previous step's match.

Earliest match each time, so one event never satisfies two steps and the
whole check is a single forward walk over each step's candidates.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import Any

from ..events.model import Conversation, Event
from .base import Check, CheckResult, EventCheck, at
from .lifecycle import LIFECYCLE_CHECKS
from .memory import MemoryWasClearedStep, MemoryWasSetStep
from .messages import BotUttered
from .patterns import one_budget
from .schema import spec
from .tools import ToolExecuted

#: An event's position in its conversation: candidates ascend by it, so a step bisects them.
INDEX = attrgetter("index")

#: The checks a step may be, by key: each matches one event (memory steps take the key name alone).
STEPS: dict[str, type[EventCheck[Any]]] = {
    **{cls.key: cls for cls in LIFECYCLE_CHECKS},
    ToolExecuted.key: ToolExecuted,
    MemoryWasSetStep.key: MemoryWasSetStep,
    MemoryWasClearedStep.key: MemoryWasClearedStep,
    BotUttered.key: BotUttered,
}

#: Checks that cannot be a step, and why.
NOT_STEPS = {
    "memory_was_not_set": "it matches no event",
    "tools_within_one_turn": "it matches a turn, not one event",
    "bot_did_not_utter": "it matches no event",
    "sequencing": "sequencing does not nest",
}


@dataclass(frozen=True)
class Sequencing(Check):
    key = "sequencing"

    steps: tuple[EventCheck[Any], ...] = spec(
        whole="a list of steps", item="step", tags=STEPS, refused_tags=NOT_STEPS, unknown_tag="unknown sequencing step `{key}`{hint}"
    )

    @cached_property
    def label(self) -> str:
        return "sequencing " + " → ".join(step.label for step in self.steps)

    @one_budget
    def evaluate(self, conversation: Conversation) -> CheckResult:
        matched: list[Event] = []
        after = -1
        for number, step in enumerate(self.steps, 1):
            candidates = step.candidates(conversation)
            start = bisect_right(candidates, after, key=INDEX) if after >= 0 else 0
            found = step.first_match(candidates[start:])
            if found is None:
                return self.result(False, self._explain(number, step, matched, candidates, start), [e.index for e in matched])
            matched.append(found)
            after = found.index
        chain = ", ".join(f"{step.key} at {at(e)}" for step, e in zip(self.steps, matched))
        return self.result(True, f"in order: {chain}", [e.index for e in matched])

    def _explain(self, number, step, matched, candidates, start) -> str:
        head = f"step {number} of {len(self.steps)} ({step.label}) has no match"
        if matched:
            head += f" after step {number - 1} matched at {at(matched[-1])}"
        earlier = step.first_match(candidates[:start])
        if earlier is not None:
            return f"{head}; it matched only earlier, at {at(earlier)}"
        reason, _, _ = step.explain_miss(candidates[start:])
        return f"{head}: {reason}"
