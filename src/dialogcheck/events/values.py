"""JSON-typed deep equality and short renderings of JSON values.

Python's `==` says `True == 1` and `1 == 1.0 == True`; a check that compares
recorded values must not, so every comparison in dialogcheck goes through
`json_equal` (docs/concepts.md, the conversation record, "Equality of values").
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterator
from typing import Any

import orjson

from .._redact import mask
from .._shown import clip


class _MaskedRepr(reprlib.Repr):
    """A repr that masks held secrets in a string before it may cut the string's middle out."""

    def repr_str(self, x: str, level: int) -> str:
        return super().repr_str(mask(x), level)


#: What `show` falls back to for a value orjson will not write (nested past its 255 levels, or not JSON):
#: a repr that stops at a few levels and characters, so no value can make it recurse deeply or run long.
_SHORT_REPR = _MaskedRepr()
_SHORT_REPR.maxlevel = 8
#: Long numbers and strings keep their head whole, so `show`'s own cut (an ellipsis at the end) marks them.
_SHORT_REPR.maxlong = _SHORT_REPR.maxstring = 400


def is_number(value: Any) -> bool:
    """True for ints and floats; booleans are not numbers."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality where types must agree: `true` is not `1`, `5` is not `"5"`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return False


class _Absent:
    """Stands for a key or item one side lacks, in `first_difference`."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def first_difference(actual: Any, expected: Any) -> tuple[str, Any, Any] | None:
    """Where two JSON values first differ: a path (`[1].flight_number`, `''` for the values themselves) and the
    two values there, a side without that key or item being `ABSENT`; None when they are equal.

    A failure on a long list or object cut both renderings at the same place, so the visible halves agreed;
    the path names what differs. It is the first of `differences`.
    """
    found = next(differences(actual, expected), None)
    if found is None:
        return None
    keys, mine, theirs = found
    return "".join(f"[{key}]" if type(key) is int else _step(key) for key in keys), mine, theirs


Place = tuple[tuple[Any, ...], Any, Any]


def differences(actual: Any, expected: Any) -> Iterator[Place]:
    """Every place two JSON values differ, as `(keys, actual there, expected there)`: `keys` is the way in (a
    key of an object, an `int` index of a list; `()` for the values themselves), a side without that key or item
    being `ABSENT`. Only where both are objects, or both lists, does it look inside; an item one side lacks is
    one place, not looked into.

    Lazily, in order: an object's keys in the expected value's order, then the actual value's extra keys; a
    list's items by index, then the longer one's extra items. Each level descends into the children that differ
    only, with a stack rather than recursion, so the walk is as deep as the values and no deeper.
    """
    if json_equal(actual, expected):
        return
    stack: list[Iterator[Place]] = [iter((((), actual, expected),))]
    while stack:
        place = next(stack[-1], None)
        if place is None:
            stack.pop()
            continue
        keys, mine, theirs = place
        if isinstance(mine, dict) and isinstance(theirs, dict):
            stack.append(_object_children(keys, mine, theirs))
        elif isinstance(mine, (list, tuple)) and isinstance(theirs, (list, tuple)):
            stack.append(_list_children(keys, mine, theirs))
        else:
            yield place


def _object_children(keys: tuple[Any, ...], actual: dict, expected: dict) -> Iterator[Place]:
    """The keys of two objects that differ (a key one side lacks included), both values unequal."""
    for key, value in expected.items():
        if key not in actual:
            yield (*keys, key), ABSENT, value
        elif not json_equal(actual[key], value):
            yield (*keys, key), actual[key], value
    for key, value in actual.items():
        if key not in expected:
            yield (*keys, key), value, ABSENT


def _list_children(keys: tuple[Any, ...], actual: Any, expected: Any) -> Iterator[Place]:
    """The items of two lists that differ by index, then the longer one's extra items."""
    for index, (mine, theirs) in enumerate(zip(actual, expected)):
        if not json_equal(mine, theirs):
            yield (*keys, index), mine, theirs
    for index in range(len(expected), len(actual)):
        yield (*keys, index), actual[index], ABSENT
    for index in range(len(actual), len(expected)):
        yield (*keys, index), ABSENT, expected[index]


def _step(key: Any) -> str:
    """One key of a path: `.name` for a plain name, else `["a key"]`."""
    if isinstance(key, str) and len(key) <= 40 and _NAME.fullmatch(key):
        return f".{key}"
    return f"[{show(key, 40)}]"


def show(value: Any, limit: int = 80) -> str:
    """A compact JSON rendering for explanations, cut at `limit` characters.

    What is cut is masked first, whole: the head of a held secret left by the cut is no longer the secret
    that the write points mask.
    """
    if isinstance(value, str):
        text = repr(value) if len(value) <= limit else _long_string_head(mask(value), limit)
    else:
        try:
            text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        except TypeError:  # orjson's encode error, for a value too deep, an integer past 64 bits, or not JSON
            try:
                text = _SHORT_REPR.repr(value)
            except ValueError:  # an integer past Python's limit on digits written out
                text = f"an integer of {value.bit_length():,} bits"
    return clip(text, limit)


def _long_string_head(value: str, limit: int) -> str:
    """`repr(value)`, or at least its first `limit` characters, without writing out all of a text longer than that.

    Explanations quote messages and tool results of any length, and a repr costs about 50 instructions a
    character. Each character is written alone, so the repr of the first `limit` characters begins as the whole
    one does, once both are quoted alike: Python quotes with `"` only a text that holds `'` and no `"`.
    """
    head = value[:limit]
    if ("'" in head and '"' not in head) is ("'" in value and '"' not in value):
        return repr(head)
    return repr(value)
