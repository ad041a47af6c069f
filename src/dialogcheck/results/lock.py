"""One batch at a time in a results folder: an exclusive `flock` on a lock file inside it, held for the whole batch.

Two `dialogcheck run`s writing one folder mix their runs and summaries (one
counted none of the other's runs, printed "0 runs of 4 planned" and passed).
`run` and `check --output` take the same lock, so neither writes over the other.
The lock is the operating system's, so it goes with its process: a batch that
is killed leaves no stale lock. The file is kept after a batch that wrote the
folder; it holds the process id and the command of the last batch that locked
it, for the message a second one gets. A batch that wrote nothing removes it
(`abandon`): a process that locked the file just as it was removed sees that
the name no longer leads to what it locked, and tries again.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

from ..errors import LoadError, os_reason

LOCK_FILE = ".dialogcheck.lock"


#: Tries at a lock file that its holder removes each time before it is locked: only a race, repeated, exhausts them.
_TRIES = 5


class BatchLock:
    """Held from `take` until `release` (or the end of the process); a context manager releases it."""

    def __init__(self, fd: int, folder: Path, *, made: bool = False):
        self._fd: int | None = fd
        self.folder = folder
        #: Whether `claim` made the folder, so `abandon` removes it again.
        self.made = made

    @classmethod
    def take(cls, folder: Path, *, command: str = "run") -> BatchLock:
        """Lock `folder` for this process (`command` names it to a second one), or a `LoadError` saying another holds it."""
        for _ in range(_TRIES):
            try:
                fd = _open(folder, os.O_RDWR | os.O_CREAT)
            except (FileNotFoundError, NotADirectoryError):
                raise LoadError.one("cannot lock the results folder: it is gone", str(folder)) from None
            _flock(fd, fcntl.LOCK_EX, folder)
            if _still_named(fd, folder):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()} {command}\n".encode())
                return cls(fd, folder)
            os.close(fd)  # its holder removed it as it let go: lock the file the name leads to now
        raise LoadError.one("cannot lock the results folder: other processes keep taking it", str(folder))

    @classmethod
    def claim(cls, folder: Path, refuse_unless_empty: Callable[[Path], None], *, command: str) -> BatchLock:
        """Lock a new or empty folder for a batch that writes it, made if missing; nothing is made when it is not empty.

        `refuse_unless_empty` raises the `LoadError` for a folder holding anything but the lock file; it is asked
        again once the lock is held, for a batch that came and went in between. Making the folder may raise `OSError`.
        """
        cls.refuse_if_held(folder)  # a batch writing there: say that, not only that the folder is in use
        refuse_unless_empty(folder)
        made = not os.path.lexists(folder)
        folder.mkdir(parents=True, exist_ok=True)
        lock = cls.take(folder, command=command)
        lock.made = made
        try:
            refuse_unless_empty(folder)
        except LoadError:
            lock.release()
            raise
        return lock

    @staticmethod
    def refuse_if_held(folder: Path) -> None:
        """A `LoadError` when a batch holds `folder` now; creates nothing (a folder with no lock file is not held)."""
        try:
            fd = _open(folder, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):  # no lock file, or no folder to hold one
            return
        _flock(fd, fcntl.LOCK_SH, folder)  # conflicts only with a batch's exclusive lock
        os.close(fd)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of the lock releases it

    def abandon(self) -> None:
        """Release the lock of a batch that wrote nothing, leaving the folder as it was found: the lock file
        removed, and the folder too when `claim` made it and nothing else is in it."""
        if self._fd is None:
            return
        try:
            os.unlink(self.folder / LOCK_FILE)  # while held: a process waiting on this file finds it gone (`_still_named`)
            if self.made:
                os.rmdir(self.folder)
        except OSError:
            pass  # something else is in the folder now: it stays
        self.release()

    def __enter__(self) -> BatchLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _still_named(fd: int, folder: Path) -> bool:
    """Whether the lock file's name still leads to the file `fd` locked (its holder may have removed it meanwhile)."""
    try:
        named = os.lstat(folder / LOCK_FILE)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _open(folder: Path, flags: int) -> int:
    """The lock file's descriptor; `FileNotFoundError` or `NotADirectoryError` when it (or the folder) is not there,
    other failures a `LoadError`."""
    path = folder / LOCK_FILE
    try:
        # O_NOFOLLOW: a link planted under the lock file's name cannot make the process id land elsewhere.
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as err:
        raise LoadError.one(f"cannot lock the results folder: {os_reason(err)} ({path})", str(folder)) from None


def _flock(fd: int, kind: int, folder: Path) -> None:
    """Lock without waiting; on failure the descriptor is closed and the holder named."""
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except OSError as err:
        holder = _holder(fd)
        os.close(fd)
        if isinstance(err, BlockingIOError):
            message = f"another {holder} is using this results folder: wait for it to end, or give another folder"
        else:
            message = f"cannot lock the results folder: {os_reason(err)} ({folder / LOCK_FILE})"
        raise LoadError.one(message, str(folder)) from None


def _holder(fd: int) -> str:
    """`dialogcheck run (process N)` from the lock file, or as much of it as the file says."""
    try:
        words = os.pread(fd, 64, 0).decode("ascii").split()
    except (OSError, UnicodeDecodeError):
        words = []
    pid = words[0] if words and words[0].isdigit() else None
    command = words[1] if pid and len(words) > 1 and words[1].isalpha() else None
    if command:
        return f"dialogcheck {command} (process {pid})"
    return f"dialogcheck process {pid}" if pid else "dialogcheck process"
