"""Read conversation files of every container docs/concepts.md, the conversation record accepts.

The container is detected from content: a JSON list of events, a tracker
object with `events`, JSONL of events, or JSONL of tracker objects (one
conversation a line). Errors name the file, line and column.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property, partial
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from .._paths import files_in
from ..errors import LoadError, Problem, ProblemLog, decode_utf8
from . import bounds
from .fast import TrackerDecoder
from .formats import FORMAT_NAMES, NATIVE_FORMAT, guess_format
from .model import Conversation
from .parse import EventFieldError, EventReader, json_type
from .typos import NameWarning

CONVERSATION_SUFFIXES = (".json", ".jsonl", ".ndjson")
#: A conversation without events passes every "never" check: it cannot be judged, so it is bad input.
EMPTY_FILE = "the file holds no events: expected JSON or JSONL event objects"
NO_EVENTS = "`events` is empty: a conversation without events cannot be judged (expected at least one event object)"
#: One decoder for every file read, so the event types it learns carry over.
_TRACKERS = TrackerDecoder()


@dataclass(frozen=True)
class _Located:
    """A JSON text and a way to turn an offset in it into a line and column.

    Lines of a JSONL file arrive as bytes that orjson has already checked are
    UTF-8; they are decoded only if an error needs a column in them.
    """

    data: str | bytes
    first_line: int = 1

    @cached_property
    def text(self) -> str:
        return self.data if isinstance(self.data, str) else self.data.decode("utf-8")

    def position(self, offset: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, offset)
        start = self.text.rfind("\n", 0, offset) + 1
        return self.first_line + line, offset - start + 1


def _json_error(err: json.JSONDecodeError, file: str, located: _Located) -> LoadError:
    """At the bad character; an early end of data points just past the last one, not past the final newline."""
    offset = min(err.pos, len(located.text.rstrip()))
    line, column = located.position(offset)
    return LoadError.one(f"invalid JSON: {err.msg}", file, line, column)


def json_load_error(err: json.JSONDecodeError, file: str, text: str, first_line: int = 1) -> LoadError:
    """The load error for broken JSON in `text` (whose first line is `first_line` of the file)."""
    return _json_error(err, file, _Located(text, first_line))


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _array_offsets(text: str, i: int, decoder: json.JSONDecoder) -> list[int]:
    offsets = []
    i = _skip_ws(text, i + 1)
    while i < len(text) and text[i] != "]":
        offsets.append(i)
        _, i = decoder.raw_decode(text, i)
        i = _skip_ws(text, i)
        if i < len(text) and text[i] == ",":
            i = _skip_ws(text, i + 1)
    return offsets


def event_offsets(text: str) -> list[int]:
    """Where each event starts in a JSON list or tracker object (used only to report errors).

    The standard library's parser recurses; past its depth (orjson reads up to 1,024 levels) no offsets are
    found, and an error points at the start of the document instead of at the event.
    """
    try:
        return _event_offsets(text)
    except RecursionError:
        return []


def _event_offsets(text: str) -> list[int]:
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if i < len(text) and text[i] == "[":
        return _array_offsets(text, i, decoder)
    if i < len(text) and text[i] == "{":
        i = _skip_ws(text, i + 1)
        while i < len(text) and text[i] != "}":
            key, i = decoder.raw_decode(text, i)
            i = _skip_ws(text, _skip_ws(text, i) + 1)  # past the colon
            if key == "events" and text[i] == "[":
                return _array_offsets(text, i, decoder)
            _, i = decoder.raw_decode(text, i)
            i = _skip_ws(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
    return []


def _field_problem(
    err: EventFieldError, file: str, located: _Located, start: int | None, end: int | None, label: str
) -> Problem:
    """Point at the field inside the event when it can be found, else at the event."""
    return Problem(f"{label}: {err}", file, *_name_position(err.field, located, start, end))


def _name_position(name: str, located: _Located, start: int | None, end: int | None) -> tuple[int, int]:
    """Line and column of `"name"` inside the event text starting at `start`, else of the event itself."""
    if start is None:
        return located.first_line, 1
    found = located.text.find(f'"{name}"', start, len(located.text) if end is None else end)
    return located.position(found if found >= 0 else start)


def _warnings_at(
    warnings: Iterable[NameWarning], file: str, located: _Located, offsets: list[int] | None = None
) -> tuple[Problem, ...]:
    """Each probable typo at the name in its event (`offsets`: where each event starts, found when needed)."""
    found = []
    for warning in warnings:
        if offsets is None:
            offsets = event_offsets(located.text)
        i = warning.index
        start = offsets[i] if i < len(offsets) else None
        end = offsets[i + 1] if i + 1 < len(offsets) else None
        found.append(Problem(warning.message, file, *_name_position(warning.name, located, start, end)))
    return tuple(found)


def _events_to_conversation(
    objects: list[Any], file: str, located: _Located, source: str, conversation_id: str | None, offsets=None, **fields: Any
) -> Conversation:
    reader = EventReader()
    problems = ProblemLog()
    for i, obj in enumerate(objects):
        try:
            reader.add(obj)
        except EventFieldError as err:
            if problems.counting:  # past the limit: only how many (each place costs a scan of the text before it)
                problems.count_one()
                continue
            if offsets is None:
                offsets = event_offsets(located.text)
            start = offsets[i] if i < len(offsets) else None
            end = offsets[i + 1] if i + 1 < len(offsets) else None
            problems.add(_field_problem(err, file, located, start, end, f"event {i}"))
    if problems:
        raise problems.error()
    warnings = _warnings_at(reader.warnings, file, located, offsets) if reader.warnings else ()
    return Conversation(tuple(reader.events), source, conversation_id, objects, warnings=warnings, **fields)


def _tracker_id(obj: Mapping[str, Any]) -> str | None:
    for key in ("sender_id", "conversation_id"):
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return None


def _tracker(obj: dict, file: str, located: _Located, source: str) -> Conversation:
    events = obj["events"]
    if not isinstance(events, list):
        line, column = located.position(max(located.text.find('"events"'), 0))
        raise LoadError.one(f"`events` must be a list of event objects, got {json_type(events)}", file, line, column)
    if not events:
        line, column = located.position(max(located.text.find('"events"'), 0))
        raise LoadError.one(NO_EVENTS, file, line, column)
    scenario = obj.get("scenario")
    if scenario is not None and not isinstance(scenario, str):
        line, column = located.position(max(located.text.find('"scenario"'), 0))
        raise LoadError.one(f"`scenario` must be a string (the slug of a scenario), got {json_type(scenario)}", file, line, column)
    return _events_to_conversation(
        events, file, located, source, _tracker_id(obj), scenario=scenario, place=(file, located.first_line)
    )


def is_tracker(obj: Any) -> bool:
    """Whether a JSON value is a tracker object (`{"events": [...]}`), not an event."""
    return isinstance(obj, dict) and "events" in obj and "event" not in obj


def _read_document(data: bytes, file: str) -> Iterator[Conversation]:
    text = decode_utf8(data, file)
    located = _Located(text)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if _second_line_is_object(data):  # JSONL whose first line is the broken one
            yield from read_jsonl(enumerate(data.splitlines(keepends=True), 1), file)
            return
        raise _json_error(err, file, located) from None
    if doc == []:
        raise LoadError.one(EMPTY_FILE, file)
    if isinstance(doc, list):
        yield _events_to_conversation(doc, file, located, file, None, place=(file, 1))
    elif is_tracker(doc):
        yield _tracker(doc, file, located, file)
    elif isinstance(doc, dict):
        yield _events_to_conversation([doc], file, located, file, None, offsets=[0], place=(file, 1))
    else:
        raise LoadError.one(f"expected a list of events or an object with `events`, got {json_type(doc)}", file)


def read_jsonl(lines: Iterable[tuple[int, bytes]], file: str) -> Iterator[Conversation]:
    """JSONL: events one a line, or tracker objects one a line (yielded as they are read).

    Conversations of a batch are named `file#sender_id` (or `file#line`); a file
    holding just one is named by the file, as a pretty-printed tracker would be.
    """
    mode: str | None = None
    reader = EventReader()
    problems = ProblemLog()
    pending: Conversation | None = None
    recorded: list[Any] = []  # the event objects of a one-event-a-line file
    warnings: list[Problem] = []  # their probable typos, each placed as its line is read
    batch = 0
    seen = 0  # event objects read, failed ones included, so `event N` is the N-th object of the file
    for lineno, raw in lines:
        if len(raw) > bounds.MAX_RECORD_BYTES:  # lines read from memory (a chunk, a download) were not bounded yet
            problems.add(bounds.too_long(file, lineno).problems[0])
            break
        if mode == "conversations":
            decoded = _TRACKERS.decode(raw)  # the hot path; None sends the line the general way below
            if decoded is not None and decoded.events:  # no events: the general way says where
                if pending is not None:
                    yield pending
                cid = decoded.conversation_id
                placed = _warnings_at(decoded.warnings, file, _Located(raw, lineno)) if decoded.warnings else ()
                pending = Conversation(decoded.events, f"{file}#{cid or lineno}", cid, raw, decoded.scenario, placed, (file, lineno))
                batch += 1
                continue
        located = _Located(raw, lineno)
        try:
            obj = orjson.loads(raw)  # the hot path: no str made of the line unless it is needed
        except orjson.JSONDecodeError as err:
            text = decode_utf8(raw, file, lineno)  # bad UTF-8 is reported at its byte
            if not text.strip():
                continue
            problems.add(_json_error(err, file, _Located(text, lineno)).problems[0])
            break
        line_mode = "conversations" if is_tracker(obj) else "events"
        if mode is None:
            mode = line_mode
        elif mode != line_mode:
            expected = "a conversation object with `events`" if mode == "conversations" else "one event object"
            problems.add(Problem(f"this line mixes containers: expected {expected} as on the first line", file, lineno, 1))
            break
        if mode == "conversations":
            # One line behind, so that a file of a single conversation is named by the file alone.
            if pending is not None:
                yield pending
            cid = _tracker_id(obj)
            pending = _tracker(obj, file, located, f"{file}#{cid or lineno}")
            _TRACKERS.learn(pending.events, pending.recorded)  # type: ignore[arg-type]  # a tracker's: its list of event objects
            batch += 1
            continue
        seen += 1
        recorded.append(obj)
        try:
            reader.add(obj)
        except EventFieldError as err:
            problems.add(_field_problem(err, file, located, 0, None, f"event {seen - 1}"))
        for warning in reader.warnings[len(warnings) :]:  # this line's typos, placed in this line
            warnings.append(Problem(warning.message, file, *_name_position(warning.name, located, 0, None)))
    if problems:
        if pending is not None:  # a conversation before the bad line is judged, as each one before it was
            yield pending
        raise problems.error()
    if pending is not None:
        yield pending if batch > 1 else replace(pending, source=file)
    if mode == "events":
        yield Conversation(tuple(reader.events), file, None, recorded, warnings=tuple(warnings), place=(file, 1))
    elif mode is None:
        raise LoadError.one(EMPTY_FILE, file)


def read_conversations(handle: BinaryIO, file: str) -> Iterator[Conversation]:
    """Every conversation of an open file, read once (a pipe gives its bytes once): the container is told
    from the first non-blank line, which then goes on to the reader with the rest."""
    lines = bounds.bounded_lines(handle, file)
    head = bounds.first_lines(lines)
    if lines_look_like_jsonl(raw for _, raw in head):
        first = next(((lineno, raw) for lineno, raw in head if raw.strip()), (1, b""))
        conversations, hint = read_jsonl(itertools.chain(head, lines), file), partial(_another_format, *first, file)
    else:
        data = bounds.read_whole(handle, file, b"".join(raw for _, raw in head))
        conversations, hint = _read_document(data, file), partial(_another_document_format, data, file)
    try:
        yield from conversations
    except LoadError as err:
        raise hint() or err from None


def _another_format(lineno: int, raw: bytes, file: str) -> LoadError | None:
    """For a JSONL file refused as native events: one error saying the format its first line is in, if another."""
    try:
        item = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return _format_hint(item, file, lineno, len(raw) - len(raw.lstrip()) + 1)


def _another_document_format(data: bytes, file: str) -> LoadError | None:
    """For a JSON document refused as native events: one error saying the format its first item is in, if another."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(doc, list):
        return _format_hint(doc, file, 1, 1)
    if not doc:
        return None
    offsets = event_offsets(decode_utf8(data, file))
    line, column = _Located(data).position(offsets[0]) if offsets else (1, 1)
    return _format_hint(doc[0], file, line, column)


