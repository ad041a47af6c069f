"""Figures the reliability tests measure, collected for RELIABILITY.md by `tests/reliability/report.py`.

A test calls `record(name, value)`; when $DIALOGCHECK_RELIABILITY_FIGURES names a file, each
figure is appended to it as one JSON line, else nothing happens. So the figures printed
by the report always come from a real run of the tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV = "DIALOGCHECK_RELIABILITY_FIGURES"


def record(name: str, value: Any) -> None:
    target = os.environ.get(ENV)
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"name": name, "value": value}) + "\n")


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    #: CPU seconds of the process and the children it waited for: the work a run did, which a loaded machine does
    #: not stretch as it stretches `wall_s`, so a bound on how quickly a command ends is a bound on this.
    cpu_s: float
    peak_rss_mb: float


#: Runs the command and reports its own peak memory. The measured process is started from this small
#: interpreter, not from pytest: Linux counts the memory a child had before `exec` (all of pytest's) in its peak.
_WRAPPER = """
import json, os, subprocess, sys
process = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(process.pid, 0)
process.returncode = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as out:
    json.dump({"returncode": process.returncode, "maxrss_kb": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime}, out)
"""


def measure(command: list[str], folder: Path, env: dict[str, str] | None = None, timeout: float = 600) -> Measured:
    """Run a subprocess to its end (`timeout` bounds a hang); its wall-clock and CPU time and its own peak resident
    memory (from wait4)."""
    out, err, report = folder / "measured.stdout", folder / "measured.stderr", folder / "measured.json"
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        subprocess.run([sys.executable, "-c", _WRAPPER, str(report), *command], stdout=stdout, stderr=stderr, env=env, timeout=timeout, check=False)
    wall = time.monotonic() - started
    found = json.loads(report.read_text())
    return Measured(found["returncode"], out.read_text(errors="replace"), err.read_text(errors="replace"), wall, found["cpu_s"], found["maxrss_kb"] / 1024)
