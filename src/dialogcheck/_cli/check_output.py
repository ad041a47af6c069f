"""Where `dialogcheck check` sends results rendered by the engine: stdout (text or JSON) or shards in a folder.

The engine renders each conversation (in a worker, when there are several);
a writer only puts the pieces in order and adds what spans the whole batch:
the blank lines between text blocks, the JSON document around the
conversations, the tally. `--jobs 1` and `--jobs N` write the same bytes.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .._redact import mask, mask_bytes
from ..checks.base import Outcome
from ..engines.work import Checked, ChunkResult
from ..errors import LoadError, Problem
from .output import exit_code, print_json, print_text


def _write_bytes(data: bytes) -> None:
    """Rendered results straight to stdout's byte stream, held secrets masked; writers flush stdout's text layer when they start."""
    data = mask_bytes(data)
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.write(data)
    else:
        sys.stdout.write(data.decode("utf-8"))


class WarningLog:
    """Probable typos met in the input, each kind once a file: where it was first met, and how often.

    A log that misspells a name does so on every line; one warning a file says it as well, and stays
    small however long the log is.
    """

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], Problem] = {}
        self.count: dict[tuple[str, str], int] = {}

    def add(self, warnings: Iterable[Problem]) -> None:
        for problem in warnings:
            key = (problem.file, _EVENT_INDEX.sub("", problem.message, count=1))
            if key not in self.first:
                self.first[key] = problem
                self.count[key] = 0
            self.count[key] += 1

    def __bool__(self) -> bool:
        return bool(self.first)

    def as_json(self) -> list[dict[str, object]]:
        return [problem.to_dict() | {"count": self.count[key]} for key, problem in self.first.items()]

    def as_text(self) -> str:
        return warnings_text(self.as_json())


def warnings_text(warnings: Iterable[dict]) -> str:
    """Warnings as `as_json` gives them (and summary.json holds them), a `file:line:col: warning: ...` line each."""
    lines = []
    for w in warnings:
        again = f" ({w['count'] - 1} more like it in this file)" if w["count"] > 1 else ""
        lines.append(f"{w['file']}:{w['line']}:{w['column']}: warning: {w['message']}{again}\n")
    return "".join(lines)


#: The `event N: ` (or `row R: event N: `) a warning's message starts with: the same typo in another event
#: is the same warning.
_EVENT_INDEX = re.compile(r"^(row \d+: )?event \d+: ")


@dataclass
class Tally:
    """What the exit code and the summary need, counted as results pass (flat however many there are)."""

    counts: dict[Outcome, int] = field(default_factory=lambda: {Outcome.PASS: 0, Outcome.FAIL: 0, Outcome.ERROR: 0})
    any_error: bool = False
    kept: list | None = None  # full results, for --junit and --html
    shards: list[str] = field(default_factory=list)  # written to --output
    warnings: WarningLog = field(default_factory=WarningLog)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, item: Checked) -> None:
        self.counts[item.verdict] += 1
        self.any_error = self.any_error or item.errored
        if item.warnings:
            self.warnings.add(item.warnings)
        if self.kept is not None:
            self.kept.append(item.result)

    def add_block(self, block: ChunkResult) -> None:
        for outcome, n in block.counts.items():
            self.counts[outcome] += n
        self.any_error = self.any_error or block.errored
        if block.warnings:
            self.warnings.add(block.warnings)

    def verdicts(self) -> VerdictCounts:
        return VerdictCounts(self.counts)

    def exit_code(self) -> int:
        return exit_code([o for o, n in self.counts.items() if n], self.any_error)

    def summary(self) -> dict[str, object]:
        """The counts, and the probable typos met (only when there are some, so a clean batch's is unchanged)."""
        from ..report.data import tally

        document: dict[str, object] = tally(self.verdicts())
        if self.warnings:
            document["warnings"] = self.warnings.as_json()
        return document

    def print_warnings(self) -> None:
        """The probable typos on stderr (text output), after the results."""
        if self.warnings:
            sys.stdout.flush()
            sys.stderr.write(self.warnings.as_text())
            sys.stderr.flush()


class VerdictCounts:
    """The verdicts as the tally renderers read them (a sized iterable), without a list as long as the batch."""

    def __init__(self, counts: dict[Outcome, int]):
        self.counts = counts

    def __len__(self) -> int:
        return sum(self.counts.values())

    def __iter__(self) -> Iterator[Outcome]:
        for outcome, n in self.counts.items():
            for _ in range(n):
                yield outcome


class TextWriter:
    """One block per conversation, a blank line between blocks, the batch line when there were several."""

    def __init__(self, tally: Tally):
        sys.stdout.flush()
        self.tally = tally

    def add(self, item: Checked | ChunkResult) -> None:
        if isinstance(item, ChunkResult):  # a chunk's blocks, already joined by blank lines (never mixed with items)
            _write_bytes(b"\n" + item.block if self.tally.total else item.block)
            self.tally.add_block(item)
            return
        if isinstance(item.rendered, str):  # piped: plain text, written straight through
            sys.stdout.write(mask("\n" + item.rendered if self.tally.total else item.rendered))
        else:
            if self.tally.total:
                sys.stdout.write("\n")
            sys.stdout.flush()
            print_text(item.rendered)
        self.tally.add(item)

    def finish(self) -> None:
        sys.stdout.flush()
        if self.tally.total > 1:
            from ..report.text import render_tally

            print_text(render_tally(self.tally.verdicts()))


class JsonWriter:
    """One conversation: its document. Several: `{"conversations": [...], "summary": {...}}`, written as they come."""

    def __init__(self, tally: Tally):
        sys.stdout.flush()
        self.tally = tally
        self.first: bytes | None = None  # held until a second conversation says the batch form is needed

    def add(self, item: Checked | ChunkResult) -> None:
        block = item.block if isinstance(item, ChunkResult) else item.rendered.encode("utf-8")
        one = not isinstance(item, ChunkResult) or item.count == 1
        if self.tally.total == 0 and one:
            self.first = block
        elif self.tally.total == 0:
            _write_bytes(b'{"conversations": [\n' + block)
        elif self.tally.total == 1:
            _write_bytes(b'{"conversations": [\n' + self.first + b",\n" + block)
        else:
            _write_bytes(b",\n" + block)
        if isinstance(item, ChunkResult):
            self.tally.add_block(item)
        else:
            self.tally.add(item)

    @property
    def started(self) -> bool:
        """Whether the document has begun: a conversation is written, or held to be written."""
        return self.tally.total > 0

    def fail(self, error: LoadError) -> None:
        """End the document begun with the bad input met after it: `{"conversations": [...judged so far],
        "error": {...}}`, so stdout still holds exactly one JSON document."""
        import orjson

        from ..report.json import render_load_error

        tail = b'\n], "error": ' + orjson.dumps(orjson.loads(render_load_error(error))["error"]) + self._warnings() + b"}\n"
        _write_bytes(b'{"conversations": [\n' + self.first + tail if self.tally.total == 1 else tail)
        sys.stdout.flush()

    def _warnings(self) -> bytes:
        """`, "warnings": [...]` closing the document when typos were met; nothing otherwise."""
        if not self.tally.warnings:
            return b""
        import orjson

        return b', "warnings": ' + orjson.dumps(self.tally.warnings.as_json())

    def finish(self) -> None:
        if self.tally.total == 1:
            import orjson

            from ..report.json import dumps

            document = orjson.loads(self.first)
            if self.tally.warnings:
                document["warnings"] = self.tally.warnings.as_json()
            print_json(dumps(document))  # the one-conversation document, indented
        elif self.tally.total > 1:
            from ..report.json import tally_json

            print_json('\n], "summary": ' + tally_json(self.tally.verdicts()) + self._warnings().decode() + "}\n")
        sys.stdout.flush()


def print_summary(tally: Tally, folder: str, shards: int, output_format: str) -> None:
    """Write summary.json into the folder (last: a folder with one is complete) and print it."""
    from ..engines.shards import write_summary
    from ..report.json import dumps

    document = dumps(tally.summary())
    write_summary(folder, document)
    if output_format == "json":
        print_json(document)
    else:
        sys.stdout.write(summary_text(tally.summary(), shards, folder))
        sys.stdout.flush()
        tally.print_warnings()


def summary_text(summary: dict, shards: int, folder: str) -> str:
    """The text form of an output folder's summary, as `check --output` and `report` print it."""
    return (
        f"{summary['conversations']} conversations: {summary['passed']} passed, {summary['failed']} failed, {summary['errored']} errored\n"
        f"results: {shards} shard{'s' if shards != 1 else ''} in {folder}\n"
    )
