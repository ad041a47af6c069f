"""Text of a batch: `run_N.txt` for one run and `summary.txt` for all, from the results documents.

Both read the JSON documents of the results folder, so `dialogcheck report`
prints a folder exactly as the run that wrote it did. What came from outside
(messages, errors, details, names) goes through `_shown.shown`: bounded, and
with its control characters and line breaks written as escapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from .._shown import shown
from ..checks.base import Outcome
from .text import STYLES, WORDS


def _outcome(value: str) -> Outcome:
    return Outcome(value)


def _line(text: Text, outcome: str, label: str, detail: str) -> None:
    o = _outcome(outcome)
    text.append(f"  {WORDS[o]:<5}", style=STYLES[o])
    text.append(f" {shown(label)}: {shown(detail)}\n" if detail else f" {shown(label)}\n")


def render_run(run: Mapping[str, Any]) -> Text:
    """One run: verdict, why it ended, every check, the transcript and the latencies."""
    scenario = run["scenario"]
    verdict = _outcome(run["verdict"])
    text = Text()
    text.append(f"{shown(scenario['slug'])} run {run['run']}", style="bold")
    text.append(f"  {shown(str(scenario['name']))}\n", style="cyan")
    text.append("verdict: ")
    text.append(WORDS[verdict], style=STYLES[verdict])
    ended = f"; ended: {shown(run['ended_because'])}" if run.get("ended_because") else ""
    text.append(f"  ({run['duration_s']:.2f} s{ended})\n")
    if run.get("error"):
        text.append(f"error: {shown(run['error'])}\n", style="bold yellow")
    for item in run.get("assertions", []):
        _line(text, item["outcome"], item.get("label", item["key"]), item["detail"])
    for step in run.get("sop", []):
        _line(text, step["outcome"], f"SOP {step['id']} {step.get('label') or step['type']}", step["detail"])
    for criterion in run.get("criteria", []):
        _line(text, criterion["outcome"], f"criterion {criterion['criterion']!r}", criterion["detail"])
    if run.get("transcript"):
        text.append("\ntranscript:\n", style="bold")
        latencies = list(run.get("latency_s", []))
        user_turn = 0
        for line in run["transcript"]:
            who = "USER " if line["role"] == "user" else "AGENT"
            if line["role"] == "user":
                user_turn += 1
            text.append(f"  {who} {shown(line['text'])}")
            if line["role"] == "user" and user_turn <= len(latencies):
                text.append(f"   ({latencies[user_turn - 1]:.2f} s)", style="dim")
            text.append("\n")
    return text


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def render_summary(summary: Mapping[str, Any]) -> Text:
    """Per scenario: runs, passed/failed/errored, pass rate and pass^k; then the totals."""
    text = Text()
    for row in summary["scenarios"]:
        flaky = "  flaky" if row["flaky"] else ""
        style = "green" if row["failed"] == 0 and row["errored"] == 0 else "red" if row["failed"] else "yellow"
        text.append(f"{shown(row['slug']):<32}", style=style)
        hats = " ".join(f"pass^{k} {_rate(v)}" for k, v in row["pass_hat_k"].items()) if row["runs"] > 1 else ""
        text.append(
            f" {row['passed']}/{row['runs']} passed, {row['failed']} failed, {row['errored']} errored"
            f"  pass rate {_rate(row['pass_rate'])}  {hats}".rstrip()
        )
        text.append(f"{flaky}\n", style="bold yellow")
    for run in summary.get("failed_runs", []):
        for failed in run["failed_checks"]:
            text.append(f"FAIL  {shown(run['slug'])} run {run['run']}: ", style="bold red")
            text.append(f"{shown(failed['check'])}: {shown(failed['detail'])}\n")
    for run in summary["errored_runs"]:
        text.append(f"errored: {shown(run['slug'])} run {run['run']}: {shown(str(run['error']))}\n", style="yellow")
    if summary.get("interrupted"):
        text.append("\nthe batch was interrupted; finish it with --resume\n", style="bold yellow")
    planned = summary.get("planned_runs")
    done = summary["completed_runs"]
    incomplete = f" of {planned} planned" if planned is not None and planned != done else ""
    text.append(
        f"\n{done} runs{incomplete}: {summary['passed']} passed, {summary['failed']} failed, {summary['errored']} errored\n",
        style="bold",
    )
    return text
