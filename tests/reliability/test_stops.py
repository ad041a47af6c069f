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