def _format_hint(item: Any, file: str, line: int, column: int) -> LoadError | None:
    """"add `--input-format X`", said once, when the item looks like the files of format X (a native event never does)."""
    if isinstance(item, dict) and "event" in item:
        return None
    guess = guess_format(item)
    if guess is None or guess == NATIVE_FORMAT:
        return None
    message = f"this looks like {FORMAT_NAMES[guess]}, not native events: add `--input-format {guess}` (or convert it with `dialogcheck import --from {guess}`)"
    return LoadError.one(message, file, line, column)


def looks_like_jsonl(path: Path, *, objects_only: bool = False) -> bool:
    """JSONL when the first non-blank line is a complete JSON value (an object, with `objects_only`) on its own.

    An empty file counts as JSONL, unless `objects_only` (importers want an object there). A first line past
    `bounds.MAX_RECORD_BYTES` is a `LoadError`.
    """
    with path.open("rb") as handle:
        head = bounds.first_lines(bounds.bounded_lines(handle, str(path)))
    return lines_look_like_jsonl((raw for _, raw in head), objects_only=objects_only)


def lines_look_like_jsonl(lines: Iterable[bytes], *, objects_only: bool = False) -> bool:
    """`looks_like_jsonl` for lines from anywhere (a file already in memory, fetched from an object store)."""
    for raw in lines:
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped[:1] == b"[" or (objects_only and stripped[:1] != b"{"):
            return False
        try:
            orjson.loads(stripped)
        except orjson.JSONDecodeError:
            return False
        return True
    return not objects_only


