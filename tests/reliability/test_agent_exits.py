"""An agent that exits or interrupts errors its run; a signal to dialogcheck still interrupts the batch.

A Python agent runs inside the dialogcheck process, a sync one in worker
threads and an async one in the event loop. `sys.exit(0)` there once ended
the batch with exit 0 and no summary, JUnit or report, and `SystemExit(3)` or
`KeyboardInterrupt` leaked "Task exception was never retrieved". Each batch
here is a real `dialogcheck run` subprocess.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

AGENT = """
import asyncio, os, sys


def _answer(text):
    if text == "exit0":
        sys.exit(0)
    if text == "exit3":
        raise SystemExit(3)
    if text == "interrupt":
        raise KeyboardInterrupt
    return {"messages": [{"text": "ok " + (text or "hello")}], "events": []}


def respond(conversation_id, text):
    return _answer(text)


async def respond_async(conversation_id, text):
    if text == "slow":  # the first run passes; the next waits in here, as the test knows from the log, for the signal
        with open(os.environ["AGENT_LOG"], "a") as log:
            log.write("entered\\n")
        with open(os.environ["AGENT_LOG"]) as log:
            if log.read().count("entered") > 1:
                await asyncio.sleep(3600)
    return _answer(text)
"""
SCENARIO = """\
scenario:
  name: {slug}
  simulation_context: c
  script: [{slug}]
  goals:
    assertions:
      - bot_uttered: {{text_matches: "ok {slug}"}}
"""
#: scenario -> what its run must say (None: it passes).
RAISES = {
    "fine": None,
    "exit0": "raised SystemExit: 0",
    "exit3": "raised SystemExit: 3",
    "interrupt": "raised KeyboardInterrupt",
}


def project(root: Path, slugs) -> Path:
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (root / "agent.py").write_text(AGENT)
    for slug in slugs:
        (root / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(slug=slug))
    return root


@pytest.mark.parametrize("function", ["respond", "respond_async"])
def test_an_agent_that_exits_or_interrupts_errors_only_its_runs(tmp_path, function):
    root = project(tmp_path / "p", RAISES)
    results = tmp_path / "r"
    done = subprocess.run(
        [str(DIALOGCHECK), "run", str(root), "--agent", f"python:agent:{function}", "--runs", "2", "--parallel", "8", "--results", str(results)],
        capture_output=True, text=True, env=clean_env(), timeout=300,
    )
    assert done.returncode == 3, done.stdout + done.stderr  # runs errored, none failed
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr, done.stderr
    summary = json.loads((results / "summary.json").read_text())
    assert (summary["completed_runs"], summary["planned_runs"], summary["passed"], summary["errored"]) == (8, 8, 2, 6)
    for slug, reason in RAISES.items():
        for number in (1, 2):
            run = json.loads((results / slug / f"run_{number}.json").read_text())
            if reason is None:
                assert run["verdict"] == "pass", run
            else:
                assert (run["verdict"], run["error"]) == ("error", f"agent: agent `agent:{function}` {reason}")
        if reason is not None:  # the two runs errored alike: one line
            assert f"errored: {slug} runs 1-2: agent: agent `agent:{function}` {reason}" in done.stdout
    assert (results / "junit.xml").is_file() and (results / "report.html").is_file()


def _entered(log: Path) -> int:
    """How many runs have entered the slow agent's coroutine."""
    return log.read_text().count("entered") if log.exists() else 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_dialogcheck_still_interrupts_a_batch_of_an_async_agent(tmp_path, sig):
    """The signal lands while the agent's coroutine runs in the event loop: the batch stops, it is not one errored run."""
    root = project(tmp_path / "p", ["slow"])
    results = tmp_path / "r"
    process = subprocess.Popen(
        [str(DIALOGCHECK), "run", str(root), "--agent", "python:agent:respond_async", "--runs", "4", "--parallel", "1", "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(AGENT_LOG=str(tmp_path / "agent.log")),
    )
    deadline = time.monotonic() + 300  # a bound on a hang, not a wait: the loop ends once the second run is in
    while _entered(tmp_path / "agent.log") < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _entered(tmp_path / "agent.log") == 2, process.communicate(timeout=60)
    process.send_signal(sig)  # the second run is inside the agent's coroutine, there until the signal
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Traceback" not in err and f"finish with: dialogcheck run --resume {results}" in err
    summary = json.loads((results / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["completed_runs"] == 1
    assert summary["errored"] == 0  # the interrupted run is not on record as an agent error
