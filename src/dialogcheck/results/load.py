"""Reading a results folder an earlier process wrote: strictly for `dialogcheck report`, leniently for `--resume`.

`report` reads strictly: a folder that is missing or broken is bad input,
named with file, line and column, never a half-drawn report. `--resume` reads
the runs already finished leniently: a run file it cannot read is a run still
to do, and an events file it cannot read leaves that run's timeline empty.
Either way each run comes back as the typed `RunResult` the codec reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from ..checks.base import Outcome
from ..errors import LoadError
from ..events.parse import EventFieldError, conversation_from_dicts
from .codec import decode_conversation, decode_run
from .files import PLAN, SUMMARY_JSON, ResultsFolder
from .model import BatchResult, ConversationResult, Counts, RunResult
from .plan import Plan, read_plan


def _json(path: Path) -> Any:
    """A JSON document, or a LoadError at the position where it broke."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise LoadError.one(f"cannot read: {err.strerror or err}", str(path)) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not valid JSON: {err.msg}", str(path), err.lineno, err.colno) from None


def _object(path: Path, *keys: str) -> dict[str, Any]:
    document = _json(path)
    if not isinstance(document, dict):
        raise LoadError.one("expected a JSON object", str(path))
    missing = [key for key in keys if key not in document]
    if missing:
        raise LoadError.one(f"not a dialogcheck results file: field `{missing[0]}` is missing", str(path))
    return document


def _events(path: Path) -> list[dict[str, Any]]:
    """The events of `run_N.events.jsonl`, one object a line; none when the file is absent."""
    if not path.is_file():
        return []
    events = []
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            raise LoadError.one(f"not valid JSON: {err.msg}", str(path), number, err.colno) from None
        if not isinstance(event, dict):
            raise LoadError.one("an event must be a JSON object", str(path), number)
        events.append(event)
    return events


def with_events(run: RunResult, events: list[dict[str, Any]]) -> RunResult:
    """The run with its recorded events, read once as the typed record the HTML report draws."""
    try:
        record = conversation_from_dicts(events, f"{run.slug}/run_{run.number}", run.conversation_id)
        note = None
    except EventFieldError as err:
        record, note = None, f"events shown as recorded: event {getattr(err, 'index', '?')}: {err}"
    return replace(run, events=events, record=record, record_note=note)


def _run_files(folder: ResultsFolder, slug: str, number: int, *, strict: bool) -> RunResult | None:
    base = folder.run_base(slug, number)
    path = base.with_name(base.name + ".json")
    if not path.is_file():
        return None  # not finished (a killed batch); the summary says so
    try:
        run = decode_run(_object(path, "scenario", "run", "verdict"), str(path))
    except LoadError:
        if strict:
            raise
        return None
    try:
        events = _events(base.with_name(base.name + ".events.jsonl"))
    except (LoadError, OSError):
        if strict:
            raise
        events = []
    return with_events(run, events)


def finished_runs(folder: ResultsFolder, plan: Plan) -> list[RunResult]:
    """Every run of the plan an earlier process finished, with its events, in plan order (for `--resume`)."""
    found = (_run_files(folder, slug, number, strict=False) for slug, number in plan.run_keys())
    return [run for run in found if run is not None]


def load_results(root: str | Path) -> BatchResult:
    """The batch a results folder holds; raises LoadError on anything broken."""
    root = Path(root)
    if not root.is_dir():
        raise LoadError.one("no results folder here (give the folder `dialogcheck run` wrote)", str(root))
    for name in (PLAN, SUMMARY_JSON):
        if not (root / name).is_file():
            raise LoadError.one(f"not a dialogcheck results folder: {name} is missing", str(root / name))
    plan = read_plan(root / PLAN)
    summary = _object(root / SUMMARY_JSON, "scenarios", "passed", "failed", "errored")
    rows = summary["scenarios"]
    if not isinstance(rows, list) or not all(isinstance(r, dict) and {"slug", "runs", "passed", "failed", "errored"} <= r.keys() for r in rows):
        raise LoadError.one("`scenarios` must list objects with `slug`, `runs`, `passed`, `failed` and `errored`", str(root / SUMMARY_JSON))
    folder = ResultsFolder(root)
    runs = [run for slug, number in plan.run_keys() if (run := _run_files(folder, slug, number, strict=True)) is not None]
    return BatchResult(
        tuple(runs),
        planned=summary.get("planned_runs", plan.total_runs),
        started=summary.get("started"),
        updated=summary.get("updated"),
        interrupted=summary.get("interrupted"),
        folder=str(root),
    )


@dataclass(frozen=True)
class CheckOutput:
    """A folder `check --output` wrote: its summary, and its shards, read a conversation at a time.

    `results()` reads the shards again on every call rather than keeping a list: a folder of
    100,000 conversations is reported with the memory of one shard's line (or one Parquet shard).
    """

    summary: dict[str, Any]
    paths: tuple[Path, ...]

    @property
    def shards(self) -> int:
        return len(self.paths)

    @property
    def counts(self) -> Counts:
        counts = Counts()
        for outcome, key in ((Outcome.PASS, "passed"), (Outcome.FAIL, "failed"), (Outcome.ERROR, "errored"), (Outcome.SUSPECT, "suspect")):
            counts.add(outcome, int(self.summary.get(key) or 0))
        return counts

    def results(self) -> Iterator[ConversationResult]:
        for path in self.paths:
            yield from _shard_results(path)


def _shard_results(path: Path) -> Iterator[ConversationResult]:
    if path.suffix == ".jsonl":
        with path.open("rb") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    yield decode_conversation(_shard_json(line, path, number), str(path), number)
        return
    from .parquet import result_values

    for row, value in enumerate(result_values(path), 1):
        yield decode_conversation(_shard_json(value, path, row), str(path), row)


def _shard_json(value: bytes | str, path: Path, line: int) -> Any:
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not a result shard: invalid JSON ({err.msg})", str(path), line, err.colno) from None


def load_check_output(folder: Path) -> CheckOutput | None:
    """The folder `check --output` wrote (its summary.json and part-NNNNN shards), or None for another folder."""
    summary_path = folder / SUMMARY_JSON
    shards = sorted(p for p in folder.glob("part-*") if p.suffix in (".jsonl", ".parquet") and p.is_file())
    if (folder / PLAN).exists() or not summary_path.is_file() or not shards:
        return None
    summary = _json(summary_path)
    if not isinstance(summary, dict) or not {"conversations", "passed", "failed", "errored"} <= summary.keys():
        raise LoadError.one("not the summary of `check --output`: `conversations`, `passed`, `failed` and `errored` are needed", str(summary_path))
    return CheckOutput(summary, tuple(shards))
