"""Cut conversation files into chunks that a worker reads on its own, with the positions one reader would give.

A JSONL of conversations (one tracker object a line) bigger than a chunk is
cut into byte ranges; a chunk holds the lines that *start* in its range, so
ranges need no alignment when planned and every line lands in exactly one
chunk. The planner counts newlines as it goes, so each chunk knows the
number of its first line: errors (`file:line:col`) and the `file#line` names
of conversations without an id come out as reading the whole file gives
them. Other files (a JSON document, a JSONL of events, which is one
conversation, a file in an imported format) are one chunk each. The plan
depends on file sizes only, never on how many workers there are, so every
engine and every `--jobs` reads the same chunks.
"""

from __future__ import annotations

import atexit
import io
import itertools
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

import orjson

from .._paths import files_in, read_regular, refuse_link_out
from ..environment.bounds import MAX_STATE_BYTES
from ..errors import LoadError, Problem
from ..events import bounds
from ..events.load import CONVERSATION_SUFFIXES, conversation_files, is_tracker, iter_conversation_file, lines_look_like_jsonl, read_conversations, read_jsonl
from ..events.model import Conversation, World
from ..results.files import slug_folder
from ..results.plan import read_plan
from .storage import file_size, is_uri, open_binary, read_through_line_end

#: Input bytes per chunk of the local engine: a tenth of a second of checking, small beside the work it carries.
CHUNK_BYTES = 1 << 20
PARQUET_SUFFIXES = (".parquet",)
#: A conversation line placed before a chunk's own lines, so the native reader takes the chunk as a JSONL of
#: conversations (as the file's first line said) and names every conversation `file#id`; dropped once read.
_OPENING_LINE = b'{"events": [{"event": "user", "text": ""}]}\n'
#: How CONVERSATIONS names standard input, and how errors and conversation names call it.
STDIN, STDIN_NAME = "-", "<stdin>"
#: What `dialogcheck run` writes (results/files.py): `plan.json` on top, each run's events in `<slug>/run_N.events.jsonl`.
RUN_PLAN = "plan.json"
RUN_EVENTS = re.compile(r"run_(\d+)\.events\.jsonl")


def _cannot_read(err: OSError, file: str) -> LoadError:
    return LoadError.of_os("cannot read file", err, file)


def _conversation_lines(data: bytes, file: str, first_line: int) -> Iterator[Conversation]:
    """The conversations of whole lines of a JSONL of conversations, the first of them line `first_line`."""
    lines = itertools.chain([(0, _OPENING_LINE)], enumerate(io.BytesIO(data), first_line))
    return itertools.islice(read_jsonl(lines, file), 1, None)


@dataclass(frozen=True)
class LineRange:
    """The lines of a JSONL of conversations that start in bytes [start, end) of the file."""

    file: str  # the name errors and conversation names use, as the user gave it
    path: str  # where a worker reads it (absolute, or a URI)
    start: int
    end: int
    first_line: int  # the number of the first line starting at or after `start`

    def _bytes(self) -> bytes:
        with open_binary(self.path) as handle:
            begin = 0
            if self.start:
                handle.seek(self.start - 1)  # past the line running into the range: only a newline before `end` matters
                begin = self.start - 1 + len(read_through_line_end(handle, self.end - self.start + 1))
            if begin >= self.end:
                return b""
            handle.seek(begin)
            data = handle.read(self.end - begin)
            if data and not data.endswith(b"\n"):  # the last line, to its end; past the bound the reader refuses it
                started = len(data) - data.rfind(b"\n") - 1
                data += read_through_line_end(handle, max(bounds.MAX_RECORD_BYTES + 1 - started, 0))
            return data

    def read(self) -> Iterator[Conversation]:
        try:
            data = self._bytes()
        except OSError as err:
            raise _cannot_read(err, self.file) from None
        yield from _conversation_lines(data, self.file, self.first_line)


