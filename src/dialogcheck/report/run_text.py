"""Text of a batch: `run_N.txt` for one run and `summary.txt` for all.

Pure functions of typed results, so `dialogcheck report` prints a folder it
read back exactly as the run that wrote it did. What came from outside
(messages, errors, details, names) goes through `_shown.shown`: bounded, and
with its control characters and line breaks written as escapes.
"""

from __future__ import annotations

from .._shown import counted, cut, shown, visible
from ..checks.base import Outcome
from ..results.model import BatchResult, RunResult, SimulatorInfo, unfinished_text
from ..results.stats import persona_stats, run_stats
from .check_text import STYLES, WORDS, blame_counts_line, blame_line, outcome_line, rate, render_check_table, render_scenario_rows, render_user_review, with_citations
from .styled import Styled
from .world import world_text


def render_run(run: RunResult) -> Styled:
    """One run: verdict, why it ended, every check, the transcript and the latencies."""
    scenario = run.scenario
    text = Styled(f"{shown(scenario.slug)} run {run.number}", "bold")
    text.append(f"  {shown(str(scenario.name))}\n", "cyan")
    text.append("verdict: ")
    text.append(WORDS[run.verdict], STYLES[run.verdict])
    ended = f"; ended: {shown(run.ended_because)}" if run.ended_because else ""
    text.append(f"  ({round(run.duration, 4):.2f} s{ended})\n")
    if run.persona is not None:
        text.append(f"persona: {shown(run.persona)}\n")
    if run.simulator is not None:
        text.append(f"simulated user: {_simulator(run.simulator)}\n", "dim")
    if run.error:
        text.append(f"error: {shown(run.error)}\n", "bold yellow")
    if run.environment is not None:
        text.extend(world_text(run.environment))
    if run.user_review is not None:
        text.extend(render_user_review(run.user_review, run.suspect_attempts))
    for line in run.checks():
        outcome_line(text, line.outcome, line.title, with_citations(line, cut(line.detail)), "  ")
    if run.blame is not None:
        text.extend(blame_line(run.blame))
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


