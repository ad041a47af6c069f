"""`check` of repeated conversations: per scenario, its pass rate and pass^k over its repeats, the same rows as
`run`'s summary, in text, in JSON's `summary.scenarios`, in `check --output`'s summary.json, in `report` of
that folder, and in the HTML's pass^k column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import REPO

SAMPLE = REPO / "tests" / "importers" / "data" / "tau_bench_airline_sample.json"
#: The same rows as a run's summary.json `scenarios` (results/codec.py `_scenario_row`), names pinned.
ROW_KEYS = {"slug", "name", "runs", "passed", "failed", "errored", "suspect", "pass_rate", "pass_hat_k", "flaky"}


def invoke(*args: str, cwd: Path):
    import os

    here = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def trials(tmp_path_factory) -> Path:
    """The tau-bench sample with task 1's passing trial repeated once more: task 1 passes 2 of 3, task 44 1 of 2."""
    folder = tmp_path_factory.mktemp("trials")
    assert invoke("import", "--from", "tau-bench", str(SAMPLE), "-o", "runs.jsonl", "--derive-scenarios", "scenarios", cwd=folder).exit_code == 0
    lines = (folder / "runs.jsonl").read_text().splitlines()
    [passing] = [line for line in lines if '"task-1-trial-1"' in line]
    lines.append(passing.replace('"task-1-trial-1"', '"task-1-trial-2"'))
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return folder


CHECK = ("check", "--no-judge", "--scenario", "scenarios", "--pair", r"task-(\d+)", "runs.jsonl")
TASK_1 = {"slug": "tau-bench-task-1", "name": "tau-bench airline task 1", "runs": 3, "passed": 2, "failed": 1, "errored": 0, "suspect": 0,
          "pass_rate": 2 / 3, "pass_hat_k": {"1": 2 / 3, "2": 1 / 3, "3": 0.0}, "flaky": True}


def test_check_prints_each_scenarios_pass_rate_and_pass_hat_k(trials):
    result = invoke(*CHECK, cwd=trials)
    assert result.exit_code == 1
    assert (
        "per scenario:\n"
        "tau-bench-task-1                 2/3 passed, 1 failed, 0 errored  pass rate 67%  pass^1 67% pass^2 33% pass^3 0%  flaky\n"
        "tau-bench-task-44                1/2 passed, 1 failed, 0 errored  pass rate 50%  pass^1 50% pass^2 0%  flaky\n"
    ) in result.output


def test_check_json_summary_holds_the_rows_of_a_runs_summary(trials):
    result = invoke(*CHECK, "--format", "json", cwd=trials)
    rows = json.loads(result.output)["summary"]["scenarios"]
    assert [set(row) for row in rows] == [ROW_KEYS, ROW_KEYS]
    assert rows[0] == TASK_1
    assert rows[1]["slug"] == "tau-bench-task-44" and rows[1]["pass_hat_k"] == {"1": 0.5, "2": 0.0}


def test_check_output_writes_them_and_report_shows_them(trials):
    result = invoke(*CHECK, "--output", "out", cwd=trials)
    assert result.exit_code == 1, result.output
    summary = json.loads((trials / "out" / "summary.json").read_text())
    assert summary["scenarios"][0] == TASK_1
    shown = invoke("report", "out", cwd=trials)
    assert "tau-bench-task-1                 2/3 passed, 1 failed, 0 errored  pass rate 67%  pass^1 67% pass^2 33% pass^3 0%  flaky\n" in shown.output
    assert json.loads(invoke("report", "out", "--format", "json", cwd=trials).output)["scenarios"] == summary["scenarios"]


def test_the_html_fills_its_pass_hat_k_column(trials):
    assert invoke(*CHECK, "--html", "check.html", cwd=trials).exit_code == 1
    page = (trials / "check.html").read_text()
    assert '<td class="num">67%</td><td>pass^1 67% pass^2 33% pass^3 0%</td>' in page


def test_conversations_of_no_repeated_scenario_print_no_table(trials):
    result = invoke("check", "--no-judge", "--scenario", "scenarios", "--pair", r"task-(\d+)", "runs.jsonl", cwd=trials)
    assert "per scenario:" in result.output  # repeats present
    alone = trials / "alone.jsonl"
    alone.write_text("".join(line + "\n" for line in (trials / "runs.jsonl").read_text().splitlines() if "trial-0" in line))
    result = invoke("check", "--no-judge", "--scenario", "scenarios", "--pair", r"task-(\d+)", "alone.jsonl", cwd=trials)
    assert "per scenario:" not in result.output and "2 conversations:" in result.output
