"""Where `dialogcheck check` sends results: stdout, as text or one JSON document, in input order.

The results come encoded from where they were checked (a worker, with
`--jobs`): a writer only puts the pieces in order and adds what spans the
whole batch: the blank lines between text blocks, the JSON document around
the conversations, the tally. `--jobs 1` and `--jobs N` write the same bytes.
"""

from __future__ import annotations

import sys

import orjson

from .._redact import mask_bytes
from ..checking import CheckTally
from ..engines.work import ChunkResult, Judged
from ..errors import LoadError
from ..report.json import dumps, load_error_document
from ..report.text import render_conversation, render_tally, render_warnings
from ..results.codec import check_summary_document
from .output import print_json, print_text


def _write_bytes(data: bytes) -> None:
    """Encoded results straight to stdout's byte stream, held secrets masked; writers flush stdout's text layer when they start."""
    data = mask_bytes(data)
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.write(data)
    else:
        sys.stdout.write(data.decode("utf-8"))


class TextWriter:
    """One block per conversation, a blank line between blocks, the batch line when there were several."""

    def __init__(self, tally: CheckTally):
        sys.stdout.flush()
        self.tally = tally
        self.written = 0

    def add(self, item: Judged | ChunkResult) -> None:
        if isinstance(item, ChunkResult):  # a chunk's blocks, already joined by blank lines
            _write_bytes(b"\n" + item.block if self.written else item.block)
            self.written += item.counts.total
            return
        if item.encoded is not None:  # piped: plain text, written straight through
            _write_bytes(b"\n" + item.encoded if self.written else item.encoded)
        else:  # a terminal: styled here
            if self.written:
                sys.stdout.write("\n")
            sys.stdout.flush()
            print_text(render_conversation(item.result))  # type: ignore[arg-type]
        self.written += 1

    def finish(self) -> None:
        sys.stdout.flush()
        if self.tally.counts.total > 1:
            print_text(render_tally(self.tally.counts))


class JsonWriter:
    """One conversation: its document. Several: `{"conversations": [...], "summary": {...}}`, written as they come."""

    def __init__(self, tally: CheckTally):
        sys.stdout.flush()
        self.tally = tally
        self.written = 0
        self.first: bytes | None = None  # held until a second conversation says the batch form is needed

    def add(self, item: Judged | ChunkResult) -> None:
        block = item.block if isinstance(item, ChunkResult) else item.encoded or b""
        count = item.counts.total if isinstance(item, ChunkResult) else 1
        if self.written == 0 and count == 1:
            self.first = block
        elif self.written == 0:
            _write_bytes(b'{"conversations": [\n' + block)
        elif self.written == 1:
            _write_bytes(b'{"conversations": [\n' + self.first + b",\n" + block)  # type: ignore[operator]
        else:
            _write_bytes(b",\n" + block)
        self.written += count

    @property
    def started(self) -> bool:
        """Whether the document has begun: a conversation is written, or held to be written."""
        return self.written > 0

    def fail(self, error: LoadError) -> None:
        """End the document begun with the bad input met after it: `{"conversations": [...judged so far],
        "error": {...}}`, so stdout still holds exactly one JSON document."""
        tail = b'\n], "error": ' + orjson.dumps(load_error_document(error)) + self._warnings() + b"}\n"
        _write_bytes(b'{"conversations": [\n' + self.first + tail if self.written == 1 else tail)  # type: ignore[operator]
        sys.stdout.flush()

    def _warnings(self) -> bytes:
        """`, "warnings": [...]` closing the document when typos were met; nothing otherwise."""
        return b', "warnings": ' + orjson.dumps(self.tally.warnings.as_json()) if self.tally.warnings else b""

    def finish(self) -> None:
        if self.written == 1:
            document = orjson.loads(self.first)  # type: ignore[arg-type]
            if self.tally.warnings:
                document["warnings"] = self.tally.warnings.as_json()
            print_json(dumps(document))  # the one-conversation document, indented
        elif self.written > 1:
            summary = orjson.dumps(check_summary_document(self.tally.counts, self.tally.stats)).decode()
            print_json('\n], "summary": ' + summary + self._warnings().decode() + "}\n")
        sys.stdout.flush()


def print_warnings(tally: CheckTally) -> None:
    """The probable typos on stderr (text output), after the results."""
    if tally.warnings:
        sys.stdout.flush()
        print_text(render_warnings(tally.warnings.as_json()), stderr=True)
