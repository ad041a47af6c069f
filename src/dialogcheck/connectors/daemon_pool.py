"""Worker threads for an in-process agent's calls that never hold up the end of the process.

`concurrent.futures.ThreadPoolExecutor` joins its threads when the interpreter
exits, so a call that blocks (an agent asleep, waiting on a socket) would keep
`dialogcheck run` alive after SIGTERM or Ctrl-C until the call returns. These
threads are daemons: a cancelled batch ends at once, its unfinished calls
abandoned with the process. At most `size` threads run, made as calls need them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

_STOP = None


class DaemonPool:
    """`submit(fn)`: `fn()` on one of at most `size` daemon threads, its outcome in the `Future` returned."""

    def __init__(self, size: int, name: str):
        self._size, self._name = size, name
        self._jobs: queue.SimpleQueue[tuple[Future, Callable[[], Any]] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._started = self._idle = self._waiting = 0
        self._closed = False

    def submit(self, fn: Callable[[], Any]) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the pool is shut down")
            self._jobs.put((future, fn))
            self._waiting += 1
            if self._waiting > self._idle and self._started < self._size:
                self._started += 1
                threading.Thread(target=self._work, name=f"{self._name}-{self._started}", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
                if job is not _STOP:
                    self._waiting -= 1
            if job is _STOP:
                return
            future, fn = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as err:  # noqa: BLE001 - whatever the call raises is its outcome
                future.set_exception(err)
            else:
                future.set_result(result)

    def shutdown(self) -> None:
        """Cancel the calls not started; the threads end once their call returns (or with the process)."""
        with self._lock:
            self._closed = True
            started = self._started
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not _STOP:
                job[0].cancel()
        for _ in range(started):
            self._jobs.put(_STOP)
