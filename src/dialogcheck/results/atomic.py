"""The one way dialogcheck writes a file: whole or not at all, and with no credential it holds.

A temporary file in the same folder is written and renamed over the target,
so a reader (or a batch killed midway) never sees half a file. No fsync: the
rename alone gives that, and a run file a power cut did tear is read as
unfinished and run again by `--resume`. Every credential the process holds
(`dialogcheck._redact.hold`) is masked here, whatever the file quotes.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._redact import mask, mask_bytes

FILE_MODE = 0o644


class AtomicFile:
    """A file written piece by piece as a batch goes by, in place only once `commit` says it is whole.

    Until then the pieces go to a temporary file next to the target; `discard` (or a failure) removes
    it, so the target is the previous file or the whole new one, never a part.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # not at start-up: a command that writes no file never needs it

        fd, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        self.temp = Path(temp)
        self.committed = False
        try:
            os.fchmod(fd, FILE_MODE)  # mkstemp makes 0600; results are for whoever reads the folder
            self._handle = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            self.temp.unlink(missing_ok=True)
            raise

    def write(self, content: str | bytes) -> None:
        try:
            self._handle.write(mask(content).encode("utf-8") if isinstance(content, str) else mask_bytes(content))
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        try:
            self._handle.close()
            os.replace(self.temp, self.path)
            self.committed = True
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Remove the temporary file; nothing once committed."""
        self._handle.close()
        if not self.committed:
            self.temp.unlink(missing_ok=True)


def write_atomic(path: str | Path, content: str | bytes) -> None:
    file = AtomicFile(path)
    file.write(content)
    file.commit()
