"""What goes in a results folder, and reading it back (for `--resume` and `dialogcheck report`).

```
<results>/plan.json  summary.txt  summary.json
<results>/<slug>/run_N.json  run_N.txt  run_N.events.jsonl
```
Every file is written atomically; a run's files are written the moment it
finishes, the summary after every run, so a batch killed midway leaves a
readable folder that `--resume` completes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from .._paths import safe_file_name
from .._redact import redact
from ..report.data import conversation_dict
from .atomic import write_atomic
from .model import RunRecord, scenario_stats

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
        # Harness errors quote what peers sent back (an agent's 500 page, its address): never a credential.
        "error": redact(record.error) if record.error else record.error,
        "conversation_id": record.conversation_id,
        "ended_because": record.ended_because,
        "duration_s": round(record.duration, 4),
        "latency_s": [round(x, 4) for x in record.latencies],
        "transcript": [{"role": who.lower(), "text": text} for who, text in record.transcript],
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


class ResultsFolder:
    """One batch's folder: the plan, the run files, the summary."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def run_base(self, slug: str, number: int) -> Path:
        """Where a run's files go (their names add `.json`, `.txt`, `.events.jsonl`); always inside the folder."""
        folder = self.root / slug_folder(slug)
        if folder.is_symlink() and not folder.resolve().is_relative_to(self.root.resolve()):
            raise OSError(f"{folder} is a link to {folder.resolve()}, outside the results folder: results are written only inside it")
        return folder / f"run_{int(number)}"

    def write_plan(self, plan: Mapping[str, Any]) -> None:
        write_atomic(self.root / PLAN, orjson.dumps(plan, option=orjson.OPT_INDENT_2))

    def read_plan(self) -> dict[str, Any]:
        return orjson.loads((self.root / PLAN).read_bytes())

    def write_run(self, record: RunRecord, document: Mapping[str, Any], text: str) -> None:
        base = self.run_base(record.slug, record.number)
        write_atomic(base.with_name(base.name + ".events.jsonl"), events_jsonl(record.events))
        write_atomic(base.with_name(base.name + ".txt"), text)
        write_atomic(base.with_name(base.name + ".json"), orjson.dumps(document, option=orjson.OPT_INDENT_2))

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

    def runs(self) -> list[dict[str, Any]]:
        """Every finished run of the plan, in plan order."""
        plan = self.read_plan()
        found = (self.read_run(item["slug"], n) for item in plan["scenarios"] for n in range(1, item["runs"] + 1))
        return [run for run in found if run is not None]
