"""Text of a batch: `run_N.txt` for one run and `summary.txt` for all.

Pure functions of typed results, so `dialogcheck report` prints a folder it
read back exactly as the run that wrote it did. What came from outside
(messages, errors, details, names) goes through `_shown.shown`: bounded, and
with its control characters and line breaks written as escapes.
"""

from __future__ import annotations

from .._shown import cut, shown, visible
from ..checks.base import Outcome
from ..results.model import BatchResult, RunResult
from .styled import Styled
from .text import STYLES, WORDS, outcome_line


def render_run(run: RunResult) -> Styled:
    """One run: verdict, why it ended, every check, the transcript and the latencies."""
    scenario = run.scenario
    text = Styled(f"{shown(scenario.slug)} run {run.number}", "bold")
    text.append(f"  {shown(str(scenario.name))}\n", "cyan")
    text.append("verdict: ")
    text.append(WORDS[run.verdict], STYLES[run.verdict])
    ended = f"; ended: {shown(run.ended_because)}" if run.ended_because else ""
    text.append(f"  ({round(run.duration, 4):.2f} s{ended})\n")
    if run.error:
        text.append(f"error: {shown(run.error)}\n", "bold yellow")
    for line in run.checks():
        outcome_line(text, line.outcome, line.title, cut(line.detail), "  ")
    if run.transcript:
        text.append("\ntranscript:\n", "bold")
        user_turn = 0
        for said in run.transcript:
            who = "USER " if said.role == "user" else "AGENT"
            if said.role == "user":
                user_turn += 1
            text.append(f"  {who} {visible(cut(said.text, f'run_{run.number}.events.jsonl'))}")
            if said.role == "user" and user_turn <= len(run.latencies):
                text.append(f"   ({round(run.latencies[user_turn - 1], 4):.2f} s)", "dim")
            text.append("\n")
    return text


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def render_summary(batch: BatchResult) -> Styled:
    """Per scenario: runs, passed/failed/errored, pass rate and pass^k; then the failures and the totals."""
    text = Styled()
    for row in batch.scenarios():
        counts = row.counts
        style = "green" if counts.failed == 0 and counts.errored == 0 else "red" if counts.failed else "yellow"
        text.append(f"{shown(row.slug):<32}", style)
        hats = " ".join(f"pass^{k} {_rate(v)}" for k, v in row.pass_hat().items()) if row.runs > 1 else ""
        text.append(
            f" {counts.passed}/{row.runs} passed, {counts.failed} failed, {counts.errored} errored"
            f"  pass rate {_rate(row.pass_rate)}  {hats}".rstrip()
        )
        text.append("  flaky\n" if row.flaky else "\n", "bold yellow")
    for run in batch.failed_runs():
        for line in run.checks():
            if line.outcome is Outcome.FAIL:
                text.append(f"FAIL  {shown(run.slug)} run {run.number}: ", "bold red")
                text.append(f"{shown(line.short_title)}: {shown(line.detail)}\n")
    for run in batch.errored_runs():
        reason = run.error_reason()
        text.append(f"errored: {shown(run.slug)} run {run.number}: {shown(str(reason))}\n", "yellow")
    if batch.interrupted:
        text.append("\nthe batch was interrupted; finish it with --resume\n", "bold yellow")
    done, planned = len(batch.runs), batch.planned
    incomplete = f" of {planned} planned" if planned is not None and planned != done else ""
    counts = batch.counts
    text.append(f"\n{done} runs{incomplete}: {counts.passed} passed, {counts.failed} failed, {counts.errored} errored\n", "bold")
    return text
