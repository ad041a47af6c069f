"""`dialogcheck check --input-format FORMAT`: recorded runs judged straight from another tool's file."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.importers.tau_bench_scenarios import derive_scenarios

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "tau_bench_airline_sample.json"


def test_check_reads_tau_bench_runs_and_agrees_with_the_rewards(tmp_path):
    for slug, text in derive_scenarios(SAMPLE):
        (tmp_path / f"{slug}.yml").write_text(text)
    rewards = {f"task-{r['task_id']}-trial-{r['trial']}": r["reward"] for r in json.loads(SAMPLE.read_text())}
    result = CliRunner().invoke(
        cli, ["check", "--scenario", str(tmp_path / "tau-bench-task-44.yml"), "--input-format", "tau-bench", str(SAMPLE), "--format", "json"]
    )
    assert result.exit_code == 1, result.output  # task 44 trial 1 failed, and runs of task 1 are not task 44's
    verdicts = {c["conversation_id"]: c["verdict"] for c in json.loads(result.stdout)["conversations"]}
    assert verdicts["task-44-trial-0"] == "pass" and rewards["task-44-trial-0"] == 1.0
    assert verdicts["task-44-trial-1"] == "fail" and rewards["task-44-trial-1"] == 0.0


def test_check_reports_bad_imported_input_with_its_position(tmp_path):
    bad = tmp_path / "runs.json"
    bad.write_text('[\n  {"task_id": 1, "traj": "not a list"}\n]\n')
    scenario = tmp_path / "s.yml"
    scenario.write_text("scenario:\n  name: s\n  simulation_context: c\n")
    result = CliRunner().invoke(cli, ["check", "--scenario", str(scenario), "--input-format", "tau-bench", str(bad)])
    assert result.exit_code == 2
    assert result.stderr == f"{bad}:2:26: `traj` must be a list, got a string\n"