@dataclass(frozen=True)
class LineBlock:
    """Whole lines of a JSONL of conversations read from a pipe, held in memory so a worker can take them."""

    file: str
    first_line: int
    data: bytes

    def read(self) -> Iterator[Conversation]:
        return _conversation_lines(self.data, self.file, self.first_line)


@dataclass(frozen=True)
class HeldFile:
    """All of a piped input that is not a JSONL of conversations (a JSON document, a JSONL of events), held."""

    file: str
    data: bytes

    def read(self) -> Iterator[Conversation]:
        return read_conversations(io.BytesIO(self.data), self.file)


def held_bytes(chunk) -> int:
    """How much of the input a planned chunk holds in memory (a pipe's lines); chunks of files hold none."""
    return len(chunk.data) if isinstance(chunk, (LineBlock, HeldFile)) else 0


@dataclass(frozen=True)
class WholeFile:
    """A file read whole by the native reader: a JSON document, a JSONL of events, or a small JSONL.

    `scenario` names the scenario of conversations that name none (a run's events, by the folder `run` wrote them to).
    """

    file: str
    path: str
    scenario: str | None = None

    def read(self) -> Iterator[Conversation]:
        world = run_world(self.path) if self.scenario is not None else None
        for conversation in self._conversations():
            if self.scenario is not None and not conversation.scenario:
                conversation = replace(conversation, scenario=self.scenario)
            yield conversation if world is None else replace(conversation, world=world)

    def _conversations(self) -> Iterator[Conversation]:
        if not is_uri(self.path):
            yield from iter_conversation_file(self.path, name=self.file)
            return
        try:
            with open_binary(self.path) as handle:
                data = handle.read()
        except OSError as err:
            raise _cannot_read(err, self.file) from None
        yield from read_conversations(io.BytesIO(data), self.file)


@dataclass(frozen=True)
class ImportedFile:
    """A file in another tool's format (`--input-format`), converted by its importer.

    `path`, when set, is where a pipe's bytes were saved (importers read a file more than once); the
    conversations and errors are named by `file` all the same, and the copy is removed once read.
    """

    file: str
    input_format: str
    path: str | None = None

    def read(self) -> Iterator[Conversation]:
        from ..importers import import_file

        if self.path is None:
            for imported in import_file(self.file, self.input_format):
                yield imported.conversation
            return
        try:
            for imported in import_file(self.path, self.input_format):
                conversation = imported.conversation
                yield _renamed(conversation, self.path, self.file)
        except LoadError as err:
            raise LoadError(Problem(p.message.replace(self.path, self.file), self.file if p.file == self.path else p.file, p.line, p.column) for p in err.problems) from None
        finally:
            _remove(self.path)


def _renamed(conversation: Conversation, path: str, file: str) -> Conversation:
    return replace(conversation, source=file + conversation.source[len(path):]) if conversation.source.startswith(path) else conversation


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


@dataclass(frozen=True)
class Unreadable:
    """A file found bad while planning: its error is raised where the file stands in the input order."""

    file: str
    error: LoadError

    def read(self) -> Iterator[Conversation]:
        raise self.error
        yield


@dataclass(frozen=True)
class ReadChunk:
    """A chunk already read: its conversations, kept in memory so a batch that needs them twice parses them once."""

    conversations: tuple[Conversation, ...]

    @classmethod
    def of(cls, chunk) -> ReadChunk:
        return cls(tuple(chunk.read()))

    def read(self) -> Iterator[Conversation]:
        return iter(self.conversations)


def _is_tracker_line(line: bytes) -> bool:
    try:
        return is_tracker(orjson.loads(line))
    except orjson.JSONDecodeError:
        return False  # read whole, so the error is reported as the native reader reports it


def _first_line(handle) -> bytes:
    while True:
        line = read_through_line_end(handle, bounds.MAX_RECORD_BYTES + 1)
        if not line or line.strip():
            return line


def holds_conversation_lines(path: str) -> bool:
    """Whether the file is a JSONL of conversations: its first line is a tracker object on its own."""
    with open_binary(path) as handle:
        return _is_tracker_line(_first_line(handle))


