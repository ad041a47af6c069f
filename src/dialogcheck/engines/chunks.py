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

import io
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import LoadError
from ..events.load import _is_tracker, _read_document, _read_jsonl, conversation_files, iter_conversation_file, lines_look_like_jsonl
from ..events.model import Conversation
from .storage import file_size, is_uri, open_binary, read_through_line_end

#: Input bytes per chunk of the local engine: a tenth of a second of checking, small beside the work it carries.
CHUNK_BYTES = 1 << 20
PARQUET_SUFFIXES = (".parquet",)
#: A conversation line placed before a chunk's own lines, so the native reader takes the chunk as a JSONL of
#: conversations (as the file's first line said) and names every conversation `file#id`; dropped once read.
_OPENING_LINE = b'{"events": []}\n'


def _cannot_read(err: OSError, file: str) -> LoadError:
    return LoadError.one(f"cannot read file: {err.strerror or err}", file)


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
                handle.seek(self.start - 1)
                begin = self.start - 1 + len(read_through_line_end(handle))
            if begin >= self.end:
                return b""
            handle.seek(begin)
            data = handle.read(self.end - begin)
            if data and not data.endswith(b"\n"):
                data += read_through_line_end(handle)
            return data

    def read(self) -> Iterator[Conversation]:
        try:
            data = self._bytes()
        except OSError as err:
            raise _cannot_read(err, self.file) from None
        lines = itertools.chain([(0, _OPENING_LINE)], enumerate(io.BytesIO(data), self.first_line))
        conversations = _read_jsonl(lines, self.file)
        for conversation in itertools.islice(conversations, 1, None):
            yield conversation


@dataclass(frozen=True)
class WholeFile:
    """A file read whole by the native reader: a JSON document, a JSONL of events, or a small JSONL."""

    file: str
    path: str

    def read(self) -> Iterator[Conversation]:
        if self.path == self.file and not is_uri(self.path):
            yield from iter_conversation_file(self.path)
            return
        try:
            with open_binary(self.path) as handle:
                data = handle.read()
        except OSError as err:
            raise _cannot_read(err, self.file) from None
        if lines_look_like_jsonl(io.BytesIO(data)):  # the native readers themselves: read as the whole file would be
            yield from _read_jsonl(enumerate(io.BytesIO(data), 1), self.file)
        else:
            yield from _read_document(data, self.file)


@dataclass(frozen=True)
class ImportedFile:
    """A file in another tool's format (`--input-format`), converted by its importer."""

    file: str
    input_format: str

    def read(self) -> Iterator[Conversation]:
        from ..importers import import_file

        for imported in import_file(self.file, self.input_format):
            yield imported.conversation


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


def _first_line(handle) -> bytes:
    while True:
        line = read_through_line_end(handle)
        if not line or line.strip():
            return line


def holds_conversation_lines(path: str) -> bool:
    """Whether the file is a JSONL of conversations: its first line is a tracker object on its own."""
    with open_binary(path) as handle:
        line = _first_line(handle)
    try:
        return _is_tracker(orjson.loads(line))
    except orjson.JSONDecodeError:
        return False  # read whole, so the error is reported as the native reader reports it


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


def input_files(paths: Iterable[str], *, with_parquet: bool) -> list[Path]:
    """`conversation_files` of the paths, plus the Parquet files in folders when they are read."""
    found: list[Path] = []
    for raw in paths:
        native = conversation_files([raw])
        path = Path(raw)
        if with_parquet and path.is_dir():
            native = sorted(native + [p for p in path.rglob("*") if p.is_file() and p.suffix in PARQUET_SUFFIXES])
        found.extend(native)
    return found


def plan_local(files: Iterable[Path], input_format: str | None, chunk_bytes: int = CHUNK_BYTES):
    """Every chunk of local files, in input order (lazily: a big file is scanned as its chunks are taken)."""
    for path in files:
        file = str(path)
        try:
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
        yield from local_line_ranges(file, file, chunk_bytes) if split else [WholeFile(file, file)]
