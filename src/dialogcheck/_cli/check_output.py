"""Where `dialogcheck check` sends results: the sinks a `CheckRun` writes to, and the output folder.

A sink takes the typed results in input order (`add`). The text and JSON
sinks write stdout, adding what spans the whole batch: the blank lines between
text blocks, the JSON document around the conversations, the tally. From
worker processes they take the results encoded where they were checked
(`add_encoded`, the adapter of `engines.work.Encoding`), so `--jobs 1` and
`--jobs N` write the same bytes. The HTML report, the telemetry outputs and
JUnit are sinks too (`Fanout` feeds them all).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .._redact import mask_bytes
from .._shown import counted
from ..checking import CheckTally, llm_judged_count
from ..checks.base import Outcome
from ..engines.work import ChunkResult, Encoding
from ..errors import LoadError
from ..report import json as json_report
from ..report.check_text import (
    plain_conversation,
    plain_failing_checks,
    render_check_scenarios,
    render_check_table,
    render_conversation,
    render_more_failures,
    render_output_summary,
    render_tally,
    render_warnings,
)
from ..report.styled import Styled
from ..results.atomic import write_atomic
from ..results.codec import check_summary_document, conversation_document, conversation_line
from ..results.lock import BatchLock
from ..results.model import ConversationResult
from ..subject import Standard
from .output import EXIT_BAD_INPUT, EXIT_ERRORED, _surely_not_terminal, console, fail_with_load_error, print_json, print_text


def _write_bytes(data: bytes) -> None:
    """Encoded results straight to stdout's byte stream, held secrets masked; sinks flush stdout's text layer when they start."""
    data = mask_bytes(data)
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.write(data)
    else:
        sys.stdout.write(data.decode("utf-8"))


class TextSink:
    """One conversation: its every check. Several: the failing checks of the first `max_failures` conversations
    that failed or errored (every check of every conversation with `show_all`), then the per-check table and
    the batch line. Styled on a terminal; plain otherwise, when workers may encode it.

    The first conversation is held until a second one shows the batch has several; alone, it is shown whole.
    """

    #: Where the failures not shown can be seen.
    MORE = "--format json, --output or --html"

    def __init__(self, tally: CheckTally, *, show_all: bool = False, max_failures: int = 20, styled: bool = False):
        sys.stdout.flush()
        self.tally, self.show_all, self.max_failures, self.styled = tally, show_all, max_failures, styled
        #: Plain text from workers: every block joined per chunk (`show_all`), else each conversation's failing checks.
        self.encoding: Encoding | None = None if styled else Encoding(plain_conversation, b"\n") if show_all else Encoding(plain_failing_checks)
        self.seen = 0  # conversations judged so far
        self.blocks = 0  # blocks written
        self.hidden = 0  # failing conversations not shown
        self.first: tuple[ConversationResult, bytes | None] | None = None  # with its encoding, when it came encoded

    def add(self, result: ConversationResult) -> None:
        self._next(result, None)

    def add_encoded(self, chunk: ChunkResult) -> None:
        if self.show_all:  # a chunk's blocks, already joined
            self._block(chunk.encoded[0])
            self.seen += chunk.counts.total
            return
        for i, piece in enumerate(chunk.encoded):  # a failing conversation's piece is never empty
            self._next(chunk.results[0] if i == 0 else None, piece)

    def _next(self, result: ConversationResult | None, piece: bytes | None) -> None:
        self.seen += 1
        if self.seen == 1 and not self.show_all:
            self.first = (result, piece)  # type: ignore[assignment]  # the first of a chunk comes typed
            return
        if self.first is not None:
            first, self.first = self.first, None
            self._conversation(*first)
        self._conversation(result, piece)

    def _conversation(self, result: ConversationResult | None, piece: bytes | None) -> None:
        failing = bool(piece) if piece is not None else result.verdict is not Outcome.PASS or result.any_error  # type: ignore[union-attr]
        if not self.show_all and failing and self.blocks >= self.max_failures:
            self.hidden += 1
        elif piece is not None:
            self._block(piece)
        elif not self.styled:  # piped: plain text (empty for a conversation not shown)
            self._block(self.encoding.encode(result))  # type: ignore[union-attr, arg-type]  # plain text has an encoding
        elif self.show_all or failing:  # a terminal: styled here
            self._block(render_conversation(result, failing_only=not self.show_all))  # type: ignore[arg-type]

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
            result = self.first[0]
            self._block(render_conversation(result) if self.styled else plain_conversation(result))
        sys.stdout.flush()
        if self.tally.counts.total > 1:
            if self.hidden:
                print_text(Styled("\n").extend(render_more_failures(self.hidden, self.MORE)))
            table = render_check_scenarios(self.tally.stats).extend(render_check_table(self.tally.stats))
            print_text(Styled("\n").extend(table) if table.pieces else table)
            print_text(render_tally(self.tally.counts, self.tally.stats.blame))


class JsonSink:
    """One conversation: its document. Several: `{"conversations": [...], "summary": {...}}`, written as they come."""

    encoding = Encoding(conversation_line, json_report.BATCH_SEPARATOR)

    def __init__(self, tally: CheckTally):
        sys.stdout.flush()
        self.tally = tally
        self.written = 0
        self.first: ConversationResult | None = None  # held until a second conversation says the batch form is needed

    def add(self, result: ConversationResult) -> None:
        if self.written == 0:
            self.first = result
        else:
            self._write(conversation_line(result))
        self.written += 1

    def add_encoded(self, chunk: ChunkResult) -> None:
        if self.written == 0 and chunk.counts.total == 1:
            self.first = chunk.results[0]
        elif self.written == 0:
            _write_bytes(json_report.BATCH_OPEN + chunk.encoded[0])
        else:
            self._write(chunk.encoded[0])
        self.written += chunk.counts.total

    def _write(self, lines: bytes) -> None:
        """Lines after the first conversation: the document's opening with the one held, or a separator."""
        head = json_report.BATCH_OPEN + conversation_line(self.first) if self.written == 1 else b""  # type: ignore[arg-type]  # held
        _write_bytes(head + json_report.BATCH_SEPARATOR + lines)

    @property
    def started(self) -> bool:
        """Whether the document has begun: a conversation is written, or held to be written."""
        return self.written > 0

    def fail(self, error: LoadError | dict[str, Any]) -> None:
        """End the document begun with the bad input (or the error document) met after it: `{"conversations":
        [...judged so far], "error": {...}}`, so stdout still holds exactly one JSON document."""
        document = error if isinstance(error, dict) else json_report.load_error_document(error)
        tail = json_report.batch_close_with_error(document, self.tally.warnings.as_json() if self.tally.warnings else [])
        _write_bytes(json_report.BATCH_OPEN + conversation_line(self.first) + tail if self.written == 1 else tail)  # type: ignore[arg-type]  # held
        sys.stdout.flush()

    def finish(self) -> None:
        warnings = self.tally.warnings.as_json() if self.tally.warnings else []
        if self.written == 1:
            print_json(json_report.one_conversation(conversation_document(self.first, with_source=True), warnings))  # type: ignore[arg-type]  # held
        elif self.written > 1:
            summary = check_summary_document(self.tally.counts, self.tally.stats, unfinished=self.tally.unfinished)
            print_json(json_report.batch_close(summary, warnings).decode())
        sys.stdout.flush()


