"""`check --format json` prints exactly one JSON document on stdout, whatever goes wrong and wherever.

A streamed input (`--stream`, or over 64 MB) that met a bad record used to leave an unterminated
`{"conversations": [...` followed by a second `{"error": ...}` document. Now the document begun is
closed with the error (exit 2): `{"conversations": [what was judged before it], "error": {...}}`;
when nothing was judged, the error document alone, as before. Every case runs the command in process
(`tests/inprocess.py`), streamed and not, with `--jobs 1` and `--jobs 2` (real worker processes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess
from tests.conftest import plain_env
from tests.engines.batches import SCENARIO, batch_with, cut_short

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
COUNT = 1_000  # 3 MB: over the 2 MB below which one process does all the work


def run(*args) -> subprocess.CompletedProcess:
    env = plain_env()
    return inprocess.run([DIALOGCHECK, "check", "--no-judge", "--format", "json", "--scenario", SCENARIO, *args], env=env, timeout=120)


def one_document(stdout: bytes) -> dict:
    """stdout parsed as JSON: `json.loads` refuses anything after the first document but white space."""
    return json.loads(stdout)


def batch(tmp_path: Path, name: str, bad: dict[int, str], count: int = COUNT) -> Path:
    return batch_with(tmp_path / name, count, bad)


BAD_CASES = {
    # name: (bad lines by index, how many conversations come before the first bad one)
    "broken_json_deep": ({700: cut_short(700)}, 700),
    "wrong_field_deep": ({500: json.dumps({"sender_id": "x", "events": [{"event": "user", "text": 7}]})}, 500),
    "mixed_container": ({300: json.dumps({"event": "user", "text": "an event among conversations"})}, 300),
    "second_line": ({1: cut_short(1)}, 1),
    "first_line": ({0: cut_short(0)}, 0),
}


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_input_prints_one_document_streamed_or_not(tmp_path, case, jobs):
    bad, before = BAD_CASES[case]
    path = batch(tmp_path, f"{case}.jsonl", bad)
    whole = run("--jobs", jobs, path)
    streamed = run("--stream", "--jobs", jobs, path)
    assert whole.returncode == streamed.returncode == 2
    assert whole.stderr == streamed.stderr == b""
    error = one_document(whole.stdout)["error"]
    assert set(one_document(whole.stdout)) == {"error"}  # read whole first: nothing judged is printed
    assert (error["file"], error["line"]) == (str(path), before + 1)
    document = one_document(streamed.stdout)
    assert document["error"] == error
    if before == 0:
        assert set(document) == {"error"}
    else:
        assert set(document) == {"conversations", "error"}
        assert len(document["conversations"]) == before  # everything before the bad record, judged in order
        assert document["conversations"][-1]["source"].startswith(f"{path}#")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_bad_file_after_good_ones_closes_the_document(tmp_path, jobs):
    good = batch(tmp_path, "good.jsonl", {})
    missing = tmp_path / "broken.json"
    missing.write_text('[{"event": "user", "text": "hi"}')  # a truncated document
    done = run("--stream", "--jobs", jobs, good, missing)
    assert done.returncode == 2
    document = one_document(done.stdout)
    assert len(document["conversations"]) == COUNT
    assert (document["error"]["file"], document["error"]["message"]) == (str(missing), "invalid JSON: unexpected end of data")


def test_one_conversation_then_bad_input_is_still_one_document(tmp_path):
    path = batch(tmp_path, "two.jsonl", {1: cut_short(1)}, count=2)
    done = run("--stream", path)
    assert done.returncode == 2
    document = one_document(done.stdout)
    assert [c["source"] for c in document["conversations"]] == [f"{path}#1"]  # the first line has no id: named by its line
    assert document["error"]["line"] == 2


def test_a_report_that_cannot_be_written_is_one_error_document_before_any_conversation(tmp_path):
    path = batch(tmp_path, "ok.jsonl", {}, count=3)
    unwritable = tmp_path / "missing-folder" / "deeper" / "junit.xml"
    (tmp_path / "missing-folder").write_text("a file where a folder should be")
    done = run("--junit", unwritable, path)
    assert done.returncode == 2
    document = one_document(done.stdout)
    assert "conversations" not in document
    assert document["error"]["message"] == f"cannot write the report: expected a folder here, to hold {unwritable}"
    assert document["error"]["file"] == str(tmp_path / "missing-folder")


def test_no_conversations_is_one_error_document(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run("--stream", empty)
    assert done.returncode == 2
    assert one_document(done.stdout)["error"]["message"] == "no conversation files found (.json, .jsonl)"


def test_an_input_over_the_streaming_bound_is_streamed_into_one_document(tmp_path, monkeypatch):
    """Over 64 MB an input streams without --stream: the bound lowered here, so a small file is over it."""
    from click.testing import CliRunner

    from dialogcheck import checking
    from dialogcheck._cli.main import cli

    monkeypatch.setattr(checking, "STREAM_ABOVE_BYTES", 10_000)
    path = batch(tmp_path, "over.jsonl", {20: cut_short(20)}, count=30)
    result = CliRunner().invoke(cli, ["check", "--no-judge", "--format", "json", "--scenario", str(SCENARIO), str(path)])
    assert result.exit_code == 2
    document = one_document(result.stdout)
    assert len(document["conversations"]) == 20 and document["error"]["line"] == 21
