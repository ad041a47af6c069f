"""The one interface every check implements, and the result it returns.

A check is a frozen dataclass whose fields are its file schema. It holds no
state between conversations: `evaluate` reads a `Conversation` and returns a
`CheckResult`, plain data that explains itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from enum import Enum
from functools import cached_property
from operator import ne
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import msgspec

from .._shown import counted
from ..events.model import FRAMEWORK_TOOLS, Conversation, Event
from .compared import PATTERN, Compared, Comparison
from .schema import spec

#: The type of event an event check reads: its candidates are only those.
E = TypeVar("E", bound=Event)


class Outcome(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"
    #: A run (or recorded conversation) whose simulated user failed its review: no check's outcome, only a verdict.
    SUSPECT = "suspect"

    def __str__(self) -> str:
        return self.value


class Difference(msgspec.Struct, frozen=True):
    """A compared field whose recorded value was not the expected one, both kept whole.

    The detail shows the first differing `path` and the two values there, cut for a line of text; the JSON
    outputs keep `actual` and `expected` whole, so a long argument can be compared outside. `actual` is
    `ABSENT` for a field the event lacked.
    """

    field: str
    path: str
    actual: Any
    expected: Any


class CheckResult(msgspec.Struct, frozen=True):
    """What one check concluded about one conversation, and why.

    `evidence` holds the indexes of the events the explanation points to. A frozen
    `msgspec` struct, like the events, as each conversation makes one per check; unlike
    the events it stays known to the garbage collector, as `check` may be any object.
    """

    check: Any
    outcome: Outcome
    detail: str
    evidence: tuple[int, ...] = ()
    #: What a check that crashed raised (its outcome is then `error`), kept for its traceback.
    exception: BaseException | None = None
    #: The compared fields of the closest miss that differed (a failed `tool_executed`, ...), values whole.
    differences: tuple[Difference, ...] = ()

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS


class Check(ABC):
    """A yes-or-no question about a conversation.

    A subclass is a frozen dataclass whose fields are its file schema (`checks.schema`), read by the one
    loader (`checks.load`); its `key` names it in files and in the registries.
    """

    key: ClassVar[str]

    @cached_property
    def label(self) -> str:
        """A short human name: the key plus what it is about.

        A `cached_property` here and in every subclass: the fields are frozen, and each result renders it.
        """
        return self.key

    @abstractmethod
    def evaluate(self, conversation: Conversation) -> CheckResult: ...

    def result(
        self, passed: bool, detail: str, evidence: Sequence[int] = (), differences: Sequence[Difference] = ()
    ) -> CheckResult:
        return CheckResult(self, Outcome.PASS if passed else Outcome.FAIL, detail, tuple(evidence), differences=tuple(differences))


def framework_tools_field() -> Any:
    """The `framework_tools` field of a check that reads the tool log (`Conversation.tool_log`).

    The loader sets it from the definition's setting (eval/conftest.yml for a scenario, `sop.framework_tools`
    for an SOP file), so the list reaches the check with its definition; the default is `FRAMEWORK_TOOLS`.
    """
    return spec(FRAMEWORK_TOOLS, repr=False, setting="framework_tools")


def at(event: Event) -> str:
    return f"event {event.index} (turn {event.turn})"


class EventCheck(Check, Generic[E]):
    """A check that passes when one event matches: the default rule of the seed.

    Subclasses say which events are candidates and which of their fields are compared with which of the
    event's (`compared`); matching, counting the differences and explaining them are derived from that list
    (`checks.compared`). The closest candidate explains a failure. `sequencing` reuses the same methods to
    match one step at a time.
    """

    #: The fields compared with the event's, in the order their differences are explained.
    compared: ClassVar[tuple[Compared, ...]] = ()

    @abstractmethod
    def candidates(self, conversation: Conversation) -> Sequence[E]:
        """Events that could match, in conversation order."""

    def __post_init__(self) -> None:
        # An attribute, not a cached_property: every candidate of every conversation reads it, and an instance
        # attribute shadowed by no class attribute is the fast kind to read. Not a field: the fields are the schema.
        object.__setattr__(self, "comparison", Comparison(self, self.compared))

    if TYPE_CHECKING:
        #: The compared fields this check sets, with their values (made once per check).
        comparison: Comparison

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["comparison"]  # made again where the check is unpickled (it holds the module's `How` objects)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    def matches(self, event: E) -> bool:
        """Whether `event` matches, answered without building the explanation text (the hot path)."""
        comparison = self.comparison
        exact = comparison.exact
        if exact is not None and exact(event) != comparison.wanted:
            return False
        for how, value, read in comparison.others:
            if not how.agrees(read(event), value):
                return False
        return True

    def miss_count(self, event: E, text_found: bool | None = None) -> int:
        """`len(self.mismatches(event))` without the text: every candidate is ranked on a failure. `text_found`:
        whether the pattern is found in the event's text, when that is known already (`miss_counts`)."""
        comparison = self.comparison
        count = 0
        exact = comparison.exact
        if exact is not None:
            actual = exact(event)
            wanted = comparison.wanted
            if actual != wanted:
                count = sum(map(ne, actual, wanted)) if comparison.several else 1
        for how, value, read in comparison.others:
            if text_found is not None and how is PATTERN:
                count += not text_found
            else:
                count += how.misses(read(event), value)
        return count

    def miss_counts(self, events: Sequence[E]) -> Iterable[int]:
        """`miss_count` of each of `events`, a pattern searched in all their texts at once (`Pattern.found_in`):
        ranking a failure reads every text, and one search over them all costs less than one of each."""
        pattern = self.comparison.pattern
        if pattern is None:
            return map(self.miss_count, events)
        search, read = pattern
        return map(self.miss_count, events, search.found_in([read(event) for event in events]))

    def mismatches(self, event: E) -> list[str]:
        """How `event` differs from what the check asks, in the order of `compared`; empty when it matches."""
        return self.comparison.mismatches(event)

    def differences(self, event: E) -> list[Difference]:
        """The compared fields in which `event` differs, values whole; checks whose fields are names leave it empty."""
        return []

    def same_subject(self, event: E) -> bool:
        """Whether `event` is about the same thing (tool, skill), for picking the closest miss."""
        return True

    def first_match(self, events: Sequence[E]) -> E | None:
        """The first of `events` (candidates, in order) that matches."""
        for event in events:
            if self.matches(event):
                return event
        return None

    def closest_miss(self, events: Sequence[E]) -> tuple[E, list[str]] | None:
        """The event with the fewest differences, those about the same subject first (earliest on a tie)."""
        same = [event for event in events if self.same_subject(event)]
        best: tuple[int, E] | None = None
        for event in same or events:  # any event about the same subject beats every other: rank only those
            count = self.miss_count(event)
            if best is None or count < best[0]:
                best = (count, event)
                if count == 1:  # every candidate missed, so none differs in fewer ways: the earliest with one wins
                    break
        return None if best is None else (best[1], self.mismatches(best[1]))

    def explain_miss(self, events: Sequence[E]) -> tuple[str, tuple[int, ...], list[Difference]]:
        """Why none of `events` (candidates that all missed) matched: what the closest one had instead, and
        the fields in which it differed."""
        if not events:
            return f"no {self.event_noun} event was recorded", (), []
        event, miss = self.closest_miss(events)  # type: ignore[misc]  # `closest_miss` finds one when there are events
        count = f"{counted(len(events), f'{self.event_noun} event')} recorded, none matched"
        detail = f"{count}; closest: {self.describe_event(event)} at {at(event)} but {', '.join(miss)}"
        return detail, (event.index,), self.differences(event)

    @property
    def event_noun(self) -> str:
        return self.key

    def describe_event(self, event: E) -> str:
        return event.type

    def evaluate(self, conversation: Conversation) -> CheckResult:
        events = self.candidates(conversation)
        event = self.first_match(events)
        if event is not None:
            return self.result(True, f"matched {self.describe_event(event)} at {at(event)}", (event.index,))
        detail, evidence, differences = self.explain_miss(events)
        return self.result(False, detail, evidence, differences)