def stdout_sink(tally: CheckTally, output_format: str, *, show_all: bool, max_failures: int) -> TextSink | JsonSink:
    """JSON, or text: styled on a terminal (rendered here, from the typed results), plain when piped."""
    if output_format == "json":
        return JsonSink(tally)
    styled = not _surely_not_terminal(sys.stdout) and console().is_terminal
    return TextSink(tally, show_all=show_all, max_failures=max_failures, styled=styled)


class JunitSink:
    """`--junit`: every result kept (the run reads its input whole for it), written at the end."""

    def __init__(self, path: str, subject: Any):
        self.path, self.subject = path, subject
        self.results: list[ConversationResult] = []

    def add(self, result: ConversationResult) -> None:
        self.results.append(result)

    def commit(self) -> None:
        from ..report.junit import render_junit_check  # the XML writer, only when a report is asked for

        try:
            write_atomic(self.path, render_junit_check(self.results, self.subject))
        except OSError as err:
            raise LoadError.of_os("cannot write the report", err, str(err.filename or self.path)) from None

    def discard(self) -> None:
        """Nothing to remove: the report is written whole, at the end."""


class Fanout:
    """The sinks of one check as one: each result to every sink, and to the progress line. The results come
    encoded from workers only when stdout's sink is the only one."""

    def __init__(self, main: Any, others: list[Any], progress: Any = None):
        self.main, self.others, self.progress = main, others, progress
        self.encoding = getattr(main, "encoding", None) if main is not None and not others else None

    def add(self, result: ConversationResult) -> None:
        for sink in self.others:
            sink.add(result)
        if self.main is not None:
            self.main.add(result)
        if self.progress is not None:
            self.progress.add(result.verdict)

    def add_encoded(self, chunk: ChunkResult) -> None:
        self.main.add_encoded(chunk)
        if self.progress is not None:
            self.progress.add(chunk.counts)


