"""The local engine: chunks checked in this process, or in worker processes with results kept in input order.

Workers take chunks from a bounded window (a few per worker), so however big
the input, only that many chunks' results wait in memory; the main process
writes each chunk's results as soon as every chunk before it is written.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice

from ..results.model import ConversationResult
from ..results.stats import CheckStats
from .work import CheckJob, ChunkResult, ShardWriter, check_chunk, checked_in_order

#: Chunks handed to workers ahead of the one being written, per worker.
AHEAD_PER_WORKER = 2

_job: CheckJob | None = None


class WorkerLost(Exception):
    """A worker process ended before it gave back its chunk's results (killed by a signal, by the OOM killer):
    the batch cannot be complete, and the input is not to blame."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _start_worker(job: CheckJob) -> None:
    global _job
    _job = job


def _check_in_worker(index: int, chunk, write_shard: ShardWriter | None) -> ChunkResult:
    assert _job is not None
    return check_chunk(_job, chunk, index=index, write_shard=write_shard)


def _context():
    """Fork when nothing else runs here (the CLI): workers start at once with the job in memory.

    With other threads alive (the CLI under a test runner, a library caller), forking could copy a held
    lock, so workers come from a fork server instead.
    """
    import multiprocessing
    import sys
    import threading

    if sys.platform == "linux" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if sys.platform != "win32" else "spawn")


def _in_workers(job: CheckJob, chunks: Iterable, jobs: int, write_shard: ShardWriter | None = None) -> Iterator[ChunkResult]:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=_start_worker, initargs=(job,))
    try:
        todo = enumerate(chunks)
        try:
            waiting = deque(pool.submit(_check_in_worker, i, chunk, write_shard) for i, chunk in islice(todo, jobs * AHEAD_PER_WORKER))
            while waiting:
                result = waiting.popleft().result()
                for i, chunk in islice(todo, 1):
                    waiting.append(pool.submit(_check_in_worker, i, chunk, write_shard))
                yield result
        except (BrokenProcessPool, EOFError):  # EOFError: the fork server the workers come from is gone
            raise WorkerLost(
                "a worker process ended before it gave back its results (killed by a signal, or by the system when memory"
                " ran out): the batch is incomplete; run it again, with fewer worker processes if memory is short"
            ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # chunks in flight finish first: no shard is written later


def results_in_order(
    job: CheckJob, chunks: Iterable, jobs: int = 1, *, judge=None, metrics: tuple[str, ...] = (), stats: CheckStats | None = None
) -> Iterator[ConversationResult]:
    """Every conversation of `chunks` judged into a typed result, in input order, each counted in `stats`; the
    first bad record raises `LoadError`.

    With a judge, conversations are judged in this process whatever `jobs` says: the judge's client holds
    the one limit on LLM calls in flight, and waiting on the LLM, not checking, takes the time.
    """
    if jobs <= 1 or judge is not None:
        for chunk in chunks:
            yield from checked_in_order(job, chunk.read(), judge=judge, metrics=metrics, stats=stats)
        return
    for result in _in_workers(job, chunks, jobs):
        if stats is not None:
            stats.merge(result.stats)
        yield from result.results
        result.raise_problems()


def encoded_in_order(job: CheckJob, chunks: Iterable, jobs: int, *, stats: CheckStats | None = None) -> Iterator[ChunkResult]:
    """The adapter of `work.Encoding`: in worker processes, each chunk's results encoded by `job.encoding` where
    they were checked, one `ChunkResult` a chunk in input order (its first result typed); the first bad record
    raises `LoadError`."""
    assert job.encoding is not None and jobs > 1
    for result in _in_workers(job, chunks, jobs):
        if stats is not None:
            stats.merge(result.stats)
        if result.counts.total:
            yield result
        result.raise_problems()


def shards_in_order(
    job: CheckJob, chunks: Iterable, jobs: int, write_shard: ShardWriter, *, judge=None, metrics: tuple[str, ...] = ()
) -> Iterator[ChunkResult]:
    """Each chunk's results written to its own shard (by whichever process checked it); counts in order.

    A chunk with a bad record writes no shard and carries its problems; the caller stops there.
    """
    if jobs <= 1 or judge is not None:
        for i, chunk in enumerate(chunks):
            yield check_chunk(job, chunk, index=i, write_shard=write_shard, judge=judge, metrics=metrics)
        return
    yield from _in_workers(job, chunks, jobs, write_shard)
