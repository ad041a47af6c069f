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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
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


class How:
    """How a compared field is compared: exactly (`EXACT`, this class), or as one of its subclasses says.

    `agrees` is the hot path (matching), `misses` counts what `differences` lists (ranking a failure's candidates),
    `differences` lists `(name, the event's value, the check's)` and `says` words one. `prepare` makes what
    `agrees` and `misses` compare with of the check's value (a pattern compiled), once per check.
    """

    def prepare(self, value: Any) -> Any:
        return value

    def agrees(self, actual: Any, expected: Any) -> bool:
        return bool(actual == expected)

    def misses(self, actual: Any, expected: Any) -> int:
        return 0 if self.agrees(actual, expected) else 1

    def differences(self, name: str, actual: Any, expected: Any) -> Iterator[tuple[str, Any, Any]]:
        if not self.agrees(actual, expected):
            yield name, actual, expected

    def says(self, field: str, actual: Any, expected: Any) -> str:
        return was(field, actual, expected)


class Subset(How):
    """A mapping: every key the check gives is in the event's, with a JSON-equal value (`json_equal`); each key
    that is missing (`ABSENT`) or differs is one difference, named `field.key`."""

    def agrees(self, actual: Any, expected: Any) -> bool:
        return all(key in actual and json_equal(actual[key], value) for key, value in expected.items())

    def misses(self, actual: Any, expected: Any) -> int:
        return sum(1 for key, value in expected.items() if key not in actual or not json_equal(actual[key], value))

    def differences(self, name: str, actual: Any, expected: Any) -> Iterator[tuple[str, Any, Any]]:
        for key, value in expected.items():
            if key not in actual:
                yield f"{name}.{key}", ABSENT, value
            elif not json_equal(actual[key], value):
                yield f"{name}.{key}", actual[key], value

    def says(self, field: str, actual: Any, expected: Any) -> str:
        return f"{field} was missing, expected {show(expected)}" if actual is ABSENT else was(field, actual, expected)


class Matched(How):
    """A pattern (`patterns.Pattern`, compiled once per check) found in the event's text."""

    def prepare(self, value: Any) -> Pattern:
        return prepared(value)

    def agrees(self, actual: Any, expected: Any) -> bool:
        return bool(expected.found(actual))

    def differences(self, name: str, actual: Any, expected: Any) -> Iterator[tuple[str, Any, Any]]:
        if not expected.found(actual):
            yield name, actual, expected.source

    def says(self, field: str, actual: Any, expected: Any) -> str:
        return f"{field} {show(actual, 60)} does not match /{expected}/"


class InOrder(How):
    """The check's items found among the event's in order, others between (`in_order`); an item `accepts` one."""

    def agrees(self, actual: Any, expected: Any) -> bool:
        return in_order(expected, actual) >= len(expected)

    def says(self, field: str, actual: Any, expected: Any) -> str:
        have = ", ".join(repr(item.title) for item in actual) or "none"
        return f"{field} lacked {expected[in_order(expected, actual)]} in order (it had {have})"


EXACT, SUBSET, PATTERN, IN_ORDER = How(), Subset(), Matched(), InOrder()


def in_order(wanted: Sequence[Any], present: Sequence[Any]) -> int:
    """How many of `wanted` appear among `present` in order (others may sit between)."""
    found = 0
    for item in present:
        if found < len(wanted) and wanted[found].accepts(item):
            found += 1
    return found


@dataclass(frozen=True)
class Compared:
    """One field a check compares with a field of its event, when the check sets it (not None).

    `field` is the check's (a dotted path when a field of the check holds them, `match.utter_name`), `event_field`
    the event's, the name a difference is explained by; `says(event_field, actual, expected)` words a
    difference, by default as `how` words it.
    """

    field: str
    event_field: str
    how: How = EXACT
    says: Callable[[str, Any, Any], str] | None = None


class Comparison:
    """The compared fields one check sets, with their values: what its matching, counting and explaining read.

    Made once per check (`EventCheck.comparison`), and never pickled with it: a worker process makes it again.
    """

    __slots__ = ("exact", "others", "pattern", "several", "set", "wanted")

    #: Read by `EventCheck.matches` and `miss_count`, the hot path of every event check: `exact` reads the event's
    #: exactly compared fields at once (None: there are none), `wanted` is what they must be (a tuple when
    #: `several`), `others` the rest as `(how, prepared value, reader of the event's field)`, a pattern last:
    #: matching stops at the first that differs, and a search costs the most.
    exact: Callable[[Any], Any] | None
    wanted: Any
    several: bool
    others: list[tuple[How, Any, Callable[[Any], Any]]]
    #: The pattern and the reader of the text it is searched in, if a field is compared by one.
    pattern: tuple[Pattern, Callable[[Any], Any]] | None

    def __init__(self, check: Any, compared: Sequence[Compared]) -> None:
        #: In the listed order: each compared field the check sets, its prepared value, and a reader of the event's field.
        self.set = [
            (c, c.how.prepare(value), attrgetter(c.event_field)) for c in compared if (value := attrgetter(c.field)(check)) is not None
        ]
        exact = [(c, value) for c, value, _ in self.set if c.how is EXACT]
        self.several = len(exact) > 1
        self.exact = attrgetter(*(c.event_field for c, _ in exact)) if exact else None
        self.wanted = tuple(value for _, value in exact) if self.several else exact[0][1] if exact else None
        others = [(c.how, value, read) for c, value, read in self.set if c.how is not EXACT]
        self.others = sorted(others, key=lambda item: item[0] is PATTERN)
        self.pattern = next(((value, read) for how, value, read in others if how is PATTERN), None)

    def differences(self, event: Any) -> list[tuple[Compared, str, Any, Any]]:
        """Each difference, in the listed order: the compared field, the name it goes by, the event's value there
        (`ABSENT` for a key it lacks) and the check's."""
        found = []
        for c, value, read in self.set:
            actual = read(event)
            if c.how is EXACT:  # most fields: the difference itself, without a generator of one
                if actual != value:
                    found.append((c, c.event_field, actual, value))
            else:
                found.extend((c, *difference) for difference in c.how.differences(c.event_field, actual, value))
        return found

    def mismatches(self, event: Any) -> list[str]:
        return [(c.says or c.how.says)(name, actual, expected) for c, name, actual, expected in self.differences(event)]
