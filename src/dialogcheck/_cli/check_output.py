"""Where `dialogcheck check` sends results: stdout, as text or one JSON document, in input order.

The results come encoded from where they were checked (a worker, with
`--jobs`): a writer only puts the pieces in order and adds what spans the
whole batch: the blank lines between text blocks, the JSON document around
the conversations, the tally. `--jobs 1` and `--jobs N` write the same bytes.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from .._redact import mask_bytes
from ..checking import CheckTally
from ..checks.base import Outcome
from ..engines.work import ChunkResult, Judged
from ..errors import LoadError
from ..report.json import dumps, load_error_document
from ..report.styled import Styled
from ..report.text import render_check_scenarios, render_check_table, render_conversation, render_more_failures, render_tally, render_warnings
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
    """One conversation: its every check. Several: the failing checks of the first `max_failures` conversations
    that failed or errored (every check of every conversation with `show_all`), then the per-check table and
    the batch line.

    The first conversation is held until a second one shows the batch has several; it comes encoded both
    ways (`Judged.alone` is its whole block).
    """

    #: Where the failures not shown can be seen.
    MORE = "--format json, --output or --html"

    def __init__(self, tally: CheckTally, *, show_all: bool = False, max_failures: int = 20):
        sys.stdout.flush()
        self.tally, self.show_all, self.max_failures = tally, show_all, max_failures
        self.written = 0  # conversations judged so far
        self.blocks = 0  # blocks written
        self.hidden = 0  # failing conversations not shown
        self.first: Judged | None = None

    def add(self, item: Judged | ChunkResult) -> None:
        if isinstance(item, ChunkResult):  # with show_all, from workers: a chunk's blocks, already joined
            self._block(item.block)
            self.written += item.counts.total
            return
        self.written += 1
        if self.written == 1 and not self.show_all:
            self.first = item
            return
        if self.first is not None:
            first, self.first = self.first, None
            self._conversation(first)
        self._conversation(item)

    def _conversation(self, item: Judged) -> None:
        failing = item.verdict is not Outcome.PASS or item.any_error
        if not self.show_all and failing and self.blocks >= self.max_failures:
            self.hidden += 1
            return
        if item.encoded is not None:  # piped: plain text, written straight through (empty for a conversation not shown)
            self._block(item.encoded)
        elif self.show_all or failing:  # a terminal: styled here
            self._block(render_conversation(item.result, failing_only=not self.show_all))  # type: ignore[arg-type]  # an item to show holds its result

    def _block(self, block: bytes | Styled) -> None:
        if not block or (isinstance(block, Styled) and not block.pieces):
            return
        if isinstance(block, bytes):
            _write_bytes(b"\n" + block if self.blocks else block)
        else:
            if self.blocks:
                sys.stdout.write("\n")
            sys.stdout.flush()
            print_text(block)
        self.blocks += 1

    def finish(self) -> None:
        if self.first is not None:  # the batch held one conversation: all of it, as ever
            item = self.first
            self._block(item.alone if item.alone is not None else render_conversation(item.result))  # type: ignore[arg-type]  # an item to show holds its result
        sys.stdout.flush()
        if self.tally.counts.total > 1:
            if self.hidden:
                print_text(Styled("\n").extend(render_more_failures(self.hidden, self.MORE)))
            table = render_check_scenarios(self.tally.stats).extend(render_check_table(self.tally.stats))
            print_text(Styled("\n").extend(table) if table.pieces else table)
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
            _write_bytes(b'{"conversations": [\n' + self.first + b",\n" + block)  # type: ignore[operator]  # the first block is kept once one is written
        else:
            _write_bytes(b",\n" + block)
        self.written += count

    @property
    def started(self) -> bool:
        """Whether the document has begun: a conversation is written, or held to be written."""
        return self.written > 0

    def fail(self, error: LoadError | dict[str, Any]) -> None:
        """End the document begun with the bad input (or the error document) met after it: `{"conversations":
        [...judged so far], "error": {...}}`, so stdout still holds exactly one JSON document."""
        document = error if isinstance(error, dict) else load_error_document(error)
        tail = b'\n], "error": ' + orjson.dumps(document) + self._warnings() + b"}\n"
        _write_bytes(b'{"conversations": [\n' + self.first + tail if self.written == 1 else tail)  # type: ignore[operator]  # the first block is kept once one is written
        sys.stdout.flush()

    def _warnings(self) -> bytes:
        """`, "warnings": [...]` closing the document when typos were met; nothing otherwise."""
        return b', "warnings": ' + orjson.dumps(self.tally.warnings.as_json()) if self.tally.warnings else b""

    def finish(self) -> None:
        if self.written == 1:
            document = orjson.loads(self.first)  # type: ignore[arg-type]  # the first block is kept once one is written
            if self.tally.warnings:
                document["warnings"] = self.tally.warnings.as_json()
            print_json(dumps(document))  # the one-conversation document, indented
        elif self.written > 1:
            summary = orjson.dumps(check_summary_document(self.tally.counts, self.tally.stats, unfinished=self.tally.unfinished)).decode()
            print_json('\n], "summary": ' + summary + self._warnings().decode() + "}\n")
        sys.stdout.flush()


def print_warnings(tally: CheckTally) -> None:
    """The probable typos on stderr (text output), after the results."""
    if tally.warnings:
        sys.stdout.flush()
        print_text(render_warnings(tally.warnings.as_json()), stderr=True)
