"""`import`: convert another tool's logs into native events, and derive a scenario of each task where it can.

The output is JSONL of tracker objects (`{"sender_id", "events"}`), one
conversation a line, which `check` reads as it is. Conversions stream through
a temporary file, so memory stays flat on big inputs and a bad input leaves
nothing behind: the output (or the stream given for stdout) gets the whole
result or nothing, and the derived scenarios are written only once everything
read, all of them with the output or none (a place that cannot take one is
bad input).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import takewhile
from pathlib import Path
from typing import IO

import orjson

from .._paths import require_folder
from .._shown import counted
from ..errors import LoadError, Problem, os_reason
from ..events.bounds import MAX_WRITTEN_DEPTH
from ..importers import import_file, tau2_scenarios, tau_bench_scenarios
from ..report.styled import Styled
from ..results.atomic import AtomicFile
from .answer import Answer


def import_logs(
    file: str, fmt: str, *, output: str | None = None, scenarios_dir: str | None = None, stdout: IO[bytes] | None = None,
    as_json_document: bool = False,
) -> Answer:
    """Convert `file` of format `fmt` into native tracker lines at `output`, or onto `stdout` (as one JSON document
    with `as_json_document`); with `scenarios_dir` (tau-bench and tau2), also one scenario per task there. The
    answer counts what was converted and names the scenarios written. `LoadError` for bad input, and then nothing
    is written."""
    if not Path(file).is_file():
        raise LoadError.one("no such file", file)
    if output is not None:
        require_folder(Path(output).parent, "the output", output)
    elif stdout is None:
        raise ValueError("import_logs needs an `output` file or a `stdout` stream")
    if scenarios_dir is not None:
        require_folder(Path(scenarios_dir), "the scenarios", scenarios_dir)
    with _Placement() as placement, _staged(output, placement) as (handle, staged):
        conversations, events = _convert(file, fmt, handle)
        scenarios = list(DERIVED[fmt](file)) if scenarios_dir is not None else []
        written = [str(Path(scenarios_dir, f"{slug}.yml")) for slug, _ in scenarios]  # type: ignore[arg-type]  # scenarios only with a folder
        if scenarios_dir is not None:
            placement.scenarios(Path(scenarios_dir), [(path, text) for path, (_, text) in zip(written, scenarios)])
        _commit(handle, staged, output, as_json_document, stdout)  # type: ignore[arg-type]  # a stream whenever there is no output file
    summary = {"output": output, "conversations": conversations, "events": events, "scenarios": written}
    line = f"imported {counted(conversations, 'conversation')} ({counted(events, 'event')}) from {file} to {output or 'stdout'}"
    if written:
        line += f"; {counted(len(written), 'scenario')} in {scenarios_dir}"
    return Answer(summary, Styled(line + "\n"))


def _cannot_write(what: str, err: OSError, path: str | Path) -> LoadError:
    """The error naming PATH (not a temporary file beside it): what could not be written, and the system's reason."""
    return LoadError.one(f"cannot write {what}: {os_reason(err)}", str(path))


class _Placement:
    """What an import adds to the disk, taken back if anything fails, so a failed import leaves nothing behind."""

    def __init__(self) -> None:
        self.folders: list[Path] = []  # made by this import, deepest first
        self.staged: list[AtomicFile] = []
        self.added: list[Path] = []  # scenario files that were not there before

    def __enter__(self) -> _Placement:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            return
        for file in self.staged:
            file.discard()
        for path in self.added:
            path.unlink(missing_ok=True)
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:  # not made after all, or something else came into it
                pass

    def folder(self, folder: Path, what: str) -> None:
        """FOLDER, made with its missing parents if need be."""
        missing = takewhile(lambda part: not os.path.lexists(part), (folder, *folder.parents))
        self.folders.extend(part for part in missing if part.name != "..")  # `a/..` is a folder made already, or not ours
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise _cannot_write(what, err, err.filename or folder) from None

    def scenarios(self, folder: Path, files: list[tuple[str, str]]) -> None:
        """Every scenario file staged beside its place, then all put in place: a folder standing where one goes
        stops them all before any is written."""
        taken = [Problem("cannot write the scenario: expected a file here, got a folder", path) for path, _ in files if Path(path).is_dir()]
        if taken:
            raise LoadError(taken)
        self.folder(folder, "the scenarios")
        for path, text in files:
            try:
                self.staged.append(AtomicFile(path))
                self.staged[-1].write(text)
            except OSError as err:
                raise _cannot_write("the scenario", err, path) from None
        for file in self.staged:
            new = not os.path.lexists(file.path)
            try:
                file.commit()
            except OSError as err:
                raise _cannot_write("the scenario", err, file.path) from None
            if new:
                self.added.append(file.path)


@contextmanager
def _staged(output: str | None, placement: _Placement) -> Iterator[tuple[IO[bytes], str]]:
    """A temporary file beside OUT (or in the temp folder for stdout), removed unless committed."""
    folder = Path(output).parent if output else None
    if folder is not None:
        placement.folder(folder, "the output")
    try:
        fd, name = tempfile.mkstemp(prefix=".dialogcheck-import.", suffix=".tmp", dir=folder)
    except OSError as err:
        if folder is None:
            raise
        raise _cannot_write("the output", err, folder) from None
    handle = os.fdopen(fd, "w+b")
    try:
        yield handle, name
    finally:
        handle.close()
        Path(name).unlink(missing_ok=True)


def _convert(file: str, fmt: str, handle: IO[bytes]) -> tuple[int, int]:
    """Write every conversation as one tracker line; (conversations, events)."""
    conversations = events = 0
    for imported in import_file(file, fmt):
        try:
            line = orjson.dumps(imported.tracker())
        except orjson.JSONEncodeError:  # a value nested past the 254 levels native JSON lines may hold
            where, number = imported.conversation.place or (file, 1)
            raise LoadError.one(f"a value here is nested more than {MAX_WRITTEN_DEPTH} levels deep: native events cannot hold it", where, number) from None
        handle.write(line + b"\n")
        conversations += 1
        events += len(imported.events)
    handle.flush()
    os.fsync(handle.fileno())
    return conversations, events


def _commit(handle: IO[bytes], staged: str, output: str | None, as_json_document: bool, stdout: IO[bytes]) -> None:
    """Move the staged lines to OUT atomically, or copy them to `stdout`."""
    if output is not None:
        umask = os.umask(0)
        os.umask(umask)
        try:
            os.chmod(staged, 0o666 & ~umask)  # a temporary file is private; the output is an ordinary file
            os.replace(staged, output)
        except OSError as err:
            raise _cannot_write("the output", err, output) from None
        return
    handle.seek(0)
    out = stdout
    if not as_json_document:
        shutil.copyfileobj(handle, out)
    else:
        out.write(b'{"conversations": [')
        for i, line in enumerate(handle):
            out.write((b", " if i else b"") + line.rstrip(b"\n"))
        out.write(b"]}\n")
    out.flush()


#: The formats whose files hold their tasks' expectations, and what derives a scenario of each task.
DERIVED = {"tau-bench": tau_bench_scenarios.derive_scenarios, "tau2": tau2_scenarios.derive_scenarios}
