"""Results as `dialogcheck check --format json` and `run` write them, built from short descriptions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from dialogcheck.checks.base import Outcome
from dialogcheck.report.run_text import render_run, render_summary
from dialogcheck.results.files import ResultsFolder
from dialogcheck.results.model import BatchResult, EnvironmentInfo, FaultMet, RunResult, ScenarioInfo
from dialogcheck.results.plan import Plan, PlannedScenario


def document(
    cid: str | None,
    verdict: str,
    assertions: Sequence[tuple[str, str]] = (),
    sop: Sequence[tuple[str, str, str]] = (),
    criteria: Sequence[tuple[str, str]] = (),
    subject: str = "Scenario",
    source: str | None = None,
) -> dict:
    """One conversation's result: `assertions` as (label, outcome), `sop` as (id, type, outcome), `criteria` as (text, outcome)."""
    data: dict = {"source": source or f"log.jsonl#{cid}", "verdict": verdict, "subject": subject}
    if cid is not None:
        data["conversation_id"] = cid
    data["assertions"] = [
        {"index": i, "key": label.split()[0], "label": label, "passed": outcome == "pass", "outcome": outcome, "detail": "why", "evidence": []}
        for i, (label, outcome) in enumerate(assertions, 1)
    ]
    data["sop"] = [
        {"id": step, "type": kind, "label": None, "required": True, "weight": 1.0, "outcome": outcome, "detail": "why", "evidence": []}
        for step, kind, outcome in sop
    ]
    if sop:
        data["sop_outcome"] = "fail" if any(o == "fail" for _, _, o in sop) else "pass"
        data["sop_score"] = 1.0
    data["criteria"] = [{"criterion": text, "outcome": outcome, "detail": "why"} for text, outcome in criteria]
    return data


def batch_bytes(documents: Iterable[dict]) -> bytes:
    """`check --format json` of several conversations: `{"conversations": [`, a conversation a line, `], "summary": ...}`."""
    docs = list(documents)
    counts = {v: sum(d["verdict"] == v for d in docs) for v in ("pass", "fail", "error")}
    summary = {"conversations": len(docs), "passed": counts["pass"], "failed": counts["fail"], "errored": counts["error"]}
    return b'{"conversations": [\n' + b",\n".join(orjson.dumps(d) for d in docs) + b'\n], "summary": ' + orjson.dumps(summary) + b"}\n"


def write_batch(path: Path, documents: Iterable[dict]) -> Path:
    path.write_bytes(batch_bytes(documents))
    return path


def simple(cid: str, verdict: str, subject: str = "Scenario") -> dict:
    """A conversation with one assertion whose outcome is the verdict."""
    return document(cid, verdict, [("skill_completed card_replace", verdict)], subject=subject)


#: A run of a `run` results folder: its scenario's slug, its verdict, and its environment (None: it had none).
RunSpec = tuple[str, str, EnvironmentInfo | None]


def environment(faults_on: bool, *kinds: str) -> EnvironmentInfo:
    """A run's environment whose schedule was on or off, and the faults of these kinds it met (one call each)."""
    faults = tuple(FaultMet(kind, "cancel_order", index, 2 * index) for index, kind in enumerate(kinds, 1))
    return EnvironmentInfo("shop", 7, faults_on, calls=len(kinds) + 1, faults=faults)


def write_run_folder(root: Path, runs: Iterable[RunSpec]) -> Path:
    """A `run` results folder holding these runs, numbered from 1 per scenario, written by the results writer."""
    folder = ResultsFolder(root)
    results, counts = [], {}
    for slug, verdict, env in runs:
        counts[slug] = counts.get(slug, 0) + 1
        outcome = Outcome(verdict)
        error = "agent: down" if outcome is Outcome.ERROR else None
        results.append(RunResult(ScenarioInfo(slug, f"Scenario {slug}", f"eval/scenarios/{slug}.yml"), counts[slug], outcome, error=error, environment=env))
    folder.write_plan(Plan(scenarios=[PlannedScenario(slug=slug, path=f"eval/scenarios/{slug}.yml", runs=n) for slug, n in counts.items()], total_runs=len(results)))
    for run in results:
        folder.write_run(run, render_run(run).plain)
    batch = BatchResult(tuple(results), planned=len(results), started="2026-12-03T18:00:00Z")
    folder.write_summary(batch, render_summary(batch).plain)
    return root
