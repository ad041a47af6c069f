"""Plain result records to JSON and back, both ways from their declared fields, so the two cannot drift apart.

A record (a run's simulator, its environment and the faults it met, a scenario's names) is a frozen
dataclass; its document holds each field under its name, in declaration order, and reading it back
takes each field whose value has the declared type. A value of another type reads as the field's
default, or for a field without one as its `READ_AS` metadata (a results file may have been edited by
hand: it is read leniently); a required field with neither makes the whole record unreadable (None).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, Union, get_args, get_origin, get_type_hints

from ..llm.base import Usage

#: Field metadata: what a field without a default reads as when its value in a file has another type.
READ_AS = "read_as"

_HINTS: dict[type, dict[str, Any]] = {}


def read_usage(value: Any) -> Usage | None:
    """Token counts and cost as `Usage.to_dict` wrote them, leniently like any record: a count of another type reads as 0."""
    return read_record(Usage, value)


def record_document(value: Any) -> dict[str, Any]:
    """A record as JSON values: each field by name, in declaration order; records and tuples within as objects and lists."""
    return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return record_document(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def read_record(kind: type, value: Any) -> Any:
    """The record of `kind` a document holds, leniently (see the module's docstring); None when it holds none."""
    if not isinstance(value, Mapping):
        return None
    hints = _HINTS.get(kind)
    if hints is None:
        hints = _HINTS[kind] = get_type_hints(kind)
    found: dict[str, Any] = {}
    for f in fields(kind):
        ok, read = _read(hints[f.name], value.get(f.name))
        if ok:
            found[f.name] = read
        elif f.default is MISSING and f.default_factory is MISSING:
            if READ_AS not in f.metadata:
                return None
            found[f.name] = f.metadata[READ_AS]
    return kind(**found)


def _read(hint: Any, value: Any) -> tuple[bool, Any]:
    """(whether `value` has the type `hint`, the value read as it)."""
    if hint is Any:
        return True, value
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        if value is None:
            return type(None) in get_args(hint), None
        for arg in get_args(hint):
            ok, read = _read(arg, value) if arg is not type(None) else (False, None)
            if ok:
                return True, read
        return False, None
    if origin is tuple:  # tuple[X, ...]: the items that are an X, in order
        if not isinstance(value, list):
            return False, None
        item = get_args(hint)[0]
        return True, tuple(read for ok, read in (_read(item, one) for one in value) if ok)
    if isinstance(hint, type) and is_dataclass(hint):
        read = read_record(hint, value)
        return read is not None, read
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool), value
    if hint is str:
        return isinstance(value, str), value
    raise TypeError(f"a record field of type {hint} has no reader")
