"""The fields an event check compares with its event's, declared once; matching, counting and explaining derived.

An event check (`base.EventCheck`) lists its `compared` fields: which field of
the check is compared with which field of the event, and how. A field the
check leaves unset (None) is not compared. From that one list come the three
answers a check gives about an event: whether it matches (the hot path: the
exact fields in one tuple comparison, no text), how many ways it differs (to
rank the candidates of a failure, no text either), and the differences
themselves, explained in the order the fields are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from operator import attrgetter, ne
from typing import Any

from ..events.values import ABSENT, first_difference, json_equal, show
from .patterns import Pattern, prepared


def was(field: str, actual: Any, expected: Any) -> str:
    """'field was X, expected Y' with compact JSON renderings; for two lists or objects, the first path at which
    they differ and the two values there (`arguments.flights[1].flight_number was 'HAT229', expected 'HAT290'`)."""
    found = first_difference(actual, expected)
    if found is None or not found[0]:
        return f"{field} was {show(actual)}, expected {show(expected)}"
    path, mine, theirs = found
    where = field + path
    if mine is ABSENT:
        return f"{where} was missing, expected {show(theirs)}"
    if theirs is ABSENT:
        index = path[path.rfind("[") + 1 : -1] if path.endswith("]") else ""
        if not index.isdigit():
            lacks = "no such key"
        else:
            lacks = "an empty list" if index == "0" else f"only {index} item{'' if index == '1' else 's'}"
        return f"{where} was {show(mine)}, expected {lacks}"
    return f"{where} was {show(mine)}, expected {show(theirs)}"


class How(Enum):
    """How a compared field is compared."""

    #: Equal (`==`).
    EXACT = "exact"
    #: A mapping: every key the check gives is in the event's, with a JSON-equal value (`json_equal`); each key
    #: that is missing or differs is one difference, named `field.key`.
    SUBSET = "subset"
    #: The check's pattern (`patterns.Pattern`) is found in the event's text.
    PATTERN = "pattern"
    #: The check's items are found in the event's, in order, others between (`in_order`); each item `accepts` one.
    IN_ORDER = "in_order"


def in_order(wanted: Sequence[Any], present: Sequence[Any]) -> int:
    """How many of `wanted` appear among `present` in order (others may sit between)."""
    found = 0
    for item in present:
        if found < len(wanted) and wanted[found].accepts(item):
            found += 1
    return found


def _says_missing_or_was(field: str, actual: Any, expected: Any) -> str:
    return f"{field} was missing, expected {show(expected)}" if actual is ABSENT else was(field, actual, expected)


def _says_no_match(field: str, actual: Any, expected: Any) -> str:
    return f"{field} {show(actual, 60)} does not match /{expected}/"


def _says_lacked(field: str, actual: Any, expected: Any) -> str:
    have = ", ".join(repr(item.title) for item in actual) or "none"
    return f"{field} lacked {expected[in_order(expected, actual)]} in order (it had {have})"


_SAYS: dict[How, Callable[[str, Any, Any], str]] = {
    How.EXACT: was,
    How.SUBSET: _says_missing_or_was,
    How.PATTERN: _says_no_match,
    How.IN_ORDER: _says_lacked,
}


@dataclass(frozen=True)
class Compared:
    """One field a check compares with a field of its event, when the check sets it (not None).

    `field` is the check's (a dotted path when a field of the check holds them, `match.utter_name`), `event_field`
    the event's, the name a difference is explained by; `says(event_field, actual, expected)` words a
    difference, by default as `How` words it.
    """

    field: str
    event_field: str
    how: How = How.EXACT
    says: Callable[[str, Any, Any], str] | None = None


class Comparison:
    """The compared fields one check sets, with their values: what its matching, counting and explaining read.

    Made once per check (`EventCheck.comparison`), and never pickled with it: a worker process makes it again.
    """

    __slots__ = ("exact", "others", "pattern", "several", "set", "wanted")

    def __init__(self, check: Any, compared: Sequence[Compared]) -> None:
        #: In the listed order: each compared field the check sets, its value, and a reader of the event's field.
        self.set = [(c, value, attrgetter(c.event_field)) for c in compared if (value := attrgetter(c.field)(check)) is not None]
        exact = [(c, value) for c, value, _ in self.set if c.how is How.EXACT]
        self.several = len(exact) > 1
        #: The event's exact fields at once, and the values they must hold: one comparison matches them all.
        self.exact = attrgetter(*(c.event_field for c, _ in exact)) if exact else None
        self.wanted: Any = tuple(value for _, value in exact) if self.several else exact[0][1] if exact else None
        #: The other fields, a pattern last: matching stops at the first that differs, and a search costs the most.
        others = [(c, value, read) for c, value, read in self.set if c.how is not How.EXACT]
        self.others = sorted(others, key=lambda item: item[0].how is How.PATTERN)
        #: The one field compared by a pattern, if any, and that pattern compiled.
        self.pattern: tuple[Pattern, Callable[[Any], Any]] | None = next(
            ((prepared(value), read) for c, value, read in self.set if c.how is How.PATTERN), None
        )

    def matches(self, event: Any) -> bool:
        if self.exact is not None and self.exact(event) != self.wanted:
            return False
        for compared, value, read in self.others:
            if not _agrees(compared.how, read(event), value, self.pattern):
                return False
        return True

    def miss_count(self, event: Any, text_found: bool | None = None) -> int:
        """How many differences `differences` would list, without listing them; `text_found`: whether the
        pattern is found in the event's text, when that is known already (`EventCheck.miss_counts`)."""
        count = 0
        if self.exact is not None:
            actual = self.exact(event)
            if actual != self.wanted:
                count = sum(map(ne, actual, self.wanted)) if self.several else 1
        for compared, value, read in self.others:
            how = compared.how
            if how is How.SUBSET:
                actual = read(event)
                count += sum(1 for name, expected in value.items() if name not in actual or not json_equal(actual[name], expected))
            elif how is How.PATTERN and text_found is not None:
                count += not text_found
            else:
                count += not _agrees(how, read(event), value, self.pattern)
        return count

    def differences(self, event: Any) -> list[tuple[Compared, str, Any, Any]]:
        """Each difference, in the listed order: the compared field, the name it goes by, the event's value there
        (`ABSENT` for a key it lacks) and the check's."""
        found = []
        for compared, value, read in self.set:
            actual = read(event)
            name = compared.event_field
            if compared.how is How.SUBSET:
                for key, expected in value.items():
                    if key not in actual:
                        found.append((compared, f"{name}.{key}", ABSENT, expected))
                    elif not json_equal(actual[key], expected):
                        found.append((compared, f"{name}.{key}", actual[key], expected))
            elif not (actual == value if compared.how is How.EXACT else _agrees(compared.how, actual, value, self.pattern)):
                found.append((compared, name, actual, value))
        return found

    def mismatches(self, event: Any) -> list[str]:
        return [(c.says or _SAYS[c.how])(name, actual, expected) for c, name, actual, expected in self.differences(event)]


def _agrees(how: How, actual: Any, expected: Any, pattern: tuple[Pattern, Any] | None) -> bool:
    if how is How.SUBSET:
        return all(name in actual and json_equal(actual[name], value) for name, value in expected.items())
    if how is How.IN_ORDER:
        return in_order(expected, actual) >= len(expected)
    if how is How.PATTERN:
        return pattern is not None and pattern[0].found(actual)
    return bool(actual == expected)