def _second_line_is_object(data: bytes) -> bool:
    """Whether a file that fails as one document reads as JSONL with a broken first line."""
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(orjson.loads(lines[1]), dict)
    except orjson.JSONDecodeError:
        return False


def iter_conversation_file(path: str | Path, *, name: str | None = None) -> Iterator[Conversation]:
    """Every conversation in one file, read lazily where the container allows (and once: a pipe can be given).

    `name` is how errors and conversations call the file (default: its path).
    """
    path = Path(path)
    file = str(path) if name is None else name
    try:
        with path.open("rb", buffering=bounds.READ_BUFFER) as handle:
            yield from read_conversations(handle, file)
    except OSError as err:
        raise LoadError.of_os("cannot read file", err, file) from None


def conversation_files(paths: Iterable[str | Path], suffixes: tuple[str, ...] = CONVERSATION_SUFFIXES) -> list[Path]:
    """Expand folders into the conversation files they hold (sorted; none may link out of its folder), keeping files as given."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(files_in(path, suffixes))
        elif path.exists():
            found.append(path)
        else:
            raise LoadError.one("no such file or folder", str(path))
    return found


def iter_conversations(paths: Iterable[str | Path]) -> Iterator[Conversation]:
    for path in conversation_files(paths):
        yield from iter_conversation_file(path)


def load_conversation(source: str | Path | Iterable[Mapping[str, Any]]) -> Conversation:
    """One conversation from a file path or from event objects already in memory."""
    if isinstance(source, (str, Path)):
        conversations = list(iter_conversation_file(source))
        if len(conversations) != 1:
            raise LoadError.one(
                f"expected one conversation, found {len(conversations):,}: use iter_conversations for batch files",
                str(source),
            )
        return conversations[0]
    objects = list(source)
    return _events_to_conversation(objects, "<memory>", _Located(""), "<memory>", None, offsets=[])
