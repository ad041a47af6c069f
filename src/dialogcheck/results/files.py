"""What goes in a results folder, and reading it back (for `--resume` and `dialogcheck report`).

```
<results>/plan.json  summary.txt  summary.json  .dialogcheck.lock
<results>/<slug>/run_N.json  run_N.txt  run_N.events.jsonl
```
Every file is written atomically; a run's files are written the moment it
finishes, the summary after every run, so a batch killed midway leaves a
readable folder that `--resume` completes. A folder holds one batch: a new
batch takes only a new or empty folder, and holds its lock while it runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from .._paths import safe_file_name
from .._redact import redact
from .._shown import cut
from ..report.data import conversation_dict
from ..errors import LoadError
from .atomic import write_atomic
from .lock import LOCK_FILE, BatchLock
from .model import RunRecord, scenario_stats
from .plan import Plan, read_plan

PLAN = "plan.json"
SUMMARY_JSON = "summary.json"
SUMMARY_TXT = "summary.txt"


def run_document(record: RunRecord) -> dict[str, Any]:
    """`run_N.json`: verdict, every check with its detail, transcript, latency per turn, errors."""
    judged = conversation_dict(record.result) if record.result is not None else {}
    for key in ("verdict", "subject", "conversation_id"):
        judged.pop(key, None)
    return {
        "scenario": {
            "slug": record.slug,
            "name": record.scenario_name,
            "path": record.scenario_path,
            "type": record.scenario_type,
            "tags": list(record.tags),
        },
        "run": record.number,
        "verdict": record.verdict.value,
        # Harness errors quote what peers sent back (an agent's 500 page, its address): never a credential, never megabytes.
        "error": cut(redact(record.error)) if record.error else record.error,
        "conversation_id": record.conversation_id,
        "ended_because": record.ended_because,
        "duration_s": round(record.duration, 4),
        "latency_s": [round(x, 4) for x in record.latencies],
        # A message is cut to TEXT_LIMIT characters here; the events file keeps it whole.
        "transcript": [{"role": who.lower(), "text": cut(text, f"run_{record.number}.events.jsonl")} for who, text in record.transcript],
        **judged,
    }


def events_jsonl(events: Sequence[Mapping[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(event) + b"\n" for event in events)


def _checks_with(run: Mapping[str, Any], outcome: str) -> list[dict[str, str]]:
    """The checks of a run document with this outcome, each as `{check, detail}`."""
    found = [{"check": a.get("label", a["key"]), "detail": a["detail"]} for a in run.get("assertions", []) if a["outcome"] == outcome]
    found += [{"check": f"SOP {s['id']}", "detail": s["detail"]} for s in run.get("sop", []) if s["outcome"] == outcome]
    found += [{"check": f"criterion {c['criterion']!r}", "detail": c["detail"]} for c in run.get("criteria", []) if c["outcome"] == outcome]
    return found


def failed_checks(run: Mapping[str, Any]) -> list[dict[str, str]]:
    """The checks that failed in a run document, each as `{check, detail}`."""
    return _checks_with(run, "fail")


def errored_checks(run: Mapping[str, Any]) -> list[dict[str, str]]:
    """The checks that came out `error` in a run document (a judge that broke, say), each as `{check, detail}`."""
    return _checks_with(run, "error")


def run_error(run: Mapping[str, Any]) -> str | None:
    """Why an errored run errored: the harness error, else what its errored checks say (so the summary names a judge failure too)."""
    if run.get("error"):
        return run["error"]
    return "; ".join(f"{c['check']}: {c['detail']}" for c in errored_checks(run)) or None


def summary_document(runs: Sequence[Mapping[str, Any]], plan: Mapping[str, Any]) -> dict[str, Any]:
    stats = scenario_stats(runs)
    verdicts = [run["verdict"] for run in runs]
    return {
        "started": plan.get("started"),
        "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "planned_runs": plan.get("total_runs"),
        "completed_runs": len(runs),
        "passed": verdicts.count("pass"),
        "failed": verdicts.count("fail"),
        "errored": verdicts.count("error"),
        "scenarios": [
            {
                "slug": s.slug,
                "name": s.name,
                "runs": s.runs,
                "passed": s.passed,
                "failed": s.failed,
                "errored": s.errored,
                "pass_rate": s.pass_rate,
                "pass_hat_k": {str(k): v for k, v in s.pass_hat().items()},
                "flaky": s.flaky,
            }
            for s in stats
        ],
        "failed_runs": [
            {"slug": run["scenario"]["slug"], "run": run["run"], "failed_checks": failed_checks(run)}
            for run in runs
            if run["verdict"] == "fail"
        ],
        "errored_runs": [
            {"slug": run["scenario"]["slug"], "run": run["run"], "error": run_error(run)}
            for run in runs
            if run["verdict"] == "error"
        ],
    }


def slug_folder(slug: str) -> str:
    """The folder a scenario's runs go in: the slug itself when it is a plain name, else a safe name made from it.

    A slug comes from a file name or from library code, so it may be `..`, hold a `/`, a NUL or be
    very long; none of these may place a file outside the results folder (`safe_file_name`).
    """
    return safe_file_name(slug)


def new_folder(parent: Path, name: str) -> Path:
    """A folder made now under `parent`: `name`, else `name-2`, `name-3`, ... (two batches started in one second)."""
    number = 1
    while True:
        folder = parent / (name if number == 1 else f"{name}-{number}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            number += 1
        except OSError as err:
            raise LoadError.one(f"cannot make the results folder: {err.strerror or err}", str(folder)) from None


class ResultsFolder:
    """One batch's folder: the plan, the run files, the summary."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def claim(self) -> BatchLock:
        """Lock a new or empty folder for a new batch (made if missing); nothing is written when it is not empty."""
        BatchLock.refuse_if_held(self.root)  # a batch running there: say that, not only that the folder is in use
        self._refuse_unless_empty()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise LoadError.one(f"cannot make the results folder: {err.strerror or err}", str(self.root)) from None
        lock = BatchLock.take(self.root)
        try:
            self._refuse_unless_empty()  # a batch that came and went before the lock was taken
        except LoadError:
            lock.release()
            raise
        return lock

    def lock(self) -> BatchLock:
        """Lock the folder of a batch being resumed."""
        return BatchLock.take(self.root)

    def _refuse_unless_empty(self) -> None:
        try:
            entries = sorted(name for name in os.listdir(self.root) if name != LOCK_FILE)
        except FileNotFoundError:
            return
        except OSError as err:
            raise LoadError.one(f"cannot use this as the results folder: {err.strerror or err}", str(self.root)) from None
        if not entries:
            return
        if PLAN in entries:
            advice = f"it holds a batch already: finish that one with --resume {self.root}, or give another folder"
        else:
            advice = f"it holds {', '.join(entries[:3])}{', ...' if len(entries) > 3 else ''}: give another folder"
        raise LoadError.one(f"--results must name a new or empty folder, and this one is not empty ({advice})", str(self.root))

    def run_base(self, slug: str, number: int) -> Path:
        """Where a run's files go (their names add `.json`, `.txt`, `.events.jsonl`); always inside the folder."""
        folder = self.root / slug_folder(slug)
        if folder.is_symlink() and not folder.resolve().is_relative_to(self.root.resolve()):
            raise OSError(f"{folder} is a link to {folder.resolve()}, outside the results folder: results are written only inside it")
        return folder / f"run_{int(number)}"

    @property
    def plan_path(self) -> Path:
        return self.root / PLAN

    def write_plan(self, plan: Plan) -> None:
        write_atomic(self.plan_path, plan.to_json())

    def read_plan(self) -> Plan:
        """The batch's plan, or a `LoadError` at what is wrong with it."""
        return read_plan(self.plan_path)

    def write_run(self, record: RunRecord, document: Mapping[str, Any], text: str) -> None:
        """The run's three files; all are encoded before any is written, and `run_N.json`, its mark of a finished run, last."""
        base = self.run_base(record.slug, record.number)
        events = events_jsonl(record.events)
        encoded = orjson.dumps(document, option=orjson.OPT_INDENT_2)
        write_atomic(base.with_name(base.name + ".events.jsonl"), events)
        write_atomic(base.with_name(base.name + ".txt"), text)
        write_atomic(base.with_name(base.name + ".json"), encoded)

    def write_summary(self, summary: Mapping[str, Any], text: str) -> None:
        write_atomic(self.root / SUMMARY_JSON, orjson.dumps(summary, option=orjson.OPT_INDENT_2))
        write_atomic(self.root / SUMMARY_TXT, text)

    def read_run(self, slug: str, number: int) -> dict[str, Any] | None:
        """A finished run's document, or None when it never finished (or its file is unreadable)."""
        path = self.run_base(slug, number).with_name(f"run_{number}.json")
        try:
            document = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        return document if isinstance(document, dict) and "verdict" in document else None

    def runs(self, plan: Plan | None = None) -> list[dict[str, Any]]:
        """Every finished run of the plan (read from the folder when not given), in plan order."""
        found = (self.read_run(slug, number) for slug, number in (plan or self.read_plan()).run_keys())
        return [run for run in found if run is not None]
