"""Where chunks are read from and shards written to: local paths, or object-store URIs through pyarrow.

A URI (`s3://bucket/key`, `gs://...`, `file:///...`) goes through
`pyarrow.fs`, the layer Ray Data itself reads with; a plain path is opened
with `open()`, so the local engine needs no pyarrow.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from .._redact import mask_bytes


def is_uri(path: str) -> bool:
    return "://" in path


def _filesystem(uri: str):
    from pyarrow import fs

    return fs.FileSystem.from_uri(uri)


@contextmanager
def open_binary(path: str) -> Iterator[BinaryIO]:
    """A seekable binary file for reading."""
    if not is_uri(path):
        with open(path, "rb") as handle:
            yield handle
        return
    filesystem, inner = _filesystem(path)
    with filesystem.open_input_file(inner) as handle:
        yield handle


def file_size(path: str) -> int:
    if not is_uri(path):
        return os.stat(path).st_size
    filesystem, inner = _filesystem(path)
    return filesystem.get_file_info(inner).size


def read_through_line_end(handle: BinaryIO, limit: int, block: int = 1 << 16) -> bytes:
    """From the current position up to and including the next newline (or to the end of the file), at most
    `limit` bytes: a caller that gets `limit` bytes without a newline knows the line goes on past them.

    pyarrow's files have no `readline`, so this reads in blocks and steps back.
    """
    start = handle.tell()
    parts = []
    held = 0
    while held < limit:
        data = handle.read(min(block, limit - held))
        if not data:
            break
        end = data.find(b"\n")
        if end >= 0:
            parts.append(data[: end + 1])
            break
        parts.append(data)
        held += len(data)
    found = b"".join(parts)
    handle.seek(start + len(found))
    return found


def list_files(uri: str, suffixes: tuple[str, ...]) -> list[str] | None:
    """The files under a folder URI with one of `suffixes`, sorted; None when `uri` is a file; [] when missing."""
    from pyarrow import fs

    filesystem, inner = _filesystem(uri)
    info = filesystem.get_file_info(inner)
    if info.type == fs.FileType.NotFound:
        return []
    if info.type != fs.FileType.Directory:
        return None
    prefix = uri[: len(uri) - len(inner)] if uri.endswith(inner) else uri.split("://", 1)[0] + "://"
    found = filesystem.get_file_info(fs.FileSelector(inner, recursive=True))
    return sorted(prefix + f.path for f in found if f.type == fs.FileType.File and f.path.endswith(suffixes))


def write_bytes(folder: str, name: str, data: bytes) -> str:
    """Write `folder/name` whole (a temporary name, then a rename, for a local folder) and return its path."""
    if not is_uri(folder):
        from ..results.atomic import write_atomic

        path = os.path.join(folder, name)
        write_atomic(path, data)
        return path
    filesystem, inner = _filesystem(folder)
    path = inner.rstrip("/") + "/" + name
    with filesystem.open_output_stream(path) as out:  # an object store makes it visible only when closed
        out.write(mask_bytes(data))
    return folder.rstrip("/") + "/" + name


def delete(path: str) -> None:
    try:
        if not is_uri(path):
            os.unlink(path)
        else:
            filesystem, inner = _filesystem(path)
            filesystem.delete_file(inner)
    except (FileNotFoundError, OSError):
        pass


def folder_is_empty(folder: str) -> bool:
    """True when the output folder does not exist yet or holds nothing but the lock file of a batch that held it."""
    if not is_uri(folder):
        from ..results.lock import LOCK_FILE

        if not os.path.exists(folder):
            return True
        if not os.path.isdir(folder):
            raise NotADirectoryError(20, "not a folder", folder)
        return not [name for name in os.listdir(folder) if name != LOCK_FILE]
    from pyarrow import fs

    filesystem, inner = _filesystem(folder)
    info = filesystem.get_file_info(inner)
    if info.type == fs.FileType.NotFound:
        return True
    return not filesystem.get_file_info(fs.FileSelector(inner, recursive=False))
