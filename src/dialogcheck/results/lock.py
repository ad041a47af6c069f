"""One batch at a time in a results folder: an exclusive `flock` on a lock file inside it, held for the whole batch.

Two `dialogcheck run`s writing one folder mix their runs and summaries (one
counted none of the other's runs, printed "0 runs of 4 planned" and passed).
The lock is the operating system's, so it goes with its process: a batch that
is killed leaves no stale lock. The file is kept after the batch (removing it
would let two processes lock two different files of one name); it holds the
process id of the last batch that locked it, for the message a second one gets.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..errors import LoadError

LOCK_FILE = ".dialogcheck.lock"


class BatchLock:
    """Held from `take` until `release` (or the end of the process); a context manager releases it."""

    def __init__(self, fd: int, folder: Path):
        self._fd: int | None = fd
        self.folder = folder

    @classmethod
    def take(cls, folder: Path) -> BatchLock:
        """Lock `folder` for this process, or a `LoadError` saying another run holds it."""
        try:
            fd = _open(folder, os.O_RDWR | os.O_CREAT)
        except FileNotFoundError:
            raise LoadError.one("cannot lock the results folder: it is gone", str(folder)) from None
        _flock(fd, fcntl.LOCK_EX, folder)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(fd, folder)

    @staticmethod
    def refuse_if_held(folder: Path) -> None:
        """A `LoadError` when a run holds `folder` now; creates nothing (a folder with no lock file is not held)."""
        try:
            fd = _open(folder, os.O_RDONLY)
        except FileNotFoundError:
            return
        _flock(fd, fcntl.LOCK_SH, folder)  # conflicts only with a batch's exclusive lock
        os.close(fd)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of the lock releases it

    def __enter__(self) -> BatchLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _open(folder: Path, flags: int) -> int:
    """The lock file's descriptor; `FileNotFoundError` when it (or the folder) is not there, other failures a `LoadError`."""
    path = folder / LOCK_FILE
    try:
        # O_NOFOLLOW: a link planted under the lock file's name cannot make the process id land elsewhere.
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except FileNotFoundError:
        raise
    except OSError as err:
        raise LoadError.one(f"cannot lock the results folder: {err.strerror or err} ({path})", str(folder)) from None


def _flock(fd: int, kind: int, folder: Path) -> None:
    """Lock without waiting; on failure the descriptor is closed and the holder named."""
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except OSError as err:
        holder = _holder(fd)
        os.close(fd)
        if isinstance(err, BlockingIOError):
            message = f"another dialogcheck run{holder} is using this results folder: wait for it to end, or give another folder"
        else:
            message = f"cannot lock the results folder: {err.strerror or err} ({folder / LOCK_FILE})"
        raise LoadError.one(message, str(folder)) from None


def _holder(fd: int) -> str:
    """` (process N)` from the lock file, or nothing when it does not say."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {text})" if text.isdigit() else ""
