"""The one way dialogcheck writes a file: whole or not at all, and with no credential it holds.

A temporary file in the same folder is written and renamed over the target,
so a reader (or a batch killed midway) never sees half a file. No fsync: the
rename alone gives that, and a run file a power cut did tear is read as
unfinished and run again by `--resume`. Every credential the process holds
(`dialogcheck._redact.hold`) is masked here, whatever the file quotes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .._redact import mask, mask_bytes

FILE_MODE = 0o644


def write_atomic(path: str | Path, content: str | bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = mask(content).encode("utf-8") if isinstance(content, str) else mask_bytes(content)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)  # mkstemp makes 0600; results are for whoever reads the folder
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
