"""Writing a batch's results from one thread, so the event loop only hands finished runs over.

Building a run's document and text and writing its files costs a few
milliseconds of CPU a run; done on the event loop, fifty runs in flight wait
behind it. A single writer thread keeps files in finishing order (the summary
always follows the runs it counts) and is drained before the folder is read back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from ..checks.base import Outcome
from .files import ResultsFolder, run_document, summary_document
from .model import RunRecord

#: Seconds between rewrites of the summary while a batch runs (the final one is written after it).
SUMMARY_EVERY = 1.0


class BatchWriter:
    """`add` each finished run; `close` waits until every file is on disk and raises the first failed write."""

    def __init__(
        self,
        folder: ResultsFolder,
        plan: Mapping[str, Any],
        documents: list[dict[str, Any]],
        render_run: Callable[[Mapping[str, Any]], str],
        render_summary: Callable[[Mapping[str, Any]], str],
    ):
        self.folder = folder
        self.plan = plan
        self.documents = documents  # runs already on disk (a resumed batch), then each one written
        self._render_run = render_run
        self._render_summary = render_summary
        self._last_summary = float("-inf")  # the first run writes one at once
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dialogcheck-results")
        self._writes: list[Future] = []

    def add(self, record: RunRecord) -> None:
        self._writes.append(self._thread.submit(self._write, record))

    def _write(self, record: RunRecord) -> None:
        try:
            document = self._write_run(record)
        except TypeError as err:  # a value JSON cannot hold (orjson's error is a TypeError); nothing of the run was written
            document = self._write_run(unwritable(record, err))
        self.documents.append(document)
        now = time.monotonic()
        if now - self._last_summary >= SUMMARY_EVERY:
            summary = summary_document(self.documents, self.plan)
            self.folder.write_summary(summary, self._render_summary(summary))
            self._last_summary = now

    def _write_run(self, record: RunRecord) -> dict[str, Any]:
        document = run_document(record)
        self.folder.write_run(record, document, self._render_run(document))
        return document

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        for write in self._writes:
            if write.exception() is not None:
                raise write.exception()


def unwritable(record: RunRecord, err: Exception) -> RunRecord:
    """The run as an errored one that says why it could not be written, without the parts that could not be.

    Agents' answers are made plain JSON where they are read, so this is the net
    under any other way such a value might come in: one run is errored, the batch
    and every other run's files go on.
    """
    return replace(
        record,
        verdict=Outcome.ERROR,
        error=f"the run's record cannot be written as JSON ({err}); its events, transcript and checks are left out",
        result=None,
        events=(),
        transcript=(),
    )
