"""Typos in logs are warned about (file, line, column, "did you mean"), never silently passed; `--strict` refuses them.

An event type `tool_exectued` is kept (SPEC: unknown types are kept) and a field `txt` is not read,
so checks then fail misleadingly or pass vacuously. Every run is the command run in process
(`tests/inprocess.py`, `--jobs 2` in real worker processes) on a multi-chunk file: the fast decoder and
the general loader, `--jobs 1` and `--jobs 2`, `--stream`, give the same warnings.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess
from tests.conftest import plain_env
from tests.engines.batches import SCENARIO, example_events

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
COUNT = 1_000  # 3 MB: workers with --jobs 2


def run(*args) -> subprocess.CompletedProcess:
    env = plain_env()
    return inprocess.run([DIALOGCHECK, "check", "--no-judge", "--scenario", SCENARIO, *args], env=env, timeout=120)


def tracker(i: int, change=None) -> str:
    """A conversation line; user events carry Rasa's harmless `parse_data` (learned, so lines stay fast)."""
    events = [dict(e) for e in example_events()[i % 5]]
    for event in events:
        if event["event"] == "user":
            event["parse_data"] = {"intent": {"name": "inform"}}
    if change:
        change(events)
    return json.dumps({"sender_id": f"c{i}", "events": events})


def retype(old: str, new: str, nth: int = 0):
    def change(events):
        [e for e in events if e["event"] == old][nth]["event"] = new
    return change


def rename(kind: str, old: str, new: str):
    def change(events):
        event = next(e for e in events if e["event"] == kind and old in e)
        event[new] = event.pop(old)
    return change


TYPOS = {4: retype("tool_executed", "tool_exectued"), 299: rename("user", "text", "txt"), 699: retype("tool_executed", "tool_exectued", 1), 799: rename("tool_executed", "arguments", "argumnets")}


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("typos") / "logs.jsonl"
    path.write_text("".join(tracker(i, TYPOS.get(i)) + "\n" for i in range(COUNT)))
    return path


def place(path: Path, index: int, name: str, nth: int = 0) -> tuple[int, int, int]:
    """(line, column, event index) of the `nth` `"name"` on line `index + 1`, counted here independently."""
    line = path.read_text().splitlines()[index]
    events = json.loads(line)["events"]
    at = -1
    for _ in range(nth + 1):
        at = line.index(f'"{name}"', at + 1)
    wanted = [i for i, e in enumerate(events) if name in e or e["event"] == name][nth]
    return index + 1, at + 1, wanted


def expected(path: Path) -> list[dict]:
    line, column, event = place(path, 4, "tool_exectued")
    first = {"message": f"event {event}: unknown event type `tool_exectued` (did you mean `tool_executed`?)", "file": str(path), "line": line, "column": column, "count": 2}
    line, column, event = place(path, 299, "txt")
    second = {"message": f"event {event}: unknown field `txt` in a `user` event (did you mean `text`?)", "file": str(path), "line": line, "column": column, "count": 1}
    line, column, event = place(path, 799, "argumnets")
    third = {"message": f"event {event}: unknown field `argumnets` in a `tool_executed` event (did you mean `arguments`?)", "file": str(path), "line": line, "column": column, "count": 1}
    return [first, second, third]


def as_text(warning: dict) -> str:
    more = f" ({warning['count'] - 1} more like it in this file)" if warning["count"] > 1 else ""
    return f"{warning['file']}:{warning['line']}:{warning['column']}: warning: {warning['message']}{more}"


@pytest.mark.parametrize("mode", [["--jobs", "1"], ["--jobs", "2"], ["--stream", "--jobs", "2"]])
def test_typos_are_warned_about_once_each_with_their_place(logs, mode):
    text = run(*mode, logs)
    assert text.returncode == 1  # a warning never changes the verdicts or the exit code
    assert text.stderr.decode().splitlines() == [as_text(w) for w in expected(logs)]
    document = run(*mode, "--format", "json", logs)
    assert document.returncode == 1 and document.stderr == b""
    parsed = json.loads(document.stdout)
    assert parsed["warnings"] == expected(logs)
    assert list(parsed) == ["conversations", "summary", "warnings"]


