"""Reading a whole results folder back for reports, strictly or leniently.

`dialogcheck report` reads strictly: a folder that is missing or broken is bad
input, named with file, line and column, never a half-drawn report. At the end
of `dialogcheck run` the same files are read leniently: an unreadable events
file leaves that run's timeline empty rather than losing the reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import LoadError
from .files import PLAN, SUMMARY_JSON, slug_folder
from .plan import read_plan

RunKey = tuple[str, int]


@dataclass(frozen=True)
class LoadedResults:
    summary: dict[str, Any]
    runs: list[dict[str, Any]]
    events: dict[RunKey, list[dict[str, Any]]]


def _json(path: Path, line: int = 1) -> Any:
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


def _base(root: Path, slug: str, number: int) -> Path:
    return root / slug_folder(slug) / f"run_{number}"


def load_results(root: str | Path) -> LoadedResults:
    """Summary, finished runs (in plan order) and their events; raises LoadError on anything broken."""
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
    runs, events = [], {}
    for slug, number in plan.run_keys():
        base = _base(root, slug, number)
        path = base.with_name(base.name + ".json")
        if not path.is_file():
            continue  # not finished (a killed batch); the summary says so
        run = _object(path, "scenario", "run", "verdict")
        if not isinstance(run["scenario"], dict) or "slug" not in run["scenario"] or not isinstance(run["run"], int):
            raise LoadError.one("not a run document: `scenario.slug` and `run` are needed", str(path))
        runs.append(run)
        events[(slug, number)] = _events(base.with_name(base.name + ".events.jsonl"))
    return LoadedResults(summary, runs, events)


def read_events(root: str | Path, runs: Sequence[Mapping[str, Any]]) -> dict[RunKey, list[dict[str, Any]]]:
    """Every run's events, leniently: an unreadable file gives that run no events."""
    found = {}
    for run in runs:
        slug, number = run["scenario"]["slug"], run["run"]
        base = _base(Path(root), slug, number)
        try:
            found[(slug, number)] = _events(base.with_name(base.name + ".events.jsonl"))
        except (LoadError, OSError):
            found[(slug, number)] = []
    return found
