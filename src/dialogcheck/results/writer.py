"""Writing a batch's results from one thread, so the event loop only hands finished runs over.

Encoding a run and writing its files costs a few milliseconds of CPU a run;
done on the event loop, fifty runs in flight wait behind it. A single writer
thread keeps files in finishing order (the summary always follows the runs
it counts). The runs it wrote stay in memory: the summary and the reports at
the end are made from them, never read back from the folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timezone

from ..checks.base import Outcome
from .files import ResultsFolder
from .model import BatchResult, RunResult
from .plan import Plan

#: Seconds between rewrites of the summary while a batch runs (the final one is written after it).
SUMMARY_EVERY = 1.0


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class BatchWriter:
    """`add` each finished run; `close` waits until every file is on disk and raises the first failed write.

    `render_run` and `render_summary` give the text of `run_N.txt` and `summary.txt`: the caller's
    renderers, so this layer only moves data.
    """

    def __init__(
        self,
        folder: ResultsFolder,
        plan: Plan,
        finished: Iterable[RunResult],
        render_run: Callable[[RunResult], str],
        render_summary: Callable[[BatchResult], str],
    ):
        self.folder = folder
        self.plan = plan
        self.runs: list[RunResult] = list(finished)  # runs an earlier process finished (a resumed batch), then each one written
        self._render_run = render_run
        self._render_summary = render_summary
        self._last_summary = float("-inf")  # the first run writes one at once
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dialogcheck-results")
        self._writes: list[Future] = []

    def add(self, run: RunResult) -> None:
        self._writes.append(self._thread.submit(self._write, run))

    def batch(self, interrupted: bool | None = None) -> BatchResult:
        """The batch so far, in plan order."""
        order = {key: i for i, key in enumerate(self.plan.run_keys())}
        runs = sorted(self.runs, key=lambda run: order.get(run.key, len(order)))
        return BatchResult(tuple(runs), self.plan.total_runs, self.plan.started, now(), interrupted, str(self.folder.root))

    def write_summary(self, batch: BatchResult) -> None:
        self.folder.write_summary(batch, self._render_summary(batch))

    def _write(self, run: RunResult) -> None:
        try:
            self.folder.write_run(run, self._render_run(run))
        except TypeError as err:  # a value JSON cannot hold (orjson's error is a TypeError); nothing of the run was written
            run = unwritable(run, err)
            self.folder.write_run(run, self._render_run(run))
        self.runs.append(run)
        moment = time.monotonic()
        if moment - self._last_summary >= SUMMARY_EVERY:
            self.write_summary(self.batch())
            self._last_summary = moment

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        for write in self._writes:
            if (error := write.exception()) is not None:
                raise error


def unwritable(run: RunResult, err: Exception) -> RunResult:
    """The run as an errored one that says why it could not be written, without the parts that could not be.

    Agents' answers are made plain JSON where they are read, so this is the net
    under any other way such a value might come in: one run is errored, the batch
    and every other run's files go on.
    """
    return replace(
        run,
        verdict=Outcome.ERROR,
        error=f"the run's record cannot be written as JSON ({err}); its events, transcript and checks are left out",
        conversation=None,
        events=(),
        record=None,
        transcript=(),
    )
