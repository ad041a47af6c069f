"""`check --output DIR` holds the folder lock `run` takes: a second process writing the same folder is refused.

Two `check --output` at once once both ran, wrote their shards over each other's and lost half the results
without a word. The first process here is a real `dialogcheck check` held mid-batch: it reads a FIFO that the
test writes only once the second process is done, so no sleep decides anything.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dialogcheck.results.lock import LOCK_FILE
from tests.conftest import plain_env
from tests.engines.batches import SCENARIO, example_events, tracker_lines

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
CHECK = [str(DIALOGCHECK), "check", "--no-judge", "--scenario", str(SCENARIO)]
COUNT = 20


def check(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CHECK, *map(str, args)], capture_output=True, text=True, env=plain_env(), timeout=300)


def opened_for_writing(fifo: Path, reader: subprocess.Popen, seconds: float = 300) -> int:
    """A descriptor writing `fifo`, once `reader` has opened it (it is then past claiming its folder); the bound
    is on a hang, not a wait a slow machine could outlast."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO until a reader has it open
        except OSError as err:
            if err.errno != errno.ENXIO:
                raise
            assert reader.poll() is None, reader.communicate()
            time.sleep(0.02)
            continue
        os.set_blocking(fd, True)
        return fd
    raise AssertionError(f"{fifo} was never opened by the first check")


def batch(prefix: str, count: int) -> bytes:
    """`count` conversations of the examples (some fail), named `{prefix}-N`."""
    events = example_events()
    return "".join(json.dumps({"sender_id": f"{prefix}-{i}", "events": events[i % len(events)]}) + "\n" for i in range(count)).encode()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}


@pytest.fixture
def held(tmp_path):
    """A first `check --output out` reading a FIFO, held before its first conversation; yields (process, out,
    release), `release()` sending it its conversations and returning its (returncode, stdout, stderr)."""
    out, fifo = tmp_path / "out", tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    first = subprocess.Popen([*CHECK, "--output", str(out), str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=plain_env())
    fd = opened_for_writing(fifo, first)

    def release() -> tuple[int, str, str]:
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(batch("first", COUNT))
        stdout, stderr = first.communicate(timeout=300)
        return first.returncode, stdout, stderr

    try:
        yield first, out, release
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()


def test_a_second_check_on_a_folder_in_use_is_refused_and_the_first_keeps_all_its_results(held, tmp_path):
    first, out, release = held
    other = tmp_path / "other.jsonl"
    other.write_bytes(batch("second", 7))
    before = snapshot(out)
    for form in ("text", "json"):
        second = check("--output", out, "--format", form, other)
        assert second.returncode == 2, second.stdout + second.stderr
        message = f"another dialogcheck check (process {first.pid}) is using this results folder: wait for it to end, or give another folder"
        if form == "text":
            assert (second.stdout, second.stderr) == ("", f"{out}:1:1: {message}\n")
        else:
            error = json.loads(second.stdout)["error"]
            assert (error["message"], error["file"], error["line"], error["column"]) == (message, str(out), 1, 1)
        assert snapshot(out) == before  # nothing of the first's touched, nothing of the second's written
    assert first.poll() is None
    code, stdout, stderr = release()
    assert code == 1, stderr  # some of the example conversations fail on purpose
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for shard in sorted(out.glob("part-*.jsonl")) for line in shard.read_text().splitlines()]
    assert summary["conversations"] == len(rows) == COUNT
    assert {row["source"].rsplit("#", 1)[-1] for row in rows} == {f"first-{i}" for i in range(COUNT)}


def test_a_run_is_refused_a_folder_a_check_is_writing(held, tmp_path):
    from tests.cli.test_run import make_project

    first, out, release = held
    project = make_project(tmp_path / "p")
    before = snapshot(out)
    refused = subprocess.run([str(DIALOGCHECK), "run", str(project), "--results", str(out)], capture_output=True, text=True, env=plain_env(), timeout=300)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr == (
        f"{out}:1:1: another dialogcheck check (process {first.pid}) is using this results folder: wait for it to end, or give another folder\n"
    )
    assert snapshot(out) == before
    assert release()[0] == 1


def test_a_check_that_stops_on_bad_input_leaves_the_folder_as_it_found_it(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(tracker_lines(1)[0][:-20] + "\n")
    made, empty = tmp_path / "made", tmp_path / "empty"
    empty.mkdir()
    for out in (made, empty):
        done = check("--output", out, bad)
        assert done.returncode == 2 and done.stderr.startswith(f"{bad}:1:"), done.stderr
    assert not made.exists()  # made for the batch, removed with its lock file
    assert list(empty.iterdir()) == []  # given empty, left empty


def test_a_finished_check_leaves_its_lock_file_and_its_folder_is_not_taken_again(tmp_path):
    source = tmp_path / "log.jsonl"
    source.write_bytes(batch("c", 3))
    out = tmp_path / "out"
    assert check("--output", out, source).returncode == 1
    assert (out / LOCK_FILE).read_text().split()[1:] == ["check"]  # the process id, then the command that held it
    again = check("--output", out, source)
    assert again.returncode == 2 and again.stderr == f"{out}:1:1: the output folder is not empty: give a new or empty folder\n"