def first_line_number(start: int, newlines_before: int, newline_just_before: bool) -> int:
    """The number of the first line starting at or after byte `start`, from the newlines in [0, start)."""
    return 1 if start == 0 else 2 + newlines_before - newline_just_before


def local_line_ranges(file: str, path: str, chunk_bytes: int) -> Iterator[LineRange]:
    """Chunks of a local JSONL of conversations, each planned as soon as the newlines before it are counted."""
    newlines, last = 0, b""
    start = 0
    with open(path, "rb") as handle:
        while block := handle.read(chunk_bytes):
            yield LineRange(file, path, start, start + len(block), first_line_number(start, newlines, last == b"\n"))
            newlines += block.count(b"\n")
            last = block[-1:]
            start += len(block)


def is_stream(path: Path) -> bool:
    """Whether an input can be read only once, from its start: standard input (`-`), a pipe or FIFO, a device,
    or a name that means a descriptor of this process (`/dev/stdin`, `/dev/fd/N`, a process substitution)."""
    if str(path) == STDIN or str(path).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # reported when it is read
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def input_name(path: Path) -> str:
    """How errors and conversation names call an input."""
    return STDIN_NAME if str(path) == STDIN else str(path)


def input_files(paths: Iterable[str], *, with_parquet: bool) -> list[Path]:
    """`conversation_files` of the paths, plus the Parquet files in folders when they are read; `-` is
    standard input, which can be read once only."""
    found: list[Path] = []
    for raw in paths:
        if raw == STDIN:
            if Path(STDIN) in found:
                raise LoadError.one("standard input is given twice: it can be read once only", STDIN_NAME)
            found.append(Path(STDIN))
            continue
        path = Path(raw)
        runs = run_events(path)
        if runs is not None:
            found.extend(runs)
            continue
        found.extend(conversation_files([raw], CONVERSATION_SUFFIXES + PARQUET_SUFFIXES if with_parquet else CONVERSATION_SUFFIXES))
    return found


def run_events(folder: Path) -> list[Path] | None:
    """The recorded events of every run in a results folder of `dialogcheck run` (by scenario, then run
    number), not its other files; None when `folder` is not one."""
    if not (folder / RUN_PLAN).is_file():
        return None
    found = [p for p in files_in(folder, (".jsonl",)) if p.parent.parent == folder and RUN_EVENTS.fullmatch(p.name)]
    return sorted(found, key=lambda p: (p.parent.name, int(RUN_EVENTS.fullmatch(p.name)[1])))  # type: ignore[index]  # `found` holds only names it matched


def unfinished_runs(folder: Path) -> tuple[list[tuple[str, int]], int] | None:
    """The planned runs of a results folder of `dialogcheck run` that never finished (no recorded events: a
    killed batch), as (slug, number), with how many runs it planned; None when `folder` is not one (or no path
    the system takes, which reading the input says)."""
    if not os.path.isfile(folder / RUN_PLAN):
        return None
    refuse_link_out(folder, folder / RUN_PLAN)
    plan = read_plan(folder / RUN_PLAN)
    missing = []
    for slug, number in plan.run_keys():
        events = folder / slug_folder(slug) / f"run_{number}.events.jsonl"
        refuse_link_out(folder, events)  # a scenario's folder linked elsewhere too, which walking the folder would skip unsaid
        if not events.is_file():
            missing.append((slug, number))
    return missing, plan.total_runs


#: The largest `run_N.json` read for the state its run's environment recorded (two states, each bounded).
MAX_RUN_FILE_BYTES = 2 * MAX_STATE_BYTES + (1 << 20)


