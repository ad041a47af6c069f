"""`explain`: why one run of a results folder did not pass: its failed and errored checks with their evidence.

What the MCP server's `explain` tool answers; the text is `report.explain`'s, as a pytest report shows a run.
"""

from __future__ import annotations

import re

from .._shown import clip, listed
from ..results.plan import MAX_RUNS
from .answer import EXIT_BAD_INPUT, Answer, CommandError, exit_code_of

#: How a run is named: `SLUG/run_N` (its files), `SLUG[run-N]` (its pytest id), or `SLUG` for run 1.
#: N has at most as many digits as `MAX_RUNS`: a longer number names no run, and `int` would refuse one of 4,300.
RUN_NAME = re.compile(rf"(?P<slug>.+?)(?:/run_(?P<file>\d{{1,{len(str(MAX_RUNS))}}})|\[run-(?P<item>\d{{1,{len(str(MAX_RUNS))}}})\])?")


def explain(folder: str, run: str, *, named: str | None = None) -> Answer:
    """The run `run` names in `folder`: its verdict, harness error, and each failed or errored check with its detail
    and evidence events; the exit code is the run's. `LoadError` for a missing or broken folder; `CommandError`
    for a run the folder does not hold, or one its batch planned and never finished. Messages name the folder as
    `named` (default: `folder`), the name its caller gave."""
    from ..checks.base import Outcome
    from ..report.explain import render_run_explanation
    from ..results.load import load_results

    batch = load_results(folder)
    folder = named or folder
    match = RUN_NAME.fullmatch(run)
    slug, number = match.group("slug"), int(match.group("file") or match.group("item") or 1)  # type: ignore[union-attr]  # the pattern matches any name of one character or more
    chosen = next((one for one in batch.runs if one.key == (slug, number)), None)
    if chosen is None and (slug, number) in batch.unfinished:
        raise CommandError(f"run {clip(run, 120)!r} of {folder} was planned but never finished: finish the batch with dialogcheck run --resume {folder}")
    if chosen is None:
        names = listed([f"{one.slug}/run_{one.number}" for one in batch.runs], 20)
        raise CommandError(f"no run {clip(run, 120)!r} in {folder}: its runs are {names or 'none'}", EXIT_BAD_INPUT)
    events = list(chosen.events)
    failing = [
        {
            "kind": str(line.kind), "index": line.index, "key": line.key, "check": line.title, "outcome": line.outcome.value,
            "detail": line.detail, "evidence": [{"index": i, "event": events[i] if i < len(events) else None} for i in line.evidence],
        }
        for line in chosen.checks()
        if line.outcome in (Outcome.FAIL, Outcome.ERROR)
    ]
    document = {"slug": chosen.slug, "run": chosen.number, "verdict": chosen.verdict.value, "error": chosen.error, "failing_checks": failing}
    return Answer(document, render_run_explanation(chosen), exit_code_of(chosen.verdict))
