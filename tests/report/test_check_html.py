"""`check --html` from the command line: the same page however the batch was checked and from its `--output` folder,
and never a half-written page."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess
from tests.conftest import EXAMPLE
from tests.report.page_data import entries

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
SOP = EXAMPLE / "sops" / "replace_card.yml"
CONVERSATIONS = sorted((EXAMPLE / "conversations").glob("*.jsonl"))


def dialogcheck(*args, cwd: Path) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    """900 conversations, one a line (about 3 MB: past the size checked in one process, so --jobs 2 uses workers)."""
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    with path.open("w") as out:
        for i in range(900):
            events = CONVERSATIONS[i % len(CONVERSATIONS)].read_text().splitlines()
            out.write('{"conversation_id": "c-%04d", "events": [%s]}\n' % (i, ",".join(events)))
    assert path.stat().st_size > 2 * 2**20
    return path


def _without_transcripts(page: bytes) -> bytes:
    page = re.sub(rb'<template id="dc-t-\d+"><div class="run-timeline">.*?</template>\n', b"", page, flags=re.S)
    return page.replace(b',{"t":1}]', b"]").replace(b'{"t":1,', b"{")


def test_check_html_and_report_of_its_output_folder_are_the_same_page(log, tmp_path):
    done = dialogcheck("check", "--no-judge", "--sop", SOP, log, "--html", "alone.html", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)["summary"]
    done = dialogcheck("check", "--no-judge", "--sop", SOP, log, "--output", "out", "--html", "with-output.html", "--jobs", "2", "--chunk-mb", "0.2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    done = dialogcheck("report", "out", "--html", "reported.html", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout.decode() == "wrote reported.html\n", done.stderr
    page = (tmp_path / "alone.html").read_bytes()
    assert (tmp_path / "with-output.html").read_bytes() == page  # in worker processes, and written beside the shards
    # read back from the shards, which keep no transcript: the same page without them
    assert (tmp_path / "reported.html").read_bytes() == _without_transcripts(page)
    listed = entries(page.decode())
    assert len(listed) == summary["conversations"] == 900
    assert sum(e.verdict == "fail" for e in listed) == summary["failed"]


def test_bad_input_leaves_no_page_and_the_old_one_as_it_was(log, tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(log.read_bytes() + b'{"events": [{"event": "user", "text": "hi"}, {"no_event": 1}]}\n')
    (tmp_path / "report.html").write_text("the old report")
    done = dialogcheck("check", "--no-judge", "--sop", SOP, broken, "--stream", "--html", "report.html", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "broken.jsonl:901:" in done.stdout.decode() + done.stderr.decode()
    assert (tmp_path / "report.html").read_text() == "the old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.jsonl", "report.html"]  # no temporary part left


def test_a_report_that_cannot_be_written_is_bad_input_before_anything_is_judged(tmp_path):
    (tmp_path / "file").write_text("")
    done = dialogcheck("check", "--no-judge", "--sop", SOP, CONVERSATIONS[0], "--html", tmp_path / "file" / "report.html", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == b""  # no result printed: nothing was judged
    assert done.stderr.decode().startswith(f"{tmp_path / 'file'}:1:1: cannot write the report: ")


def test_report_of_an_output_folder_reads_its_shards_lazily_and_a_broken_shard_is_bad_input(log, tmp_path):
    from dialogcheck.results.load import load_check_output

    done = dialogcheck("check", "--no-judge", "--sop", SOP, log, "--output", "out", "--jobs", "2", "--chunk-mb", "0.2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    found = load_check_output(tmp_path / "out")
    assert found.shards > 1
    last = found.paths[-1]
    last.write_bytes(last.read_bytes() + b"{not json\n")
    results = found.results()
    assert next(results).source.endswith("#c-0000")  # the first shard is read before the broken one is opened
    done = dialogcheck("report", "out", "--html", "reported.html", cwd=tmp_path)
    assert done.returncode == 2
    lines = len(last.read_bytes().splitlines())
    assert f"{last.name}:{lines}:2: not a result shard: invalid JSON" in done.stdout.decode() + done.stderr.decode()
    assert not (tmp_path / "reported.html").exists()
