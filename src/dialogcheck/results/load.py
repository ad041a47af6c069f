"""Reading a results folder an earlier process wrote: strictly for `dialogcheck report`, leniently for `--resume`.

`report` reads strictly: a folder that is missing or broken is bad input,
named with file, line and column, never a half-drawn report. `--resume` reads
the runs already finished leniently: a run file it cannot read is a run still
to do, and an events file it cannot read leaves that run's timeline empty.
Either way each run comes back as the typed `RunResult` the codec reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from .._paths import refuse_link_out
from .._shown import counted
from ..checks.base import Outcome
from ..errors import LoadError
from ..events.parse import EventFieldError, conversation_from_dicts
from .codec import check_stats_of, decode_conversation, decode_run, verdict_counts_of
from .files import PLAN, SUMMARY_JSON, ResultsFolder, slug_folder
from .model import BatchResult, ConversationResult, Counts, RunResult
from .plan import Plan, read_plan
from .stats import CheckStats


def _json(path: Path) -> Any:
    """A JSON document, or a LoadError at the position where it broke."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise LoadError.of_os("cannot read", err, str(path)) from None
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
    """A run's result and events; None when it never finished (no `run_N.json`: a killed batch). A file that is
    broken, or a link out of the folder, is bad input when `strict`, else a run still to do (or no events)."""
    base = folder.root / slug_folder(slug) / f"run_{int(number)}"
    path = base.with_name(base.name + ".json")
    try:
        refuse_link_out(folder.root, path)
        if not path.is_file():
            return None
        run = decode_run(_object(path, "scenario", "run", "verdict"), str(path))
    except LoadError:
        if strict:
            raise
        return None
    events_path = base.with_name(base.name + ".events.jsonl")
    try:
        refuse_link_out(folder.root, events_path)
        events = _events(events_path)
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
    """The batch a results folder holds, with the planned runs that never finished; raises LoadError on anything
    broken, and on a link that leads out of the folder."""
    root = Path(root)
    if not root.is_dir():
        raise LoadError.one("no results folder here (give the folder `dialogcheck run` wrote)", str(root))
    for name in (PLAN, SUMMARY_JSON):
        refuse_link_out(root, root / name)
        if not (root / name).is_file():
            raise LoadError.one(f"not a dialogcheck results folder: {name} is missing", str(root / name))
    plan = read_plan(root / PLAN)
    summary = _object(root / SUMMARY_JSON, "scenarios", "passed", "failed", "errored")
    rows = summary["scenarios"]
    if not isinstance(rows, list) or not all(isinstance(r, dict) and {"slug", "runs", "passed", "failed", "errored"} <= r.keys() for r in rows):
        raise LoadError.one("`scenarios` must list objects with `slug`, `runs`, `passed`, `failed` and `errored`", str(root / SUMMARY_JSON))
    folder = ResultsFolder(root)
    runs, unfinished = [], []
    for slug, number in plan.run_keys():
        run = _run_files(folder, slug, number, strict=True)
        if run is None:
            unfinished.append((slug, number))
        else:
            runs.append(run)
    return BatchResult(
        tuple(runs),
        planned=summary.get("planned_runs", plan.total_runs),
        started=summary.get("started"),
        updated=summary.get("updated"),
        interrupted=summary.get("interrupted"),
        folder=str(root),
        unfinished=tuple(unfinished),
    )


