"""Run the robustness tests of issue 9 and print the figures RELIABILITY.md quotes.

    .venv/bin/python tests/reliability/report.py

The figures are recorded by the tests themselves while they run (`tests/reliability/figures.py`),
so what this prints is what that run measured. Exit status: pytest's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Each item of the issue and the tests that cover it.
SUITES = {
    "1. bad files": ["tests/cli/test_bad_inputs.py"],
    "2. property-based tests": ["tests/property"],
    "3. patterns cannot hang a run": ["tests/checks/test_patterns.py"],
    "4. broken peers": ["tests/reliability/test_broken_peers.py", "tests/connectors/test_run_with_servers.py"],
    "5. interruption": ["tests/cli/test_run.py::test_sigint_and_sigterm_keep_finished_runs_and_say_the_batch_was_interrupted"],
    "6. secrets and --safe-env": ["tests/reliability/test_secrets.py", "tests/reliability/test_redact.py", "tests/reliability/test_safe_env.py"],
    "7. paths": ["tests/reliability/test_paths.py"],
}


def _counts(junit: Path) -> tuple[int, int, int]:
    """Tests, failures (errors included) and skips in a JUnit file."""
    suite = ElementTree.parse(junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return int(suite.get("tests", 0)), failed, int(suite.get("skipped", 0))


def main() -> int:
    rows, figures, status = [], [], 0
    with tempfile.TemporaryDirectory() as folder:
        record_file = Path(folder) / "figures.jsonl"
        for item, targets in SUITES.items():
            junit = Path(folder) / "junit.xml"
            env = os.environ | {"DIALOGCHECK_RELIABILITY_FIGURES": str(record_file)}
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *targets],
                cwd=REPO, env=env, capture_output=True, text=True, check=False,
            )
            status = status or done.returncode
            tests, failed, skipped = _counts(junit)
            rows.append((item, tests, failed, skipped))
            if done.returncode:
                print(done.stdout[-4000:], file=sys.stderr)
        if record_file.exists():
            figures = [json.loads(line) for line in record_file.read_text().splitlines()]
    print("| issue item | tests | failed | skipped |\n|---|---|---|---|")
    for item, tests, failed, skipped in rows:
        print(f"| {item} | {tests} | {failed} | {skipped} |")
    print("\n| figure | measured |\n|---|---|")
    for figure in sorted(figures, key=lambda f: f["name"]):
        print(f"| {figure['name']} | {json.dumps(figure['value'])} |")
    return status


if __name__ == "__main__":
    sys.exit(main())
