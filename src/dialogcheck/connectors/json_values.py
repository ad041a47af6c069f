"""An agent's answer as plain JSON data, taken the moment it is read.

A Python agent can hand back anything: bytes, a set, integer keys, integers
past 64 bits, data that contains itself, strings with lone surrogates. None of
these can be written to `run_N.json` or judged the way a recorded file would
be, so an answer that holds one is the agent's fault, named by its path: the
run is errored there and nothing downstream ever sees the value. The copy made
here is also the harness's own: an agent that later mutates what it returned
cannot change what is judged.
"""

from __future__ import annotations

from typing import Any

import orjson

from .._shown import clip
from ..events.bounds import MAX_WRITTEN_DEPTH as MAX_DEPTH
from .base import AgentError

#: How many steps of a path an error message shows before eliding the rest.
_PATH_STEPS = 8
#: How much of an offending value an error message quotes.
_QUOTE_CHARS = 40
_INT_RANGE = range(-(2**63), 2**64)  # what orjson reads and writes


def json_copy(value: Any, where: str) -> Any:
    """`value` re-read from its JSON form, or an `AgentError` naming the first part JSON cannot hold."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError as err:  # orjson.JSONEncodeError is a TypeError
        found = _first_problem(value, [], set())
        problem = f"{_path_text(found[0])} {found[1]}" if found else f"it cannot be written as JSON ({err})"
        raise AgentError(f"{where}: {problem}") from None


def _quote(value: Any) -> str:
    return clip(repr(value), _QUOTE_CHARS, keep=_QUOTE_CHARS)


def _path_text(path: list[str | int]) -> str:
    if not path:
        return "the top level"
    shown = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path[:_PATH_STEPS]).lstrip(".")
    return f"`{shown}{'…' if len(path) > _PATH_STEPS else ''}`"


def _string_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        return f"holds a lone surrogate {text[err.start]!r} at character {err.start}, which JSON text (UTF-8) cannot hold"
    return None


def _first_problem(value: Any, path: list[str | int], active: set[int]) -> tuple[list[str | int], str] | None:
    """The path to the first value orjson cannot write, and what it is; None when none is found.

    Recursion is bounded by MAX_DEPTH (a deeper value is itself the problem), far below Python's limit.
    """
    if value is None or isinstance(value, (bool, float)):
        return None
    if isinstance(value, str):
        problem = _string_problem(value)
        return (path, problem) if problem else None
    if isinstance(value, int):
        return None if value in _INT_RANGE else (path, f"is an integer beyond 64 bits ({_quote(value)}), which dialogcheck's JSON cannot hold")
    if not isinstance(value, (dict, list, tuple)):
        try:
            orjson.dumps(value)  # a type orjson writes itself (a dataclass, a datetime), or not
        except TypeError:
            return path, f"is of type `{type(value).__name__}`, which JSON cannot hold"
        return None
    if id(value) in active:
        return path, "contains itself (cyclic data), which JSON cannot hold"
    if len(path) >= MAX_DEPTH:
        return path, f"is nested more than {MAX_DEPTH} levels deep, past what dialogcheck writes as JSON"
    active.add(id(value))
    try:
        if isinstance(value, dict):
            return _first_in_mapping(value, path, active)
        for i, item in enumerate(value):
            found = _first_problem(item, [*path, i], active)
            if found:
                return found
        return None
    finally:
        active.discard(id(value))


def _first_in_mapping(value: dict, path: list[str | int], active: set[int]) -> tuple[list[str | int], str] | None:
    for key, item in value.items():
        if not isinstance(key, str):
            return path, f"has the key {_quote(key)} of type `{type(key).__name__}`, but JSON keys are strings"
        problem = _string_problem(key)
        if problem:
            return path, f"has a key that {problem}"
        found = _first_problem(item, [*path, key], active)
        if found:
            return found
    return None