@dataclass(frozen=True)
class CheckOutput:
    """A folder `check --output` wrote: its summary, and its shards, read a conversation at a time.

    `results()` reads the shards again on every call rather than keeping a list: a folder of
    100,000 conversations is reported with the memory of one shard's line (or one Parquet shard).
    What is drawn from the summary alone (the text and JSON of `report`) is drawn once `verify()`
    found the shards to hold the conversations the summary counts.
    """

    summary: dict[str, Any]
    paths: tuple[Path, ...]
    #: Where summary.json is, which a disagreement of the shards with it names.
    summary_path: Path

    @property
    def shards(self) -> int:
        return len(self.paths)

    @property
    def counts(self) -> Counts:
        return verdict_counts_of(self.summary)

    @property
    def any_error(self) -> bool:
        """Some single check came out `error` (an optional step too): `check` exited 3 for it, so `report` does.
        A planned run of a results folder `check` judged that never finished is the same."""
        checks = self.summary.get("checks") or ()
        return bool(self.summary.get("unfinished_runs")) or any(isinstance(c, dict) and c.get("error") for c in checks)

    def stats(self) -> CheckStats:
        """The per-check statistics `check` printed, as its summary.json holds them; counted from the shards for a
        summary written before it held them."""
        try:
            stats = check_stats_of(self.summary)
        except (KeyError, TypeError, ValueError) as err:
            raise LoadError.one(f"not the summary of `check --output`: its `checks`, `scenarios` or `sop_scores` are broken ({err})", str(self.summary_path)) from None
        if stats is not None:
            return stats
        stats = CheckStats()
        for result in self.results():
            stats.add(result, result.source)
        return stats

    def results(self) -> Iterator[ConversationResult]:
        """Every conversation's result, in shard order; then a `LoadError` if they are not what summary.json counts."""
        for _, _, result in self.placed_results():
            yield result

    def placed_results(self) -> Iterator[tuple[str, int, ConversationResult]]:
        """(shard, line or row, result) for every conversation; then a `LoadError` if they are not what summary.json
        counts (a shard cut short, removed or added: the folder says something its summary does not)."""
        held = Counts()
        for path in self.paths:
            for line, result in _shard_results(path):
                held.add(result.verdict)
                yield str(path), line, result
        summarised = self.counts
        if any(held.by_outcome[o] != summarised.by_outcome[o] for o in (Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.SUSPECT)):
            raise LoadError.one(
                f"summary.json counts {_counted(summarised)}, but the shards hold {_counted(held, noun=False)}:"
                " a shard was cut short, removed or added, so this folder cannot be trusted",
                str(self.summary_path),
            )

    def verify(self) -> None:
        """Read every shard, for what is drawn from the summary alone: `LoadError` when they disagree with it."""
        for _ in self.placed_results():
            pass


def _counted(counts: Counts, *, noun: bool = True) -> str:
    total = counted(counts.total, "conversation") if noun else f"{counts.total:,}"
    return f"{total} ({counts.verdicts_text()})"


def _shard_results(path: Path) -> Iterator[tuple[int, ConversationResult]]:
    if path.suffix == ".jsonl":
        with path.open("rb") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    yield number, decode_conversation(_shard_json(line, path, number), str(path), number)
        return
    from .parquet import result_values

    for row, value in enumerate(result_values(path), 1):
        yield row, decode_conversation(_shard_json(value, path, row), str(path), row)


def _shard_json(value: bytes | str, path: Path, line: int) -> Any:
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not a result shard: invalid JSON ({err.msg})", str(path), line, err.colno) from None


def load_check_output(folder: Path) -> CheckOutput | None:
    """The folder `check --output` wrote (its summary.json and part-NNNNN shards), or None for another folder;
    a link out of the folder among them is bad input."""
    summary_path = folder / SUMMARY_JSON
    named = sorted(p for p in folder.glob("part-*") if p.suffix in (".jsonl", ".parquet"))
    if (folder / PLAN).exists() or not os.path.lexists(summary_path) or not named:
        return None
    for path in (summary_path, *named):
        refuse_link_out(folder, path)
    shards = tuple(p for p in named if p.is_file())
    if not summary_path.is_file() or not shards:
        return None
    summary = _json(summary_path)
    if not isinstance(summary, dict) or not {"conversations", "passed", "failed", "errored"} <= summary.keys():
        raise LoadError.one("not the summary of `check --output`: `conversations`, `passed`, `failed` and `errored` are needed", str(summary_path))
    return CheckOutput(summary, shards, summary_path)
