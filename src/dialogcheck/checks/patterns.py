"""Regular expressions from user files, with a time limit.

Patterns in `text_matches`, `matches` and `pattern` come from files a
pipeline did not write; one with catastrophic backtracking (`(a|aa)+$`) must
not hang a batch. They are compiled and run by the `regex` engine (with the
syntax and meaning of Python's `re`, which is its default V0 mode) and every
search has a time limit: past it the check is an `error` that names the
pattern, never a hang and never a silent pass or fail.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

#: Seconds one search of one message may take.
SEARCH_TIMEOUT = 1.0


class PatternTimeout(Exception):
    """A search ran past its time limit."""


class PatternError(ValueError):
    """The pattern does not compile; the message says why."""


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> regex.Pattern:
    import regex  # here, not at the top: a file without patterns never pays for the engine

    try:
        return regex.compile(pattern)
    except regex.error as err:
        raise PatternError(str(err)) from None


def search(pattern: str, text: str, timeout: float | None = None) -> bool:
    """`re.search(pattern, text) is not None`, within `timeout` seconds (default SEARCH_TIMEOUT)."""
    try:
        # Positional (string, pos, endpos, concurrent, partial, timeout): `timeout=` as a keyword costs
        # more than the search of a short message. test_patterns pins the order.
        return compile_pattern(pattern).search(text, None, None, None, False, SEARCH_TIMEOUT if timeout is None else timeout) is not None
    except TimeoutError:
        limit = SEARCH_TIMEOUT if timeout is None else timeout
        raise PatternTimeout(
            f"the pattern /{pattern}/ took longer than {limit:g} s on a {len(text):,}-character text "
            "(it backtracks catastrophically: simplify it)"
        ) from None
