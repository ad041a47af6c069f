"""The folders dialogcheck writes, read back: `check` judges a `run` results folder's recorded events again,
and `report` prints or renders a `check --output` folder.

Every run is the command run in process (`tests/inprocess.py`), on folders the commands themselves wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests import inprocess
from tests.conftest import EXAMPLE, plain_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
CONFIRMS = EXAMPLE / "eval" / "scenarios" / "card_replace_confirms_first.yml"


def run(*args) -> subprocess.CompletedProcess:
    env = plain_env()
    return inprocess.run([DIALOGCHECK, *args], env=env, timeout=300)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """The example project's batch, as `dialogcheck run` writes it (one run of each of its 12 scenarios)."""
    folder = tmp_path_factory.mktemp("run") / "results"
    done = run("run", "--no-judge", "--results", folder, EXAMPLE)
    assert done.returncode == 1, done.stderr  # run_stolen_card catches the example agent's bug
    return folder


def test_check_reads_a_run_folder_as_its_runs_recorded_events(results):
    done = run("check", "--no-judge", "--format", "json", "--scenario", EXAMPLE, results)
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    runs = {path.parent.name: json.loads(path.read_text()) for path in results.glob("*/run_1.json")}
    assert len(document["conversations"]) == len(runs) == 14  # not run_N.json, summary.json, plan.json
    for judged in document["conversations"]:
        path = Path(judged["source"])  # each named by its path
        assert path.name == "run_1.events.jsonl" and path.parent.parent == results
        slug = path.parent.name
        assert judged["scenario"] == slug  # judged against the scenario `run` filed it under
        assert judged["verdict"] == runs[slug]["verdict"]  # as `run` judged it
    one = run("check", "--no-judge", "--format", "json", "--scenario", CONFIRMS, results)
    assert {c["subject"] for c in json.loads(one.stdout)["conversations"]} == {"Agent asks before ordering and orders once"}


@pytest.fixture(scope="module")
def output(results, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("check") / "out"
    done = run("check", "--no-judge", "--output", folder, "--scenario", EXAMPLE, results)
    assert done.returncode == 1, done.stderr
    return folder


def test_report_prints_a_check_output_folder(output):
    text = run("report", output)
    assert text.returncode == 1
    printed = text.stdout.decode()
    assert printed.startswith("checks, most failures first:\n")  # the one check that failed, by its scenario
    assert printed.endswith(f"\n14 conversations: 12 passed, 2 failed, 0 errored\nwhose fault: 2 agent\nresults: 14 shards in {output}\n")
    document = run("report", "--format", "json", output)
    assert document.returncode == 1 and json.loads(document.stdout) == json.loads((output / "summary.json").read_text())


def test_report_renders_a_check_output_folder(output, tmp_path):
    junit, html = tmp_path / "junit.xml", tmp_path / "report.html"
    done = run("report", "--junit", junit, "--html", html, output)
    assert done.returncode == 1, done.stderr
    assert done.stdout.decode() == f"wrote {junit}\nwrote {html}\n"
    root = ElementTree.parse(junit).getroot()
    assert root.get("tests") == "14" and root.get("failures") == "2"
    assert len(root.findall("testsuite")) == 14  # a suite per scenario
    page = html.read_text()
    assert "run_stolen_card" in page and "order_replacement" in page


def test_report_reads_parquet_shards(results, tmp_path):
    pytest.importorskip("pyarrow")
    folder = tmp_path / "out"
    assert run("check", "--no-judge", "--output", folder, "--output-format", "parquet", "--scenario", EXAMPLE, results).returncode == 1
    done = run("report", "--format", "json", folder)
    assert done.returncode == 1 and json.loads(done.stdout)["conversations"] == 14


def test_a_broken_summary_is_bad_input(output, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "part-00000.jsonl").write_bytes((output / "part-00000.jsonl").read_bytes())
    (broken / "summary.json").write_text('{"conversations": 1}')
    done = run("report", broken)
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"{broken / 'summary.json'}:1:1: not the summary of `check --output`: `conversations`, `passed`, `failed` and `errored` are needed\n"
    )