def print_warnings(tally: CheckTally) -> None:
    """The probable typos on stderr (text output), after the results."""
    if tally.warnings:
        sys.stdout.flush()
        print_text(render_warnings(tally.warnings.as_json()), stderr=True)


def judge_note(subject: Standard, judge: Any, no_judge: bool) -> str | None:
    """Say which checks were not judged, and why, so a skipped check is never mistaken for a pass."""
    count = llm_judged_count(subject)
    if not count or (judge is not None and not no_judge):
        return None
    why = "skipped (--no-judge)" if no_judge else "not judged: no judge configured (evaluation.llm in eval/conftest.yml)"
    per = f"in {counted(len(subject.subjects), 'scenario')}" if subject.several else "per conversation"
    return f"{counted(count, 'LLM-judged check')} {per} {why}"


def fail(err: LoadError, sink: Any, output_format: str) -> None:
    """Bad input, exit 2: a JSON document already begun on stdout is closed with the error, so stdout always
    holds exactly one document; otherwise the error is the whole output."""
    sys.stdout.flush()
    if isinstance(sink, JsonSink) and sink.started:
        sink.fail(err)
        raise SystemExit(EXIT_BAD_INPUT)
    fail_with_load_error(err, output_format)


def errored(message: str, sink: Any, output_format: str) -> None:
    """A batch that could not finish for a reason not the input's (a worker killed): exit 3, one line; in JSON one
    document with its `error`, the one begun closed with it."""
    sys.stdout.flush()
    error = {"message": message, "file": None, "line": None, "column": None}
    if output_format == "json":
        if isinstance(sink, JsonSink) and sink.started:
            sink.fail(error)
        else:
            print_json(json_report.dumps({"error": error}))
    else:
        print_text(Styled(f"error: {message}\n", "bold red"), stderr=True)
    raise SystemExit(EXIT_ERRORED)


def write_summary(tally: CheckTally, folder: str, output_format: str) -> None:
    """Write summary.json into the output folder (last: a folder with one is complete) and print it."""
    from ..engines.shards import write_summary as write

    document = json_report.dumps(check_summary_document(tally.counts, tally.stats, tally.warnings.as_json(), tally.unfinished))
    try:
        write(folder, document.encode("utf-8"))
    except OSError as err:
        cannot_write_output(err, folder, output_format)
    if output_format == "json":
        print_json(document)
    else:
        print_text(render_output_summary(tally.counts, tally.stats, len(tally.shards), folder))
        print_warnings(tally)


def cannot_write_output(err: OSError, folder: str | None, output_format: str) -> None:
    fail_with_load_error(LoadError.of_os("cannot write the output folder", err, str(err.filename or folder)), output_format)


def _refuse_unless_empty(output_dir: str) -> None:
    from ..engines.storage import folder_is_empty

    try:
        empty = folder_is_empty(output_dir)
    except OSError as err:
        raise LoadError.of_os("cannot use the output folder", err, output_dir) from None
    if not empty:
        raise LoadError.one("the output folder is not empty: give a new or empty folder", output_dir)


def claim_output(output_dir: str, output_format: str) -> BatchLock | None:
    """The output folder, new or empty, locked as `run` locks its results folder, so a second process writing it
    is refused rather than mixing its shards in; None for an object-store URI, which has no lock (checked empty only)."""
    from ..engines.storage import is_uri

    try:
        if is_uri(output_dir):
            _refuse_unless_empty(output_dir)
            return None
        return BatchLock.claim(Path(output_dir), lambda folder: _refuse_unless_empty(output_dir), command="check")
    except LoadError as err:
        fail_with_load_error(err, output_format)
    except OSError as err:  # the folder cannot be made
        cannot_write_output(err, output_dir, output_format)
    raise AssertionError("unreachable")


def let_go(lock: BatchLock, output_dir: str) -> None:
    """Release the output folder: a batch that finished keeps its lock file there, one that wrote nothing leaves
    the folder as it found it."""
    from ..engines.shards import SUMMARY_NAME

    if os.path.lexists(os.path.join(output_dir, SUMMARY_NAME)):
        lock.release()
    else:
        lock.abandon()
