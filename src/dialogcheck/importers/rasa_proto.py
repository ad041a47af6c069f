"""`rasa-proto`: Mantle's nested event form (ProtoJSON), as its tracker store and event broker write it.

Each event is an object with envelope fields (`conversation_id`, `timestamp`,
`event_id`, `sequence`, `user_id`, `deployment_environment`, `session_id`,
optional `metadata`) and exactly one payload key naming its type (`user`,
`bot`, `memory_set`, `skill_activated`, `tool_executed`, ...) whose object
holds the fields. Memory values and tool arguments and results travel as JSON
strings (`value_json`, `arguments_json`, `result_json`); they are parsed once
here, so `"42"` becomes the integer 42 and never 42.0.

Order is `sequence` (0-based per conversation, gaps allowed; ProtoJSON may
write it as a string), not file or timestamp order. Older flat rows
(`{"event": ...}`) may be mixed in, as Mantle still reads them: they are kept
as they are, in file order after the sequenced event before them. A repeated
`event_id` (a broker delivers at least once) is read once.

Accepted files: a tracker object (`events`, named by `conversation_id` or
`sender_id`), JSONL of tracker objects (one conversation a line, read
lazily), or a stream of events (JSONL or a JSON list) that may interleave
conversations: they are grouped by `conversation_id`, in order of first
appearance. For a JSONL stream only the line offsets are held while
grouping; each conversation's lines are read back when it is converted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import LoadError, decode_utf8
from ._build import Draft, ImportedConversation, convert_items, expect
from ._records import (
    Item,
    ItemProblem,
    JsonPath,
    epoch_seconds,
    file_items,
    json_error_at,
    json_load_error,
    looks_like_jsonl,
    parse_json_string,
)

ENVELOPE = (
    "conversation_id",
    "sender_id",
    "timestamp",
    "event_id",
    "sequence",
    "user_id",
    "deployment_environment",
    "session_id",
    "metadata",
)
_KEPT = ("event_id", "sequence", "session_id", "user_id", "deployment_environment")
#: Proto3 writes an unset string as "": these optional fields then read as absent.
_EMPTY_IS_ABSENT = ("step_id", "mcp_server", "error_message", "skill_id")
Row = tuple[dict[str, Any], Item, JsonPath]  # a native event, the item and path it came from


def _sequence(value: Any, path: JsonPath) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ItemProblem(f"`sequence` must be a non-negative integer, got {value!r}", (*path, "sequence"))


def _payload(kind: str, payload: dict[str, Any], path: JsonPath) -> dict[str, Any]:
    """The payload's fields in the flat tracker form, with the `*_json` strings parsed."""
    fields = {k: v for k, v in payload.items() if not (k in _EMPTY_IS_ABSENT and v == "")}
    where = (*path, kind)
    if kind == "memory_set" and "value_json" in fields:
        fields["value"] = parse_json_string(fields.pop("value_json"), "memory_set.value_json", (*where, "value_json"))
    if kind == "tool_executed":
        if "arguments_json" in fields:
            raw, at = fields.pop("arguments_json"), (*where, "arguments_json")
            arguments = parse_json_string(raw, "tool_executed.arguments_json", at) if raw else {}
            fields["arguments"] = expect(arguments, dict, "tool_executed.arguments_json", at)
        if "result_json" in fields:
            raw, at = fields.pop("result_json"), (*where, "result_json")
            fields["result"] = parse_json_string(raw, "tool_executed.result_json", at) if raw else None
    if kind == "bot":
        if "utter_action" in fields:
            fields["utter_name"] = fields.pop("utter_action")
    return fields


def native_event(obj: Any, path: JsonPath) -> dict[str, Any]:
    """One ProtoJSON event as a flat native event; a flat row is kept as it is."""
    obj = expect(obj, dict, "event", path)
    if "event" in obj:
        return dict(obj)
    kinds = [k for k in obj if k not in ENVELOPE]
    if len(kinds) != 1:
        found = ", ".join(f"`{k}`" for k in kinds) or "none"
        raise ItemProblem(f"an event has exactly one payload key (user, bot, tool_executed, ...), found {found}", path)
    kind = kinds[0]
    payload = expect(obj[kind], dict, kind, (*path, kind))
    event: dict[str, Any] = {"event": kind, **_payload(kind, payload, path)}
    metadata = expect(obj.get("metadata"), dict, "metadata", (*path, "metadata"), optional=True)
    if metadata:
        event["metadata"] = {**metadata, **(event.get("metadata") or {})}
    seconds = epoch_seconds(obj.get("timestamp"), (*path, "timestamp"))
    if seconds is not None:
        event["timestamp"] = seconds
    for key in _KEPT:
        if obj.get(key) not in (None, ""):
            event[key] = _sequence(obj[key], path) if key == "sequence" else obj[key]
    return event