def run_world(events_path: str) -> World | None:
    """The environment state a run recorded in its `run_N.json`, beside its events: the state it began and ended
    with, to judge state checks again; None when it had no environment, or the file cannot be read as one."""
    path = Path(events_path).with_name(Path(events_path).name.removesuffix(".events.jsonl") + ".json")
    try:
        document = orjson.loads(read_regular(path, MAX_RUN_FILE_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return None
    recorded = document.get("environment") if isinstance(document, dict) else None
    if not isinstance(recorded, dict) or not isinstance(recorded.get("name"), str):
        return None
    if not isinstance(recorded.get("initial_state"), dict) or not isinstance(recorded.get("final_state"), dict):
        return None
    digest = recorded.get("digest")
    return World(recorded["name"], orjson.dumps(recorded["initial_state"]), orjson.dumps(recorded["final_state"]), digest=digest if isinstance(digest, str) else "")


def run_scenario(path: Path) -> str | None:
    """The slug a run's events file is filed under in a results folder (the folder `run` named after it)."""
    if RUN_EVENTS.fullmatch(path.name) and (path.parent.parent / RUN_PLAN).is_file():
        return path.parent.name
    return None


def plan_local(files: Iterable[Path], input_format: str | None, chunk_bytes: int = CHUNK_BYTES):
    """Every chunk of local files, in input order (lazily: a big file is scanned as its chunks are taken,
    and a pipe read as they are)."""
    for path in files:
        file = input_name(path)
        try:
            if is_stream(path):
                yield from _plan_stream(path, file, input_format, chunk_bytes)
            else:
                yield from _plan_file(path, file, input_format, chunk_bytes)
        except LoadError as err:
            yield Unreadable(file, err)


def _plan_file(path: Path, file: str, input_format: str | None, chunk_bytes: int):
    if input_format:
        yield ImportedFile(file, input_format)
    elif path.suffix in PARQUET_SUFFIXES:
        from .parquet import row_groups

        yield from list(row_groups(file, file))
    else:
        try:
            split = file_size(file) > chunk_bytes and holds_conversation_lines(file)
        except OSError as err:
            raise _cannot_read(err, file) from None
        yield from local_line_ranges(file, file, chunk_bytes) if split else [WholeFile(file, file, run_scenario(path))]


def _plan_stream(path: Path, file: str, input_format: str | None, chunk_bytes: int):
    """The chunks of an input read once, in memory as they are planned; the container is told from its
    first non-blank line, as for a file."""
    if str(path) == STDIN:
        yield from _stream_chunks(sys.stdin.buffer, file, input_format, chunk_bytes)
        return
    try:
        with open(path, "rb", buffering=bounds.READ_BUFFER) as handle:
            yield from _stream_chunks(handle, file, input_format, chunk_bytes)
    except OSError as err:
        raise _cannot_read(err, file) from None


def _stream_chunks(handle: BinaryIO, file: str, input_format: str | None, chunk_bytes: int):
    if input_format:
        yield ImportedFile(file, input_format, _spool(handle))
        return
    lines = bounds.bounded_lines(handle, file)
    head = bounds.first_lines(lines)
    first = head[-1][1] if head else b""
    if _is_tracker_line(first):
        yield from _line_blocks(itertools.chain(head, lines), file, chunk_bytes)
    elif lines_look_like_jsonl([first]):  # one conversation, one event a line
        yield HeldFile(file, b"".join(raw for _, raw in itertools.chain(head, lines)))
    else:
        yield HeldFile(file, bounds.read_whole(handle, file, b"".join(raw for _, raw in head)))


def _line_blocks(lines: Iterable[tuple[int, bytes]], file: str, chunk_bytes: int) -> Iterator[LineBlock]:
    block: list[bytes] = []
    size, first = 0, 0
    for lineno, raw in lines:
        if not block:
            first = lineno
        block.append(raw)
        size += len(raw)
        if size >= chunk_bytes:
            yield LineBlock(file, first, b"".join(block))
            block, size = [], 0
    if block:
        yield LineBlock(file, first, b"".join(block))


def _spool(handle: BinaryIO) -> str:
    """A pipe's bytes copied to a temporary file, for an importer that reads its file more than once."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix="dialogcheck-input.", suffix=".tmp")
    atexit.register(_remove, name)  # should it never be read (bad input earlier stops the check)
    with os.fdopen(fd, "wb") as out:
        while block := handle.read(1 << 20):
            out.write(block)
    return name
