"""`AtomicFile`: a file written piece by piece is in place only when whole, and holds no credential the process holds."""

from __future__ import annotations

import os

import pytest

from dialogcheck._redact import MASK, hold
from dialogcheck.results.atomic import AtomicFile


def test_the_pieces_appear_together_when_committed(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old")
    file = AtomicFile(target)
    file.write("<p>one</p>")
    file.write(b"<p>two</p>")
    assert target.read_text() == "old"  # nothing shows before the commit
    file.commit()
    assert target.read_text() == "<p>one</p><p>two</p>"
    assert target.stat().st_mode & 0o777 == 0o644
    file.discard()  # after the commit: nothing to remove
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_discarded_file_leaves_the_old_one_and_no_part(tmp_path):
    target = tmp_path / "deep" / "report.html"
    file = AtomicFile(target)
    file.write("half a page")
    file.discard()
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_a_failed_rename_leaves_the_old_file_and_no_part(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    target.write_text("old")
    file = AtomicFile(target)
    file.write("new")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        file.commit()
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_held_secrets_are_masked_in_every_piece(tmp_path):
    hold("held-piece-4d3c2b1a")
    file = AtomicFile(tmp_path / "out.txt")
    file.write("a held-piece-4d3c2b1a b")
    file.write(b"c held-piece-4d3c2b1a")
    file.commit()
    assert (tmp_path / "out.txt").read_text() == f"a {MASK} bc {MASK}"
