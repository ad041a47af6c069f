"""Memory checks: writes to and clears of memory keys.

Writes and clears are separate events: a key written then cleared passes
`memory_was_set` and `memory_was_cleared` and fails `memory_was_not_set`.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Union, cast

from ..events.model import Conversation, MemoryCleared, MemorySet
from ..events.values import first_difference, json_equal, show
from .base import Check, CheckResult, EventCheck, at
from .compared import Compared, was
from .schema import spec

#: The events a memory step reads: writes or clears, both naming their `key`.
MemoryEvent = Union[MemorySet, MemoryCleared]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"

    def __reduce__(self) -> str:
        return "UNSET"  # pickled by name, so a check sent to a worker process still holds the one UNSET


UNSET: Any = _Unset()


@dataclass(frozen=True)
class MemoryEntry:
    """One `{name, value?}` item; `value` is UNSET when the file gives none."""

    name: str = spec(memory_name=True)
    value: Any = UNSET

    @property
    def has_value(self) -> bool:
        return self.value is not UNSET


def _writes(conversation: Conversation, name: str) -> list[MemorySet]:
    return [e for e in conversation.of_type("memory_set") if e.key == name]  # type: ignore[attr-defined, misc]  # of_type("memory_set") holds MemorySet events only


#: How similar (difflib's ratio) a recorded key must be to the name looked for to be offered as a hint.
HINT_CUTOFF = 0.6


def similar_key(name: str, keys: Iterable[str]) -> str | None:
    """The key `difflib.get_close_matches(name, keys, n=1, cutoff=HINT_CUTOFF)` picks: the most similar, the greatest
    on a tie, or None when none reaches the cutoff.

    Each key is scored against the name once per process, not once per set of keys: a log holds the same few keys
    in ever new combinations, so its sets of keys rarely repeat while its keys always do.
    """
    scored = [(score, key) for key in set(keys) if (score := _similarity(name, key)) >= HINT_CUTOFF]
    return max(scored)[1] if scored else None


@lru_cache(maxsize=16_384)
def _similarity(name: str, key: str) -> float:
    """difflib's ratio of `key` to `name` as `get_close_matches` computes it (`key` first), or 0 where an upper bound
    of it already falls short of the cutoff: the characters the two share (difflib's `quick_ratio`), counted here
    without building a matcher, rules out most keys at a fraction of the cost."""
    total = len(key) + len(name)
    if total and 2.0 * _shared_characters(name, key) / total < HINT_CUTOFF:
        return 0.0
    return difflib.SequenceMatcher(None, key, name).ratio()


def _shared_characters(name: str, key: str) -> int:
    """How many characters the two have in common, counted with repeats: no match between them can hold more."""
    available = dict(_characters(name))
    shared = 0
    for char in key:
        left = available.get(char, 0)
        if left > 0:
            shared += 1
            available[char] = left - 1
    return shared


@lru_cache(maxsize=256)
def _characters(name: str) -> Counter[str]:
    return Counter(name)


def _other_keys(conversation: Conversation, event_type: str, name: str) -> str:
    """The hint a failure about `name` ends with: a key of the same kind of event that is probably the one meant."""
    close = similar_key(name, (e.key for e in conversation.of_type(event_type)))  # type: ignore[attr-defined]  # memory events, which all have a key
    return f" (a similar key was: `{close}`)" if close is not None else ""


def _last_differs(entry: MemoryEntry, last: MemorySet) -> str:
    """Where the last write first differs from the expected value, when both are lists or objects: the cut
    renderings of two long values can agree in all that is shown."""
    found = first_difference(last.value, entry.value)
    if found is None or not found[0]:
        return ""
    return f"; in the last write, {was(entry.name, last.value, entry.value)}"


def _list_writes(writes: Sequence[MemorySet], limit: int = 3) -> str:
    shown = ", ".join(f"{show(w.value, 40)} at {at(w)}" for w in writes[:limit])
    more = f" and {len(writes) - limit:,} more" if len(writes) > limit else ""
    return shown + more


@dataclass(frozen=True)
class _MemoryCheck(Check):
    entries: tuple[MemoryEntry, ...] = spec(whole="a list of {name, value} entries", item="entry")

    @cached_property
    def label(self) -> str:
        return f"{self.key} " + ", ".join(e.name for e in self.entries)

    def evaluate(self, conversation: Conversation) -> CheckResult:
        verdicts = [self.check_entry(conversation, entry) for entry in self.entries]
        passed = all(ok for ok, _, _ in verdicts)
        shown = [text for ok, text, _ in verdicts if passed or not ok]  # on a failure, only what failed
        evidence = sorted({i for _, _, ev in verdicts for i in ev})
        return self.result(passed, "; ".join(shown), evidence)

    def check_entry(self, conversation: Conversation, entry: MemoryEntry) -> tuple[bool, str, list[int]]:
        raise NotImplementedError


class MemoryWasSet(_MemoryCheck):
    key = "memory_was_set"

    def check_entry(self, conversation, entry):
        writes = _writes(conversation, entry.name)
        if not writes:
            return False, f"{entry.name} was never written{_other_keys(conversation, 'memory_set', entry.name)}", []
        if not entry.has_value:
            return True, f"{entry.name} written at {at(writes[0])}", [writes[0].index]
        for write in writes:
            if json_equal(write.value, entry.value):
                return True, f"{entry.name} = {show(entry.value)} written at {at(write)}", [write.index]
        return (
            False,
            f"{entry.name} was written as {_list_writes(writes)}, never {show(entry.value)}{_last_differs(entry, writes[-1])}",
            [w.index for w in writes[:3]],
        )


class MemoryWasNotSet(_MemoryCheck):
    key = "memory_was_not_set"

    def check_entry(self, conversation, entry):
        writes = _writes(conversation, entry.name)
        if not writes:
            return True, f"{entry.name} was never written", []
        last = writes[-1]
        if not entry.has_value:
            return False, f"{entry.name} was written: {_list_writes(writes)}", [w.index for w in writes[:3]]
        if json_equal(last.value, entry.value):
            return False, f"the last write of {entry.name} was {show(entry.value)} at {at(last)}", [last.index]
        return True, f"the last write of {entry.name} was {show(last.value)} at {at(last)}, not {show(entry.value)}", [last.index]


@dataclass(frozen=True)
class MemoryWasCleared(_MemoryCheck):
    key = "memory_was_cleared"

    entries: tuple[MemoryEntry, ...] = spec(
        whole="a list of {name, value} entries", item="entry", item_refuses={"value": "takes no `value`: a clear has no value"}
    )

    def check_entry(self, conversation, entry):
        for event in conversation.of_type("memory_cleared"):
            if event.key == entry.name:
                return True, f"{entry.name} cleared at {at(event)}", [event.index]
        hint = _other_keys(conversation, "memory_cleared", entry.name)
        written = " (it was written but never cleared)" if _writes(conversation, entry.name) else ""
        return False, f"{entry.name} was never cleared{written}{hint}", []


def _says_key(field: str, actual: Any, expected: Any) -> str:
    return f"key was {show(actual)}"


@dataclass(frozen=True)
class _MemoryStep(EventCheck[MemoryEvent]):
    """The string form used inside `sequencing`: `memory_was_set: KEY`."""

    compared = (Compared("name", "key", says=_says_key),)

    name: str = spec(whole="the key name as a string (no list, no value)", memory_name=True)

    @cached_property
    def label(self) -> str:
        return f"{self.key} {self.name}"

    def candidates(self, conversation: Conversation) -> Sequence[MemoryEvent]:
        return cast("Sequence[MemoryEvent]", conversation.of_type(self.event_noun))  # the events of the check's own type

    def describe_event(self, event: MemoryEvent) -> str:
        return f"{event.type} {event.key}"


class MemoryWasSetStep(_MemoryStep):
    key = "memory_was_set"
    event_noun = "memory_set"


class MemoryWasClearedStep(_MemoryStep):
    key = "memory_was_cleared"
    event_noun = "memory_cleared"
