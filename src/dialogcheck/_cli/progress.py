"""Progress of a long batch on stderr: a live bar on a terminal, a plain line at intervals everywhere else.

A CI log shows nothing of a batch until it ends unless something is written
while it runs; a line every `interval` seconds (10 by default,
`DIALOGCHECK_PROGRESS_INTERVAL` to change it) says how far it got without
flooding the log. The line is written by a timer thread from the last counts
it was given, so a batch waiting on a slow agent still shows it is alive.

On a terminal whose stdout is a terminal too (`check` prints failures as it
goes), the bar leaves its line before anything is written to stdout and comes
back under it with the next count, so no line starts glued to the bar.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TYPE_CHECKING

from .._redact import mask
from .._shown import visible
from ..checks.base import Outcome
from ..results.model import Counts
from .output import console

if TYPE_CHECKING:
    from rich.progress import Progress as Bar

#: Seconds between two plain progress lines when stderr is not a terminal.
INTERVAL_SECONDS = 10.0
#: Seconds the bar stays away after something was written under it, so a stream of writes does not redraw it each time.
AWAY_SECONDS = 0.5


def _interval() -> float:
    given = os.environ.get("DIALOGCHECK_PROGRESS_INTERVAL")
    try:
        return max(float(given), 0.05) if given else INTERVAL_SECONDS
    except ValueError:
        return INTERVAL_SECONDS


def _elapsed(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


class Progress:
    """How many of a batch's conversations or runs are done, and how they ended, while it runs.

    `noun` names what is counted (`conversations`, `runs`); `total`, when known, is how many are planned.
    """

    def __init__(self, noun: str, total: int | None = None) -> None:
        self.noun, self.total = noun, total
        self.counts = Counts()
        self.current = ""
        self.started = time.monotonic()
        self._bar: Bar | None = None
        #: When the bar last left its line for something written to stdout (None while it is shown).
        self._away: float | None = None
        self._stdout = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if sys.stderr.isatty():
            self._start_bar()
            if sys.stdout.isatty():
                self._stdout, sys.stdout = sys.stdout, _Clearing(sys.stdout, self.clear)  # type: ignore[assignment]  # a file-like wrapper of stdout
        else:
            self._thread = threading.Thread(target=self._tick, name="dialogcheck-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._stdout is not None:
            sys.stdout = self._stdout
        if self._bar is not None and self._away is None:
            self._bar.stop()

    def clear(self) -> None:
        """Take the bar off its line (it is transient: the line is left empty), for text written to the terminal."""
        if self._bar is not None and self._away is None:
            self._bar.stop()
            self._away = time.monotonic()

    def add(self, done: Outcome | Counts, current: str = "") -> None:
        """Count what just finished: one verdict, or a chunk's counts (`current` names the last one, on the bar)."""
        if isinstance(done, Counts):
            self.counts.update(done)
        else:
            self.counts.add(done)
        self.current = current
        if self._away is not None and time.monotonic() - self._away >= AWAY_SECONDS:
            self._away = None
            self._bar.start()  # type: ignore[union-attr]  # `_away` is set only while a bar shows
        if self._bar is not None:
            self._bar.update(self._task, completed=self.counts.total, description=self._label(), tally=self.tally())

    def _label(self) -> str:
        """What the bar names: the last one done (a scenario's slug, from a file name: outside text), as plain escaped text."""
        return visible(mask(self.current)) if self.current else "checking"

    def tally(self) -> str:
        return self.counts.verdicts_text()

    def line(self) -> str:
        """The plain progress line: `dialogcheck: 1,200 of 5,000 runs done (...), 30 s`."""
        done = f"{self.counts.total:,} of {self.total:,}" if self.total is not None else f"{self.counts.total:,}"
        return f"dialogcheck: {done} {self.noun} done ({self.tally()}), {_elapsed(time.monotonic() - self.started)}\n"

    def _tick(self) -> None:
        interval = _interval()
        while not self._stop.wait(interval):
            sys.stderr.write(mask(self.line()))
            sys.stderr.flush()

    def _start_bar(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn

        columns = [TextColumn("{task.description}", style="bold", markup=False), BarColumn()]  # a file named `[link=...]x.yml` is no markup
        columns += [MofNCompleteColumn()] if self.total is not None else [TextColumn("{task.completed:,} " + self.noun)]
        self._bar = Bar(*columns, TextColumn("{task.fields[tally]}"), TimeElapsedColumn(), console=console(stderr=True), transient=True, redirect_stdout=False)
        self._task = self._bar.add_task(self._label(), total=self.total, tally="")
        self._bar.start()


class _Clearing:
    """stdout while the bar is live: the bar leaves its line before text or bytes are written (rich's own redirect
    would print stdout's text on the bar's console, stderr, and `buffer` writes would still pass under the bar)."""

    def __init__(self, stream, clear) -> None:
        self._stream, self._clear = stream, clear

    def write(self, text: str) -> int:
        self._clear()
        return self._stream.write(text)

    @property
    def buffer(self):
        buffer = getattr(self._stream, "buffer", None)
        return None if buffer is None else _Clearing(buffer, self._clear)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
