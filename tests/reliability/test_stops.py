"""A stop from outside while work is under way: `run` signalled while a Python agent's call blocks, and `check
--jobs` with a worker process killed. Each ends promptly with its exit code and the words to say so; no traceback.

No timing is raced: each test waits (with a generous bound) for the moment it needs, seen from outside: the agent's
marker file, the worker process in the process table; the bounds are far below the agent's sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
BOUND = 120  # seconds: what "promptly" may take on a machine ten times as loaded; the agent sleeps 600

SLEEPING_AGENT = """
import pathlib, time

def respond(conversation_id, text, initial_slots=None):
    if text is None:
        return {{"messages": [{{"text": "Hi"}}], "events": []}}
    pathlib.Path({marker!r}).write_text("called")
    time.sleep(600)
    return {{"messages": [{{"text": "late"}}], "events": []}}
"""
SCENARIO = "scenario:\n  name: Slow\n  simulation_context: c\n  script: [hello]\n  goals:\n    assertions:\n      - tool_executed: {tool_name: lookup, source: local}\n"


def wait_for(seen, what: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + BOUND
    while not seen():
        if process.poll() is not None:
            raise AssertionError(f"the command ended ({process.returncode}) before {what}: {process.communicate()}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"{what} did not happen within {BOUND} s")
        time.sleep(0.05)


def test_sigterm_while_a_python_agent_call_blocks_ends_run_at_once_with_130_and_a_resumable_folder(tmp_path):
    marker = tmp_path / "called.txt"
    project = tmp_path / "p"
    (project / "eval" / "scenarios").mkdir(parents=True)
    (project / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (project / "agent.py").write_text(SLEEPING_AGENT.format(marker=str(marker)))
    (project / "eval" / "scenarios" / "slow.yml").write_text(SCENARIO)
    results = tmp_path / "results"
    process = subprocess.Popen(
        [str(DIALOGCHECK), "run", str(project), "--no-judge", "--runs", "2", "--parallel", "1", "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    wait_for(marker.exists, "the agent's call started", process)
    process.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = process.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"run did not end within {BOUND} s of SIGTERM (it waited for the agent's call)") from None
    assert process.returncode == 130, stderr
    assert f"interrupted: 0 of 2 runs finished; finish with: dialogcheck run --resume {results}" in stderr
    assert "Traceback" not in stderr
    assert (results / "plan.json").is_file()


def descendants(pid: int) -> list[int]:
    """The processes under `pid`, read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [pid]
    while todo:
        pid = todo.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found.extend(children)
        todo.extend(children)
    return found


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def a_worker(pid: int) -> int | None:
    """A worker process of the pool under `pid`: forked from it (its command line), or from its fork server."""
    for child in descendants(pid):
        line = cmdline(child)
        if b"resource_tracker" in line:
            continue
        if line == cmdline(pid) or (b"forkserver" in line and any(child in descendants(server) for server in descendants(pid) if server != child)):
            return child
    return None


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_killed_jobs_worker_is_one_error_line_exit_3_and_a_json_error(tmp_path, output_format):
    """The input's last part is a FIFO only the test writes to, so the batch cannot be over (nor its workers gone)
    before the test has killed one: then the FIFO gets its conversation and is closed."""
    tracker = json.dumps({"sender_id": "c", "events": [json.loads(line) for line in (EXAMPLE / "conversations" / "sop_follows_procedure.jsonl").read_text().splitlines()]})
    first = tmp_path / "first.jsonl"
    first.write_text(tracker + "\n")
    fifo = tmp_path / "rest.jsonl"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [str(DIALOGCHECK), "check", "--jobs", "2", "--stream", "--no-judge", "--sop", str(EXAMPLE / "sops" / "replace_card.yml"),
         str(first), str(fifo), "--format", output_format],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        worker: list[int] = []
        wait_for(lambda: worker.append(a_worker(process.pid)) or worker[-1] is not None, "a worker process started", process)
        os.kill(worker[-1], signal.SIGKILL)
        wait_for(lambda: gone(worker[-1]), "the killed worker was gone", process)
        deadline = time.monotonic() + BOUND
        while True:  # dialogcheck has the FIFO open for reading (or soon has): opening it to write then never blocks
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "dialogcheck never opened the FIFO"
                time.sleep(0.05)
        with os.fdopen(fd, "w") as rest:
            rest.write(tracker + "\n")
        stdout, stderr = process.communicate(timeout=BOUND)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    said = "a worker process ended before it gave back its results"
    assert process.returncode == 3, (stdout, stderr)
    assert "Traceback" not in stderr
    if output_format == "json":
        assert said in json.loads(stdout)["error"]["message"]
    else:
        assert stderr.startswith(f"error: {said}") and stderr.count("\n") == 1, stderr
