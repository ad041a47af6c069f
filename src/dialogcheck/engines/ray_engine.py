"""The Ray engine: the local engine's chunks, checked as Ray Data tasks that each write one result shard.

Inputs are local paths or object-store URIs (`s3://`, `gs://`, ... through
pyarrow, as Ray Data reads them): JSONL (one conversation a line, cut into
byte ranges as the local engine cuts them), other native files whole, and
Parquet with one conversation a row (see `engines.parquet`), a chunk per row
group. Ray's own readers would lose the line numbers that error messages and
`file#line` names need, so the plan is made here and Ray Data only carries
chunks to tasks: a first pass counts newlines per range (so each chunk knows
its first line number), the second runs `work.check_chunk` on each chunk and
writes its shard. Only counts and the first bad record come back to the
driver; without an output folder (`check_conversations(engine="ray")`), each
chunk's typed results come back instead, put in input order by the driver.
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import orjson

from ..checks.base import Outcome
from ..errors import LoadError, Problem, os_reason
from ..events.load import CONVERSATION_SUFFIXES
from ..results.model import ConversationResult, Counts
from ..results.stats import CheckStats
from . import EngineError, RayUnavailable
from .chunks import (
    PARQUET_SUFFIXES,
    LineRange,
    Unreadable,
    WholeFile,
    first_line_number,
    holds_conversation_lines,
    input_files,
    local_line_ranges,
)
from .parquet import row_groups
from .shards import remove_shards, write_shard
from .storage import file_size, is_uri, list_files, open_binary
from .work import CheckJob, check_chunk

INSTALL_HINT = "--engine ray needs Ray: pip install 'dialogcheck[ray]'"
#: Input bytes per Ray task: each task also writes a shard, so fewer, bigger ones than the local engine's.
CHUNK_BYTES = 16 << 20
SUFFIXES = CONVERSATION_SUFFIXES + PARQUET_SUFFIXES


@dataclass
class RayOutcome:
    """What the driver learns: verdict counts, whether a check errored, and the shards written (or, without an
    output folder, the typed results in input order)."""

    counts: Counts
    any_error: bool
    shards: list[str]
    warnings: list[Problem] = field(default_factory=list)  # probable typos in names, in input order
    stats: CheckStats = field(default_factory=CheckStats)
    results: list[ConversationResult] = field(default_factory=list)


def ray_inputs(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(name shown, where tasks read it) for every input file, folders expanded and sorted."""
    found: list[tuple[str, str]] = []
    for raw in paths:
        if not is_uri(raw):
            found.extend((str(p), os.path.abspath(p)) for p in input_files([raw], with_parquet=True))
            continue
        try:
            listed = list_files(raw, SUFFIXES)
        except (OSError, ValueError) as err:
            raise LoadError.one(f"cannot list: {err}", raw) from None
        if listed == []:
            raise LoadError.one("no such file or folder (or no .json, .jsonl, .parquet files in it)", raw)
        found.extend([(raw, raw)] if listed is None else [(uri, uri) for uri in listed])
    return found


def _plan(files: list[tuple[str, str]], chunk_bytes: int) -> list:
    """Chunks, with a `(file, path, start, end)` placeholder for each byte range of an object-store file
    (whose first line number a pass of tasks counts)."""
    plan: list = []
    for file, path in files:
        try:
            if path.endswith(".parquet"):
                plan.extend(row_groups(file, path))
                continue
            size = file_size(path)
            if not (size > chunk_bytes and holds_conversation_lines(path)):
                plan.append(WholeFile(file, path))
            elif not is_uri(path):  # counted here as the local engine counts, cheaper than a pass of tasks
                plan.extend(local_line_ranges(file, path, chunk_bytes))
            else:
                plan.extend((file, path, start, min(start + chunk_bytes, size)) for start in range(0, size, chunk_bytes))
        except LoadError as err:
            plan.append(Unreadable(file, err))
        except OSError as err:
            plan.append(Unreadable(file, LoadError.of_os("cannot read file", err, file)))
    return plan


def _count_newlines(batch):
    """Pass 1, per byte range: how many newlines it holds and whether it ends with one."""
    newlines, ends = [], []
    for path, start, end in zip(batch["path"], batch["start"], batch["end"]):
        with open_binary(str(path)) as handle:
            handle.seek(int(start))
            data = handle.read(int(end) - int(start))
        newlines.append(data.count(b"\n"))
        ends.append(data.endswith(b"\n"))
    return {"index": batch["index"], "newlines": newlines, "ends_with_newline": ends}


def _numbered(plan: list, ray) -> list:
    """The plan with each byte range turned into a `LineRange` that knows its first line number."""
    ranges = [(i, item) for i, item in enumerate(plan) if isinstance(item, tuple)]
    if not ranges:
        return plan
    rows = [{"index": i, "path": item[1], "start": item[2], "end": item[3]} for i, item in ranges]
    counted = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(_count_newlines, batch_size=1)
    counts = {int(row["index"]): (int(row["newlines"]), bool(row["ends_with_newline"])) for row in counted.take_all()}
    numbered = list(plan)
    before: dict[str, tuple[int, bool]] = {}  # newlines so far in each file, and whether the last byte was one
    for i, (file, path, start, end) in ranges:
        newlines, last_is_newline = before.get(path, (0, False))
        numbered[i] = LineRange(file, path, start, end, first_line_number(start, newlines, last_is_newline))
        count, ends = counts[i]
        before[path] = (newlines + count, ends)
    return numbered


