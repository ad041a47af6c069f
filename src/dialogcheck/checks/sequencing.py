"""`sequencing`: each step matches an event strictly after the previous step's match.

Earliest match each time, so one event never satisfies two steps and the
whole check is a single forward walk over each step's candidates.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property

from ..events.model import Conversation, Event
from .base import Check, CheckResult, EventCheck, at
from .patterns import one_budget


@dataclass(frozen=True)
class Sequencing(Check):
    key = "sequencing"

    steps: tuple[EventCheck, ...]

    @cached_property
    def label(self) -> str:
        return "sequencing " + " → ".join(step.label for step in self.steps)

    @one_budget
    def evaluate(self, conversation: Conversation) -> CheckResult:
        matched: list[Event] = []
        after = -1
        for number, step in enumerate(self.steps, 1):
            candidates = step.candidates(conversation)
            start = bisect.bisect_right([e.index for e in candidates], after) if after >= 0 else 0
            found = next((e for e in candidates[start:] if step.matches(e)), None)
            if found is None:
                return self.result(False, self._explain(conversation, number, step, matched, candidates, start), [e.index for e in matched])
            matched.append(found)
            after = found.index
        chain = ", ".join(f"{step.key} at {at(e)}" for step, e in zip(self.steps, matched))
        return self.result(True, f"in order: {chain}", [e.index for e in matched])

    def _explain(self, conversation, number, step, matched, candidates, start) -> str:
        head = f"step {number} of {len(self.steps)} ({step.label}) has no match"
        if matched:
            head += f" after step {number - 1} matched at {at(matched[-1])}"
        earlier = next((e for e in candidates[:start] if step.matches(e)), None)
        if earlier is not None:
            return f"{head}; it matched only earlier, at {at(earlier)}"
        reason, _ = step.explain_miss(conversation, candidates[start:])
        return f"{head}: {reason}"