def test_the_same_stdout_whatever_the_mode(logs):
    outputs = {run(*mode, "--format", "json", logs).stdout for mode in (["--jobs", "1"], ["--jobs", "2"], ["--stream", "--jobs", "2"])}
    assert len(outputs) == 1


def test_clean_logs_have_no_warnings_at_all(tmp_path):
    path = tmp_path / "clean.jsonl"
    path.write_text("".join(tracker(i) + "\n" for i in range(40)))
    done = run("--format", "json", path)
    assert done.returncode == 1 and done.stderr == b""
    assert list(json.loads(done.stdout)) == ["conversations", "summary"]
    one = tmp_path / "one.jsonl"
    one.write_text(tracker(3) + "\n")
    document = json.loads(run("--format", "json", one).stdout)
    assert "warnings" not in document and document["verdict"] == "pass"
    assert run(one).stderr == b""


def test_strict_makes_a_typo_bad_input_where_it_stands(logs):
    line, column, event = place(logs, 4, "tool_exectued")
    message = f"event {event}: unknown event type `tool_exectued` (did you mean `tool_executed`?)"
    done = run("--strict", logs)
    assert done.returncode == 2
    assert (done.stdout, done.stderr.decode()) == (b"", f"{logs}:{line}:{column}: {message}\n")  # read whole: nothing judged
    streamed = run("--strict", "--stream", "--jobs", "2", "--format", "json", logs)
    assert streamed.returncode == 2
    document = json.loads(streamed.stdout)
    assert len(document["conversations"]) == 4  # the ones before it, judged
    assert (document["error"]["line"], document["error"]["column"], document["error"]["message"]) == (line, column, message)


def test_output_folder_summary_carries_the_warnings(logs, tmp_path):
    out = tmp_path / "out"
    done = run("--format", "json", "--output", out, logs)
    assert done.returncode == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary == json.loads(done.stdout) and summary["warnings"] == expected(logs)


def test_typos_in_the_general_loaders_containers(tmp_path):
    events = tmp_path / "events.jsonl"  # one event a line
    events.write_text('{"event": "user", "text": "hi"}\n{"event": "tool_exectued", "tool_name": "t", "source": "local"}\n')
    done = run(events)
    assert done.stderr.decode() == f"{events}:2:11: warning: event 1: unknown event type `tool_exectued` (did you mean `tool_executed`?)\n"
    document = tmp_path / "tracker.json"
    document.write_text(json.dumps({"sender_id": "t", "events": [{"event": "user", "text": "hi"}, {"event": "bot", "txt": "hello"}]}, indent=2))
    done = run(document)
    assert done.stderr.decode() == f"{document}:10:7: warning: event 1: unknown field `txt` in a `bot` event (did you mean `text`?)\n"


def test_typos_in_parquet_rows_name_the_row(tmp_path):
    pa = pytest.importorskip("pyarrow")
    from pyarrow import parquet

    path = tmp_path / "rows.parquet"
    rows = [{"id": f"r{i}", "events": json.dumps([{"event": "user", "txt": "hi"}])} for i in range(3)]
    parquet.write_table(pa.Table.from_pylist(rows), path)
    done = run(path)
    assert done.stderr.decode() == (
        f"{path}:1:1: warning: row 1: event 0: unknown field `txt` in a `user` event (did you mean `text`?) (2 more like it in this file)\n"
    )


def test_one_conversation_document_ends_with_its_warnings(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text('{"event": "user", "txt": "hi"}\n')
    document = json.loads(run("--format", "json", path).stdout)
    assert list(document)[-1] == "warnings"
    assert document["warnings"] == [
        {"message": "event 0: unknown field `txt` in a `user` event (did you mean `text`?)", "file": str(path), "line": 1, "column": 19, "count": 1}
    ]
