"""`_paths.read_regular`: what a path taken from an earlier process's file (a plan, a cache entry) may be read as.

Only a regular file is read: a named pipe is refused without waiting for a writer, /dev/zero before a byte of
it is read, a folder with a message that says so; and never more than the bound.
"""

from __future__ import annotations

import errno
import os

import pytest

from dialogcheck._paths import open_regular, read_regular


def test_a_regular_file_is_read_up_to_its_bound(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    with pytest.raises(OSError) as info:
        read_regular(path, 9)
    assert (info.value.errno, info.value.strerror) == (errno.EFBIG, "larger than 9 bytes")


@pytest.mark.parametrize(("kind", "what"), [("fifo", "a named pipe"), ("folder", "a folder"), ("device", "a character device")])
def test_anything_else_is_refused_without_waiting_or_reading(tmp_path, kind, what):
    path = tmp_path / "x"
    if kind == "fifo":
        os.mkfifo(path)  # no writer ever opens it: a blocking open would wait for ever
    elif kind == "folder":
        path.mkdir()
    else:
        path = "/dev/zero"
    with pytest.raises(OSError) as info:
        read_regular(path, 1 << 30)
    assert (info.value.errno, info.value.strerror) == (errno.EINVAL, f"not a regular file ({what})")


def test_a_link_is_followed_unless_told_not_to(tmp_path):
    (tmp_path / "target").write_bytes(b"t")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    assert read_regular(tmp_path / "link", 1) == b"t"
    with pytest.raises(OSError) as info:
        open_regular(tmp_path / "link", follow_links=False)
    assert info.value.errno == errno.ELOOP