class _CheckTask:
    """Pass 2, per chunk: `check_chunk`, then its shard; only counts and a bad record go back (and the typed
    results, without a folder)."""

    def __init__(self, job: CheckJob, folder: str | None, fmt: str):
        self.job, self.folder, self.fmt = job, folder, fmt

    def __call__(self, batch):
        out: dict[str, list] = {k: [] for k in ("index", "shard", "pass", "fail", "error", "any_error", "problems", "warnings", "stats", "results")}
        for index, blob in zip(batch["index"], batch["chunk"]):
            writer = functools.partial(write_shard, self.folder, self.fmt) if self.folder is not None else None
            result = check_chunk(self.job, pickle.loads(blob), index=int(index), write_shard=writer)
            out["results"].append(pickle.dumps(result.results))
            out["index"].append(int(index))
            out["shard"].append(result.shard or "")
            for outcome in (Outcome.PASS, Outcome.FAIL, Outcome.ERROR):
                out[outcome.value].append(result.counts.by_outcome[outcome])
            out["any_error"].append(result.any_error)
            problems = [p.to_dict() for p in result.problems or ()]
            out["problems"].append(orjson.dumps(problems).decode() if problems else "")
            out["warnings"].append(orjson.dumps([p.to_dict() for p in result.warnings]).decode() if result.warnings else "")
            out["stats"].append(pickle.dumps(result.stats))
        return out


def _host_port(address: str) -> tuple[str, int | None]:
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        return parts.hostname or "", parts.port
    except ValueError:
        return parts.hostname or "", None


def _is_loopback(address: str) -> bool:
    host, _ = _host_port(address)
    return host in ("localhost", "::1") or host.startswith("127.")


def _check_reachable(address: str, timeout: float = 10.0) -> None:
    """Fail fast on a cluster nobody answers at: Ray itself retries for minutes."""
    import socket

    host, port = _host_port(address)
    if not host or port is None:
        return  # `auto` and the like: Ray finds the cluster itself
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as err:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {os_reason(err)}") from None


def _connect(address: str | None, cpus: int):
    """Import Ray and join the cluster at `address`, or start a local instance. Returns (ray, started_here)."""
    wanted = address or os.environ.get("RAY_ADDRESS")
    if wanted is None or _is_loopback(wanted):
        # A local instance (or one on loopback) is reached on 127.0.0.1 only, never on the machine's network address.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
        import ray.data
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    if wanted is not None and not ray.is_initialized():
        _check_reachable(wanted)
    for name in ("ray", "ray.data"):  # Ray Data logs every execution to the console at INFO
        logging.getLogger(name).setLevel(logging.ERROR)
    if ray.is_initialized():
        return ray, False
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    try:
        if wanted is None:
            ray.init(num_cpus=cpus, **options)
        else:
            ray.init(address=wanted, **options)
    except (ConnectionError, ValueError, RuntimeError) as err:
        raise RayUnavailable(f"cannot reach the Ray cluster at {wanted}: {err}") from None
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    return ray, True


def run_ray(
    job: CheckJob, paths: Iterable[str], folder: str | None, fmt: str, *, address: str | None, cpus: int, chunk_bytes: int = CHUNK_BYTES
) -> RayOutcome:
    """Check every conversation of `paths` on Ray, shards under `folder` (or, with None, the typed results sent
    back); the first bad record raises `LoadError`."""
    files = ray_inputs(paths)
    if not files:
        raise LoadError.one("no conversation files found (.json, .jsonl, .parquet)", " ".join(paths))
    plan = _plan(files, chunk_bytes)
    if not plan:
        return RayOutcome(Counts(), False, [])
    if folder is not None:
        folder = folder if is_uri(folder) else os.path.abspath(folder)
    ray, started = _connect(address, cpus)
    try:
        chunks = _numbered(plan, ray)
        items = [{"index": i, "chunk": pickle.dumps(chunk)} for i, chunk in enumerate(chunks)]
        tasks = ray.data.from_items(items, override_num_blocks=len(items))
        rows = sorted(tasks.map_batches(_CheckTask(job, folder, fmt), batch_size=1).take_all(), key=lambda r: int(r["index"]))
    except ray.exceptions.RayError as err:
        raise EngineError(f"the Ray job failed: {str(err).splitlines()[0]}") from None
    finally:
        if started:
            ray.shutdown()
    shards = [str(row["shard"]) for row in rows if row["shard"]]
    bad = next((row for row in rows if row["problems"]), None)
    if bad is not None:
        if folder is not None:
            remove_shards(folder, fmt)  # bad input: nothing half-written is left
        raise LoadError(Problem(**p) for p in orjson.loads(bad["problems"]))
    counts = Counts()
    for outcome in (Outcome.PASS, Outcome.FAIL, Outcome.ERROR):
        counts.add(outcome, sum(int(row[outcome.value]) for row in rows))
    warnings = [Problem(**p) for row in rows if row["warnings"] for p in orjson.loads(row["warnings"])]
    stats = CheckStats()
    for row in rows:
        stats.merge(pickle.loads(row["stats"]))
    results = [result for row in rows for result in pickle.loads(row["results"])]
    return RayOutcome(counts, any(bool(row["any_error"]) for row in rows), shards, warnings, stats, results)
