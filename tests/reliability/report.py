"""Run the robustness tests (issues 9 and 14) and print the figures RELIABILITY.md quotes.

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
#: What each part of the hardening covers (issue 9's seven items, then issue 14's), and the tests behind it.
SUITES = {
    "1. bad files": ["tests/cli/test_bad_inputs.py"],
    "2. property-based tests": ["tests/property"],
    "3. patterns cannot hang a run": ["tests/checks/test_patterns.py"],
    "4. broken peers": ["tests/reliability/test_broken_peers.py", "tests/connectors/test_run_with_servers.py"],
    "5. interruption": [
        "tests/cli/test_run.py::test_sigint_and_sigterm_keep_finished_runs_and_say_the_batch_was_interrupted", "tests/reliability/test_stops.py",
    ],
    "6. secrets and --safe-env": ["tests/reliability/test_secrets.py", "tests/reliability/test_redact.py", "tests/reliability/test_safe_env.py"],
    "7. paths": ["tests/reliability/test_paths.py", "tests/cli/test_path_arguments.py"],
    "8. templates in a sandbox": ["tests/llm/test_template_sandbox.py"],
    "9. no environment value leaves under --safe-env": ["tests/reliability/test_api_key_env.py"],
    "10. held credentials masked wherever text is written": ["tests/reliability/test_held_secrets.py", "tests/llm/test_cache.py"],
    "11. agent text cannot forge lines; output size": [
        "tests/report/test_forged_lines.py", "tests/test_shown.py", "tests/reliability/test_output_size.py",
    ],
    "12. agents that exit or answer what JSON cannot hold": [
        "tests/reliability/test_agent_exits.py", "tests/reliability/test_agent_values.py", "tests/connectors/test_python.py",
    ],
    "13. one batch per results folder; resume": ["tests/reliability/test_results_folder.py", "tests/cli/test_resume.py"],
    "14. --agent and agents that are down": ["tests/connectors/test_agent_option.py"],
    "15. input read once, bounded records, one JSON document": [
        "tests/cli/test_check_pipes.py", "tests/reliability/test_hostile_records.py", "tests/cli/test_check_json_document.py",
    ],
    "16. typos in logs": ["tests/events/test_typos.py", "tests/cli/test_check_warnings.py"],
    "17. YAML, imports and derived scenario names": [
        "tests/scenario/test_load.py", "tests/importers/test_import_cmd.py", "tests/importers/test_tau_bench_scenarios.py",
        "tests/importers/test_format_guess.py",
    ],
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