def _simulator(simulator: SimulatorInfo) -> str:
    """`model, seed 7, 120 in / 30 out tokens, $0.0012`: what played the user and what it spent."""
    usage = simulator.usage
    parts = [shown(simulator.model)]
    if simulator.seed is not None:
        parts.append(f"seed {simulator.seed}")
    parts.append(f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens")
    if usage.cost is not None:
        parts.append(f"${usage.cost:.4f}")
    return ", ".join(parts)


#: Where the failures a summary leaves out can be read.
MORE = "summary.json, report.html or `dialogcheck report --show all`"


def render_summary(batch: BatchResult, *, show_all: bool = False, max_failures: int = 20) -> Styled:
    """Per scenario: runs, passed/failed/errored, pass rate and pass^k; then the failures (each check of every
    run with `show_all`; else the failed checks, the same failure of repeated runs on one line, at most
    `max_failures` lines), the per-check table, and the totals."""
    text = render_scenario_rows(batch.scenarios())
    text.extend(_personas(batch))
    text.extend(_every_check(batch) if show_all else _failures(batch, max_failures))
    text.extend(_unanswered(batch))
    if len(batch.runs) > 1:
        table = render_check_table(run_stats(batch.runs))
        text.extend(Styled("\n").extend(table) if table.pieces else table)
    if batch.interrupted:
        text.append("\nthe batch was interrupted; finish it with --resume\n", "bold yellow")
    if batch.unfinished:
        where = f" {batch.folder}" if batch.folder else ""
        text.append(f"\nunfinished: {unfinished_text(batch.unfinished, batch.planned)}: finish the batch with dialogcheck run --resume{where}\n", "bold yellow")
    done, planned = len(batch.runs), batch.planned
    incomplete = f" of {planned:,} planned" if planned is not None and planned != done else ""
    counts = batch.counts
    text.append(f"\n{counted(done, 'run')}{incomplete}: {counts.verdicts_text()}\n", "bold")
    text.append(blame_counts_line(batch.blame_counts()))
    return text


def _personas(batch: BatchResult) -> Styled:
    """`persona impatient  2/3 passed, 1 failed, 0 errored  pass rate 67%` for each trait of a persona matrix."""
    text = Styled()
    for row in persona_stats(batch.runs):
        counts = row.counts
        text.append(f"{'persona ' + shown(row.slug):<32}", "cyan")
        text.append(f" {counts.passed:,}/{row.runs:,} passed, {counts.failed:,} failed, {counts.errored:,} errored  pass rate {rate(row.pass_rate)}\n")
    return text


def _failures(batch: BatchResult, most: int) -> Styled:
    """`FAIL  slug runs 1-3, 5: check: detail` a failure (runs that failed the same way on one line), then
    `errored: slug run N: reason` alike; past `most` lines, how many more."""
    failed: dict[tuple[str, str, str], list[int]] = {}
    for run in batch.failed_runs():
        for line in run.checks():
            if line.outcome is Outcome.FAIL:
                failed.setdefault((run.slug, line.short_title, line.detail), []).append(run.number)
    errored: dict[tuple[str, str], list[int]] = {}
    for run in batch.errored_runs():
        errored.setdefault((run.slug, str(run.error_reason())), []).append(run.number)
    text, shown_lines = Styled(), 0
    for (slug, title, detail), numbers in failed.items():
        if shown_lines < most:
            text.append(f"FAIL  {shown(slug)} {_runs(numbers)}: ", "bold red")
            text.append(f"{shown(title)}: {shown(detail)}\n")
        shown_lines += 1
    for (slug, reason), numbers in errored.items():
        if shown_lines < most:
            text.append(f"errored: {shown(slug)} {_runs(numbers)}: {shown(reason)}\n", "yellow")
        shown_lines += 1
    for run in batch.suspect_runs():
        if shown_lines < most:
            text.append(f"suspect: {shown(run.slug)} run {run.number}: {shown(_why(run))}\n", "magenta")
        shown_lines += 1
    if shown_lines > most:
        text.append(f"{counted(shown_lines - most, 'more failure')}: see {MORE}\n", "bold")
    return text


def _unanswered(batch: BatchResult) -> Styled:
    """`unanswered: slug runs 1-2: ...` for the runs whose agent reported calls its environment never answered: it
    says it ran its tools somewhere the test cannot see (each run's text names the events)."""
    by_slug: dict[str, list[int]] = {}
    for run in batch.runs:
        if run.environment is not None and run.environment.unanswered:
            by_slug.setdefault(run.slug, []).append(run.number)
    text = Styled()
    for slug, numbers in by_slug.items():
        text.append(f"unanswered: {shown(slug)} {_runs(numbers)}: the agent reported tool calls its environment never answered\n", "yellow")
    return text


def _every_check(batch: BatchResult) -> Styled:
    """Every check of every run, run by run: `--show all`."""
    text = Styled()
    for run in batch.runs:
        text.append(f"\n{shown(run.slug)} run {run.number}: ", "bold")
        text.append(WORDS[run.verdict], STYLES[run.verdict])
        text.append(f"{' (' + shown(str(run.error_reason())) + ')' if run.verdict is Outcome.ERROR else ''}\n")
        if run.user_review is not None and run.user_review.suspect:
            text.extend(render_user_review(run.user_review, run.suspect_attempts))
        for line in run.checks():
            outcome_line(text, line.outcome, line.title, with_citations(line, cut(line.detail)), "  ")
    return text


def _why(run: RunResult) -> str:
    """A suspect run's first reason, and how many attempts were suspect."""
    first = run.user_review.reasons[0] if run.user_review is not None and run.user_review.reasons else None
    where = f"turn {first.turn} " if first is not None and first.turn is not None else ""
    reason = f"{where}{first.rule}: {first.text}" if first is not None else "the simulated user is suspect"
    return f"{reason} ({counted(run.suspect_attempts, 'suspect attempt')})" if run.suspect_attempts > 1 else reason


def _runs(numbers: list[int]) -> str:
    """`run 4`, or `runs 1-3, 5`: run numbers as ranges."""
    if len(numbers) == 1:
        return f"run {numbers[0]}"
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return "runs " + ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans)
