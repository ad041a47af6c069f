"""One batch to a results folder: `--results` must be new or empty, and a lock keeps a second process out.

Two `dialogcheck run`s on one folder once hid failures (one printed "0 runs of
4 planned" and exited 0), and a reused folder mixed two batches' runs. The
concurrent cases are two real `dialogcheck` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.errors import LoadError
from dialogcheck.results.files import ResultsFolder, new_folder
from dialogcheck.results.lock import LOCK_FILE, BatchLock
from tests.cli.test_run import AGENT, make_project
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"


def start(*args: str, delay: str = "0") -> subprocess.Popen:
    return subprocess.Popen([str(DIALOGCHECK), "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(AGENT_DELAY=delay))


def wait_for(path: Path, seconds: float = 300) -> None:
    """Until `path` exists: the bound is on a hang, not a wait that a slow machine could outlast."""
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path.exists(), path


#: The test agent, held at its first answer until the test writes `release` beside it.
GATED = AGENT.replace('time.sleep(float(os.environ.get("AGENT_DELAY", "0")))', 'while not LOG.with_name("release").exists():\n        time.sleep(0.02)')
assert "release" in GATED


def test_a_second_process_is_kept_out_while_a_batch_runs(tmp_path):
    project = make_project(tmp_path / "p")
    (project / "agent.py").write_text(GATED)
    results = tmp_path / "r"
    first = start(str(project), "--runs", "3", "--parallel", "1", "--results", str(results))
    try:
        wait_for(project / "opened.log")  # the batch is under way, its agent waiting
        for second_args in (["--results", str(results), str(project)], ["--resume", str(results)]):
            second = subprocess.run([str(DIALOGCHECK), "run", *second_args], capture_output=True, text=True, env=clean_env(), timeout=300)
            assert second.returncode == 2, second.stdout + second.stderr
            assert second.stderr == (
                f"{results}:1:1: another dialogcheck run (process {first.pid}) is using this results folder:"
                " wait for it to end, or give another folder\n"
            )
            assert first.poll() is None  # the first batch is still running, untouched
    finally:
        (project / "release").write_text("")
        out, err = first.communicate(timeout=300)
    assert first.returncode == 1, err  # beta fails on purpose
    summary = json.loads((results / "summary.json").read_text())
    assert (summary["completed_runs"], summary["planned_runs"], summary["failed"]) == (6, 6, 3)
    assert "6 runs: 3 passed, 3 failed, 0 errored" in out


def test_two_batches_started_at_once_on_one_folder_one_runs_the_other_is_refused(tmp_path):
    project = make_project(tmp_path / "p")
    results = tmp_path / "r"
    both = [start(str(project), "--runs", "2", "--results", str(results), delay="0.2") for _ in range(2)]
    outcomes = sorted((p.wait(timeout=300), p.stderr.read()) for p in both)
    for p in both:
        p.stdout.close()
        p.stderr.close()
    (ran, _), (refused, message) = outcomes
    assert (ran, refused) == (1, 2), outcomes
    assert message.startswith(f"{results}:1:1: ")
    assert "another dialogcheck run" in message or "--results must name a new or empty folder" in message
    summary = json.loads((results / "summary.json").read_text())
    assert summary["completed_runs"] == summary["planned_runs"] == 4


def test_a_folder_that_holds_a_batch_is_refused_and_named(tmp_path):
    project = make_project(tmp_path / "p")
    results = tmp_path / "r"
    assert CliRunner().invoke(cli, ["run", str(project), "--results", str(results)]).exit_code == 1
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}
    again = CliRunner().invoke(cli, ["run", str(project), "--results", str(results)])
    assert again.exit_code == 2
    assert again.stderr == (
        f"{results}:1:1: --results must name a new or empty folder, and this one is not empty"
        f" (it holds a batch already: finish that one with --resume {results}, or give another folder)\n"
    )
    assert {p: p.read_bytes() for p in results.rglob("*") if p.is_file()} == before


def test_a_folder_of_other_files_is_refused_and_nothing_is_written_in_it(tmp_path):
    project = make_project(tmp_path / "p")
    home = tmp_path / "home"
    home.mkdir()
    for name in ("notes.txt", "photo.png", "report.pdf", "zeta"):
        (home / name).write_text(name)
    result = CliRunner().invoke(cli, ["run", str(project), "--results", str(home), "--format", "json"])
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["file"] == str(home)
    assert error["message"] == (
        "--results must name a new or empty folder, and this one is not empty (it holds notes.txt, photo.png, report.pdf and 1 more: give another folder)"
    )
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt", "photo.png", "report.pdf", "zeta"]  # not even a lock file


def test_an_empty_folder_is_taken(tmp_path):
    project = make_project(tmp_path / "p")
    (tmp_path / "r").mkdir()
    result = CliRunner().invoke(cli, ["run", str(project), "--results", str(tmp_path / "r")])
    assert result.exit_code == 1, result.output
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["completed_runs"] == 2


def test_two_default_folders_made_in_one_second_are_two_folders(tmp_path):
    parent = tmp_path / "eval" / "results"
    made = [new_folder(parent, "20260101-120000") for _ in range(3)]
    assert [p.name for p in made] == ["20260101-120000", "20260101-120000-2", "20260101-120000-3"]
    assert all(p.is_dir() and not any(p.iterdir()) for p in made)


def test_the_lock_goes_with_its_holder_and_is_taken_again(tmp_path):
    folder = ResultsFolder(tmp_path / "r")
    with folder.claim():
        assert (tmp_path / "r" / LOCK_FILE).read_text() == f"{os.getpid()} run\n"  # who holds it, for a second process's message
    with folder.lock():  # released: a resume takes it
        pass
    killed = subprocess.Popen(
        [sys.executable, "-c", "from dialogcheck.results.lock import BatchLock; from pathlib import Path; import time; "
         f"BatchLock.take(Path({str(tmp_path / 'r')!r})); print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    assert killed.stdout.readline() == "locked\n"
    killed.kill()
    killed.wait()
    killed.stdout.close()
    with folder.lock():  # a killed holder leaves no stale lock
        pass


def test_a_lock_file_removed_by_its_holder_is_not_held_by_whoever_opened_it_before(tmp_path):
    """`abandon` removes the lock file of a batch that wrote nothing: a process that opened that file just before
    and locks it just after holds a file no name leads to, which would let a third lock a new one. It tries again."""
    import fcntl

    folder = tmp_path / "r"
    first = BatchLock.claim(folder, lambda root: None, command="check")
    stale = os.open(folder / LOCK_FILE, os.O_RDONLY)  # what a second process opened before the first let go
    first.abandon()
    assert not folder.exists()  # made by the claim, left as found
    folder.mkdir()
    with BatchLock.take(folder, command="run"):
        fcntl.flock(stale, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the stale file is free: locking it means nothing
        with pytest.raises(LoadError, match="another dialogcheck run"):
            BatchLock.take(folder, command="check")  # the file the name leads to is held
    os.close(stale)


def test_a_link_planted_as_the_lock_file_is_refused_and_its_target_untouched(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (folder / LOCK_FILE).symlink_to(target)
    project = make_project(tmp_path / "p")
    result = CliRunner().invoke(cli, ["run", str(project), "--results", str(folder)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{folder}:1:1: cannot lock the results folder: Too many levels of symbolic links")
    assert target.read_text() == "keep me"
