"""Read the JSON items of another tool's log file, each with a way back to its line and column.

Formats differ in what an item is (a trajectory, a simulation run, a message
list, a broker event), but all come as JSONL (one item a line, read lazily) or
as one JSON document (a list of items, or an object holding one). Every item
keeps the text it came from, so a problem found deep inside it, named by a
JSON path such as `("traj", 5, "tool_calls", 0)`, is reported at the line and
column of that value, not just at the item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from ..errors import LoadError, Problem, decode_utf8
from ..events.bounds import bounded_lines, read_whole
from ..events.load import json_load_error, looks_like_jsonl
from ..events.parse import json_type

JsonPath = tuple[str | int, ...]
_DECODER = json.JSONDecoder()
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LOW_SURROGATE_ESCAPE = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")


class ItemProblem(ValueError):
    """Something wrong inside one item, at a JSON path relative to the item."""

    def __init__(self, message: str, path: JsonPath = ()):
        self.path = tuple(path)
        super().__init__(message)


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _step_into(text: str, i: int, step: str | int) -> int | None:
    """The offset of `step` (a key or an index) inside the value starting at `i`, or None."""
    if text[i] == "{" and isinstance(step, str):
        i = _skip_ws(text, i + 1)
        while i < len(text) and text[i] == '"':
            key, i = _DECODER.raw_decode(text, i)
            i = _skip_ws(text, _skip_ws(text, i) + 1)  # past the colon
            if key == step:
                return i
            _, i = _DECODER.raw_decode(text, i)
            i = _skip_ws(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
        return None
    if text[i] == "[" and isinstance(step, int):
        i = _skip_ws(text, i + 1)
        for _ in range(step):
            if i >= len(text) or text[i] == "]":
                return None
            _, i = _DECODER.raw_decode(text, i)
            i = _skip_ws(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
        return i if i < len(text) and text[i] != "]" else None
    return None


@dataclass(frozen=True)
class Item:
    """One JSON item of a file: its value, and where its text starts."""

    value: Any
    file: str
    text: str
    offset: int = 0
    first_line: int = 1
    index: int = 0  # position among the file's items, from 0

    def position(self, path: JsonPath = ()) -> tuple[int, int]:
        """Line and column of the value at `path`, or of the deepest part of it that exists."""
        i = _skip_ws(self.text, self.offset)
        try:
            for step in path:
                found = _step_into(self.text, i, step)
                if found is None:
                    break
                i = found
        except (ValueError, IndexError, RecursionError):  # too deep for the standard library: the deepest part found
            pass
        line = self.text.count("\n", 0, i)
        start = self.text.rfind("\n", 0, i) + 1
        return self.first_line + line, i - start + 1

    def problem(self, message: str, path: JsonPath = ()) -> Problem:
        line, column = self.position(path)
        return Problem(message, self.file, line, column)


def jsonl_items(path: Path, list_key: str | None = None) -> Iterator[Item]:
    """Each non-blank line of a JSONL file, parsed as it is read (with `list_key`, see `document_items`)."""
    file = str(path)
    index = 0
    with path.open("rb") as handle:
        for lineno, raw in bounded_lines(handle, file):
            text = decode_utf8(raw, file, lineno)
            if not text.strip():
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise json_load_error(json_error_at(text), file, text, lineno) from None
            if list_key is not None and isinstance(value, dict) and isinstance(value.get(list_key), list):
                # A whole document on one line (`json.dump` without indent): its list, as `document_items` reads it.
                try:
                    yield from _array_items(text, _step_into(text, _skip_ws(text, 0), list_key), file, False, lineno)  # type: ignore[arg-type]  # the one-line document's list key, checked above
                except json.JSONDecodeError as err:
                    raise json_load_error(err, file, text, lineno) from None
                continue
            yield Item(value, file, text, 0, lineno, index)
            index += 1


def json_error_at(text: str) -> json.JSONDecodeError:
    """The standard library's error for `text`, which carries the offset orjson's lacks."""
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        return err
    except RecursionError:  # nested deeper than the standard library's parser goes: orjson's error says where
        try:
            orjson.loads(text)
        except orjson.JSONDecodeError as err:
            return err
    return lone_surrogate_error(text) or json.JSONDecodeError("unexpected content", text, 0)


def lone_surrogate_error(text: str) -> json.JSONDecodeError | None:
    """The error for the first `\\ud800`-style escape in `text` that is not half of a surrogate pair, or None.

    The standard library's decoder reads a lone surrogate into a string no UTF-8 output can hold (orjson
    refuses it), so an imported conversation or a derived scenario holding one could never be written.
    """
    if "\\u" not in text:
        return None
    paired_until = -1
    for match in _SURROGATE_ESCAPE.finditer(text):
        start = before = match.start()
        while before and text[before - 1] == "\\":
            before -= 1
        if start < paired_until or (start - before) % 2:  # the low half of a pair, or an escaped backslash and text
            continue
        if int(match.group()[2:], 16) <= 0xDBFF and _LOW_SURROGATE_ESCAPE.match(text, match.end()):
            paired_until = match.end() + 6
            continue
        return json.JSONDecodeError(f"`{match.group().lower()}` is half of a UTF-16 surrogate pair, not a character", text, start)
    return None


def _array_items(text: str, i: int, file: str, top_level: bool = True, first_line: int = 1) -> Iterator[Item]:
    """Each element of the JSON list starting at `i`, decoded one at a time."""
    i = _skip_ws(text, i + 1)
    index = 0
    while i < len(text) and text[i] != "]":
        value, end = _DECODER.raw_decode(text, i)
        yield Item(value, file, text, i, first_line, index)
        index += 1
        i = _skip_ws(text, end)
        if i < len(text) and text[i] == ",":
            i = _skip_ws(text, i + 1)
        elif i < len(text) and text[i] != "]":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
    if i >= len(text):
        raise json.JSONDecodeError("Expecting ']' to close the list", text, i)
    if top_level and _skip_ws(text, i + 1) < len(text):
        raise json.JSONDecodeError("Extra data after the list", text, _skip_ws(text, i + 1))


def document_items(path: Path, list_key: str | None = None) -> Iterator[Item]:
    """The items of one JSON document: each element of a top-level list, else the object itself.

    A top-level list is decoded one element at a time. With `list_key`, an
    object holding a list under that key (tau2's results file under
    `simulations`) yields that list's elements instead.
    """
    file = str(path)
    with path.open("rb") as handle:
        text = decode_utf8(read_whole(handle, file), file)
    start = _skip_ws(text, 0)
    try:
        lone = lone_surrogate_error(text)
        if lone is not None:
            raise lone
        if text[start:start + 1] == "[":
            yield from _array_items(text, start, file)
            return
        doc = json.loads(text)
        inner = _step_into(text, start, list_key) if isinstance(doc, dict) and list_key else None
        if inner is not None and isinstance(doc.get(list_key), list):
            yield from _array_items(text, inner, file, top_level=False)
        else:
            yield Item(doc, file, text, start, 1, 0)
    except json.JSONDecodeError as err:
        raise json_load_error(err, file, text) from None


def file_items(path: str | Path, list_key: str | None = None) -> Iterator[Item]:
    """Every item of a JSON or JSONL file (detected from content); unreadable files are a `LoadError`."""
    path = Path(path)
    try:
        if looks_like_jsonl(path, objects_only=True):
            yield from jsonl_items(path, list_key)
        else:
            yield from document_items(path, list_key)
    except OSError as err:
        raise LoadError.of_os("cannot read file", err, str(path)) from None
    except RecursionError:  # the standard library's parser, which finds each item's place, recurses
        raise LoadError.one("invalid JSON: nested too deep for this format's reader (orjson reads up to 1,024 levels, this one fewer)", str(path)) from None


def parse_json_string(value: Any, what: str, path: JsonPath) -> Any:
    """A JSON value carried as a string (`arguments_json`, OpenAI's `arguments`), parsed once."""
    if not isinstance(value, str):
        raise ItemProblem(f"`{what}` must be a string holding JSON, got {json_type(value)}", path)
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as err:
        raise ItemProblem(f"`{what}` is not valid JSON: {err}", path) from None


def epoch_seconds(value: Any, path: JsonPath) -> float | None:
    """A timestamp as seconds since 1970: a number as it is, an RFC 3339 string with its zone converted.

    A string without a zone says nothing certain about the instant, so it gives
    None (the caller keeps the text in metadata) rather than a guess at a zone.
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise ItemProblem(f"`timestamp` {value!r} is not an RFC 3339 date and time", path) from None
        return moment.timestamp() if moment.tzinfo is not None else None
    raise ItemProblem(f"`timestamp` must be a number or an RFC 3339 string, got {json_type(value)}", path)