def ordered(rows: Iterable[Row]) -> list[Row]:
    """By `sequence`; an unsequenced row stays right after the sequenced row before it; repeated ids once."""
    keyed, seen, last = [], set(), -math.inf
    for position, row in enumerate(rows):
        event_id = row[0].get("event_id")
        if isinstance(event_id, (str, int)):
            if event_id in seen:
                continue
            seen.add(event_id)
        sequence = row[0].get("sequence")
        if not isinstance(sequence, int) or isinstance(sequence, bool):
            sequence = None
        else:
            last = sequence
        keyed.append(((last, sequence is None, position), row))
    keyed.sort(key=lambda pair: pair[0])
    return [row for _, row in keyed]


def _draft(conversation_id: str, rows: Iterable[Row]) -> Draft:
    draft = Draft(conversation_id)
    for event, item, path in ordered(rows):
        draft.add(event, item, path)
    return draft


def _row(item: Item, path: JsonPath = ()) -> Row:
    try:
        return native_event(item.value if not path else _at(item.value, path), path), item, path
    except ItemProblem as err:
        raise LoadError([item.problem(str(err), err.path)]) from None


def _at(value: Any, path: JsonPath) -> Any:
    for step in path:
        value = value[step]
    return value


def _conversation_of(obj: Any) -> str | None:
    if isinstance(obj, dict):
        for key in ("conversation_id", "sender_id"):
            if isinstance(obj.get(key), str):
                return obj[key]
    return None


def _tracker(item: Item) -> Iterator[Draft]:
    tracker = item.value
    events = expect(tracker["events"], list, "events", ("events",))
    rows = [_row(item, ("events", j)) for j in range(len(events))]
    cid = _conversation_of(tracker) or next((_conversation_of(e) for e in events if _conversation_of(e)), None)
    yield _draft(cid or f"conversation-{item.index + 1}", rows)


def _is_tracker(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("events"), list) and "event" not in value


@dataclass(frozen=True)
class _Group:
    """One conversation of an event stream: its events in memory, or where its lines are in a JSONL file."""

    conversation_id: str
    items: tuple[Item, ...] = ()
    path: Path | None = None
    lines: tuple[tuple[int, int], ...] = ()  # (byte offset, line number) of each event line

    def rows(self) -> Iterator[Row]:
        yield from (_row(item) for item in self.items)
        if self.path is None:
            return
        with self.path.open("rb") as handle:
            for start, lineno in self.lines:
                handle.seek(start)
                yield _row(_line_item(handle.readline(), str(self.path), lineno))


def _grouped(items: Iterable[Item]) -> Iterator[_Group]:
    """A stream of events already in memory (a JSON list), grouped by conversation."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(_conversation_of(item.value) or "conversation-1", []).append(item)
    for cid, found in groups.items():
        yield _Group(cid, items=tuple(found))


def _jsonl_stream(path: Path) -> Iterator[_Group]:
    """A JSONL stream of events: only the line offsets of each conversation are held while grouping."""
    where: dict[str, list[tuple[int, int]]] = {}
    with path.open("rb") as handle:
        offset = 0
        for lineno, raw in enumerate(handle, 1):
            if raw.strip():
                try:
                    cid = _conversation_of(orjson.loads(raw))
                except orjson.JSONDecodeError:
                    cid = None  # reported with its position when the line is read back
                where.setdefault(cid or "conversation-1", []).append((offset, lineno))
            offset += len(raw)
    for cid, lines in where.items():
        yield _Group(cid, path=path, lines=tuple(lines))


def _line_item(raw: bytes, file: str, lineno: int) -> Item:
    text = decode_utf8(raw, file, lineno)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise json_load_error(json_error_at(text), file, text, lineno) from None
    if _is_tracker(value):
        raise LoadError.one("this line mixes containers: a tracker object in a stream of events", file, lineno, 1)
    return Item(value, file, text, 0, lineno, 0)


def _convert(unit: Item | _Group) -> Iterator[Draft]:
    if isinstance(unit, Item):
        yield from _tracker(unit)
    else:
        yield _draft(unit.conversation_id, unit.rows())


def _units(path: Path) -> Iterator[Item | _Group]:
    if looks_like_jsonl(path, objects_only=True):
        with path.open("rb") as handle:
            opening = next(line for line in handle if line.strip())
        yield from file_items(path) if _is_tracker(orjson.loads(opening)) else _jsonl_stream(path)
        return
    items = file_items(path)
    first = next(items, None)
    if first is None:
        return
    if _is_tracker(first.value):
        yield first
        yield from items
    else:
        yield from _grouped([first, *items])


def read(path: str | Path) -> Iterator[ImportedConversation]:
    """Every conversation of a Mantle ProtoJSON file, converted in `sequence` order."""
    # A _Group places no problem: its rows raise a placed LoadError themselves, never ItemProblem (`_row`).
    return convert_items(_units(Path(path)), _convert, str(path))  # type: ignore[type-var]  # see above
