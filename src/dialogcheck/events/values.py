"""JSON-typed deep equality and short renderings of JSON values.

Python's `==` says `True == 1` and `1 == 1.0 == True`; a check that compares
recorded values must not, so every comparison in dialogcheck goes through
`json_equal` (SPEC section 1, "Equality of values").
"""

from __future__ import annotations

import reprlib
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
