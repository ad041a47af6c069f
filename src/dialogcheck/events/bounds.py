"""How much of a conversation file one JSON record may take, and reading lines within that bound.

A record is a line of JSONL or a JSON document read whole. Reading stops at the bound instead of at
the end of memory, so a line with no end (`check /dev/zero`) is refused in a second, naming its file
and line, before it is held.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from ..errors import LoadError

#: The most bytes one JSON record may take. Real tracker lines reach tens of MB; this is far past them.
MAX_RECORD_BYTES = 256 * 2**20
#: The deepest nesting native events may hold once written: orjson, which writes every results and
#: events file, refuses deeper values (a file may be read up to its reading limit, 1,024).
MAX_WRITTEN_DEPTH = 254
#: The buffer a conversation file is read through: past a production log's usual line, which `readline` then
#: finds with one search of the buffer (a line longer than the buffer is gathered piece by piece, byte by byte).
READ_BUFFER = 2**20


def too_long(file: str, line: int) -> LoadError:
    """The error for a line (or a document read whole) past `MAX_RECORD_BYTES`."""
    return LoadError.one(
        f"line {line} is longer than {MAX_RECORD_BYTES // 2**20} MiB, the most one JSON record may be"
        " (is this a conversation file?)",
        file,
        line,
    )


def bounded_lines(handle: BinaryIO, file: str, first_line: int = 1) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each line read from `handle`; a line past `MAX_RECORD_BYTES` is refused before it is held."""
    lineno = first_line
    while raw := handle.readline(MAX_RECORD_BYTES + 1):
        if len(raw) > MAX_RECORD_BYTES:
            raise too_long(file, lineno)
        yield lineno, raw
        lineno += 1


def read_whole(handle: BinaryIO, file: str, held: bytes = b"") -> bytes:
    """The rest of `handle` after `held` (what was read already), refused past `MAX_RECORD_BYTES` in all."""
    data = held + handle.read(MAX_RECORD_BYTES + 1 - len(held))
    if len(data) > MAX_RECORD_BYTES:
        raise LoadError.one(
            f"the file is larger than {MAX_RECORD_BYTES // 2**20} MiB, the most a JSON document read whole may be:"
            " write it as JSONL, one conversation a line",
            file,
        )
    return data


def first_lines(lines: Iterator[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """The lines up to and including the first non-blank one: what tells the container."""
    head = []
    for numbered in lines:
        head.append(numbered)
        if numbered[1].strip():
            break
    return head
