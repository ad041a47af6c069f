"""The `dialogcheck` command run in this process, for the tests whose subject is not the process boundary.

`run` takes what `subprocess.run` takes for the installed command and answers as it does (a `CompletedProcess`
with the exit code, and stdout and stderr as bytes, or as text with `text=True`), so a test converted from a
subprocess keeps every assertion: the arguments go through `dialogcheck._cli.main.main`, the console script's
own entry function, with its exit codes; stdin, stdout and stderr are pipes (not terminals, stderr with
`backslashreplace` as Python's); `env` replaces the whole environment and `cwd` the working folder while it runs.

A test whose subject is the process itself keeps the subprocess: the real console script's start-up and exit
codes, signals and Ctrl-C, stdout's encoding and a closed pipe, `--jobs` worker processes, Ray, servers, and
anything read when the interpreter starts (`PYTHON*` variables, the hash seed). An exception no command turns
into an exit code is raised here, where a process would print a traceback and exit 1: the test fails either way.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from click import formatting
from click.testing import CliRunner

from dialogcheck._cli.main import main


def run(
    command: Sequence[object],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    stdin: int | None = None,
    stdout: IO[bytes] | int | None = None,
    stderr: int | None = None,
    text: bool = False,
    capture_output: bool = True,
    check: bool = False,
    timeout: float | None = None,
) -> subprocess.CompletedProcess:
    """`subprocess.run(command, capture_output=True, ...)` for the installed `dialogcheck`, in this process.

    `stdout` may also be `subprocess.DEVNULL`, or a file opened for bytes, which gets what the command printed.
    `timeout` bounds the command as it bounds a subprocess (`subprocess.TimeoutExpired`), by an alarm signal where
    this is the main thread (as in pytest and its xdist workers).
    """
    assert capture_output, "the output of a command run in process is always captured"
    assert stdin in (None, subprocess.DEVNULL), "stdin is `input`, or nothing"
    assert stderr in (None, subprocess.PIPE), "stderr is captured"
    program, *args = map(str, command)
    assert Path(program).name == "dialogcheck", f"only the dialogcheck command runs in process, not {program}"
    assert not any(a == "--engine" and b == "ray" for a, b in zip(args, args[1:])), "Ray starts in a subprocess, not in the tests' own"
    assert env is None or _started_alike(env), "PYTHON* variables act when an interpreter starts: run that command in a subprocess"
    isolated = CliRunner().isolation(input=_as_bytes(input))
    with _bounded([program, *args], timeout), _environment(env), _working_folder(cwd), isolated as (out, err, _), _piped_size():
        try:
            main(args)
            code = 0
        except SystemExit as exit:
            code = _exit_code(exit.code)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        out_bytes, err_bytes = out.getvalue(), err.getvalue()
    if stdout is None or stdout == subprocess.PIPE:
        printed: str | bytes | None = _read(out_bytes, text)
    elif stdout == subprocess.DEVNULL:
        printed = None
    else:
        assert not isinstance(stdout, int) and not text, "stdout is captured, or a file opened for bytes"
        stdout.write(out_bytes)
        printed = None
    done = subprocess.CompletedProcess([program, *args], code, printed, _read(err_bytes, text))
    if check:
        done.check_returncode()
    return done


#: `PYTHON*` variables that change nothing a command prints: whether bytecode is written, and stream buffering (every
#: stream here is flushed before its bytes are read).
UNSEEN = frozenset({"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"})


def _started_alike(env: Mapping[str, str]) -> bool:
    """Whether an interpreter started with `env` would be set up as this one (the `PYTHON*` variables it reads)."""
    read = {name for name in {*env, *os.environ} if name.startswith("PYTHON") and name not in UNSEEN}
    return all(env.get(name) == os.environ.get(name) for name in read)


def _exit_code(code: object) -> int:
    """The exit status a process ends with for `SystemExit(code)`: a message is printed to stderr and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _as_bytes(value: str | bytes | None) -> bytes:
    """What the command reads on stdin: `input`, or nothing (as from a pipe closed at once, or /dev/null)."""
    if value is None:
        return b""
    return value if isinstance(value, bytes) else value.encode("utf-8")


def _read(data: bytes, text: bool) -> str | bytes:
    """`data` as `subprocess.run` hands it back: bytes, or text decoded with universal newlines."""
    if not text:
        return data
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()


@contextlib.contextmanager
def _bounded(command: list[str], timeout: float | None) -> Iterator[None]:
    """`subprocess.TimeoutExpired` raised in the command once `timeout` seconds have passed."""
    if timeout is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise subprocess.TimeoutExpired(command, timeout)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """`os.environ` is `env` (the whole of it, as a child's would be) while the command runs, then restored."""
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _piped_size() -> Iterator[None]:
    """The terminal size a process whose stdout is a pipe reads: `COLUMNS` and `LINES`, or 80 by 24 (click's help
    is as wide as a subprocess's, where `CliRunner` fixes it at 80)."""
    forced, size = formatting.FORCED_WIDTH, shutil.get_terminal_size
    formatting.FORCED_WIDTH = None
    shutil.get_terminal_size = _pipe_size
    try:
        yield
    finally:
        formatting.FORCED_WIDTH, shutil.get_terminal_size = forced, size


def _pipe_size(fallback: tuple[int, int] = (80, 24)) -> os.terminal_size:
    """`shutil.get_terminal_size` where stdout is no terminal."""
    columns, lines = (int(os.environ.get(name, "0") or 0) for name in ("COLUMNS", "LINES"))
    return os.terminal_size((columns if columns > 0 else fallback[0], lines if lines > 0 else fallback[1]))


@contextlib.contextmanager
def _working_folder(cwd: str | os.PathLike[str] | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)
