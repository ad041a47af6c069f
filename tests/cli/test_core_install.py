"""The README's quick start on the core install: `pip install -e .` brings none of the optional extras.

The test environment has every extra, so the run below hides them: an import of any of them fails as it
would where they were never installed.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import EXAMPLE

#: The optional extras' top-level modules (pyproject's `[project.optional-dependencies]` but `test`).
EXTRAS = ("jinja2", "openai", "anthropic", "tenacity", "pyarrow", "ray", "scipy", "mcp", "opentelemetry", "sklearn")

WITHOUT_EXTRAS = f"""
import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
from dialogcheck._cli.main import cli
cli()
"""


def test_the_quick_start_runs_the_example_without_any_extra(tmp_path):
    command = [sys.executable, "-c", WITHOUT_EXTRAS, "run", "--no-judge", str(EXAMPLE), "--results", str(tmp_path / "r")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stderr  # every scenario passes but the two that catch bugs, as the README says
    assert "run_stolen_card                  0/1 passed, 1 failed, 0 errored" in done.stdout
    assert "run_order_timeout                0/1 passed, 1 failed, 0 errored" in done.stdout
    assert "14 runs: 12 passed, 2 failed, 0 errored" in done.stdout
    assert "Traceback" not in done.stderr


def test_without_the_extras_an_import_of_one_fails():
    probe = WITHOUT_EXTRAS.replace("from dialogcheck._cli.main import cli\ncli()", "import jinja2")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1 and "No module named 'jinja2'" in done.stderr


def test_check_judges_recorded_conversations_without_any_extra():
    conversations = sorted(str(p) for p in (EXAMPLE / "conversations").glob("*.jsonl"))
    command = [sys.executable, "-c", WITHOUT_EXTRAS, "check", "--no-judge", "--sop", str(EXAMPLE / "sops" / "replace_card.yml"), *conversations]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode in (0, 1), done.stderr
    assert f"{len(conversations)} conversations:" in done.stdout and "Traceback" not in done.stderr
