"""Blame where a failure is shown: `check` text and JSON with `summary.blame`, `run_N.json`, summary.json and `--blame off`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests import inprocess

EXAMPLE = Path(__file__).parents[2] / "examples" / "card_replace"
SOP = EXAMPLE / "sops" / "replace_card.yml"
CONVERSATIONS = EXAMPLE / "conversations"


def dialogcheck(*args: object, cwd: Path | None = None):
    return inprocess.run(["dialogcheck", *map(str, args)], cwd=cwd, text=True)


def test_check_json_blames_each_failure_and_counts_them():
    done = dialogcheck("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--format", "json")
    document = json.loads(done.stdout)
    blamed = {Path(c["source"]).name: c.get("blame") for c in document["conversations"]}
    assert blamed["damaged_card_ok.jsonl"] is None  # a pass has none
    unconfirmed = blamed["sop_orders_without_confirming.jsonl"]
    assert list(unconfirmed) == ["actor", "turn", "event", "source_index", "checks", "reason", "rule"]
    assert (unconfirmed["actor"], unconfirmed["turn"], unconfirmed["event"], unconfirmed["rule"]) == ("agent", 1, 8, "forbidden_event")
    assert unconfirmed["checks"] == ["sop confirm_before_ordering"] and unconfirmed["source_index"] is None
    assert blamed["transfer_tracker.json"]["event"] == 10  # the forbidden transfer, before the steps never taken
    assert document["summary"]["blame"] == {"agent": 4, "user": 0, "environment": 0, "judge": 0, "unknown": 0}


def test_check_text_says_whose_fault_under_the_failure_and_in_the_tally():
    done = dialogcheck("check", "--no-judge", "--sop", SOP, CONVERSATIONS)
    assert "  blame: agent at turn 1, event 8 [forbidden_event]: sop confirm_before_ordering: order_replacement at event 8" in done.stdout
    assert "8 conversations: 4 passed, 4 failed, 0 errored\nwhose fault: 4 agent\n" in done.stdout


def test_blame_off_leaves_it_out():
    text = dialogcheck("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--blame", "off").stdout
    document = json.loads(dialogcheck("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--blame", "off", "--format", "json").stdout)
    assert "  blame: " not in text and "whose fault" not in text
    assert all("blame" not in c for c in document["conversations"]) and "blame" not in document["summary"]


def test_an_imported_failure_points_at_its_message_in_the_trajectory(tmp_path):
    sample = Path(__file__).parents[1] / "importers" / "data" / "tau_bench_airline_sample.json"
    dialogcheck("import", "--from", "tau-bench", sample, "-o", tmp_path / "runs.jsonl", "--derive-scenarios", tmp_path / "scenarios")
    done = dialogcheck("check", "--no-judge", "--scenario", tmp_path / "scenarios", "--pair", r"task-(\d+)", tmp_path / "runs.jsonl", "--format", "json")
    trajectories = {f"task-{t['task_id']}-trial-{t['trial']}": t["traj"] for t in json.loads(sample.read_text())}
    failed = [c for c in json.loads(done.stdout)["conversations"] if c["verdict"] == "fail"]
    assert failed
    for conversation in failed:
        blame = conversation["blame"]
        message = trajectories[conversation["conversation_id"]][blame["source_index"]]
        assert message["role"] == "assistant"  # the agent's move at the turn it was missing from, or its call


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    project = tmp_path_factory.mktemp("project") / "card_replace"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("results", "__pycache__", ".dialogcheck"))
    results = project.parent / "results"
    done = dialogcheck("run", "--no-judge", project / "eval" / "scenarios" / "run_order_timeout.yml", "--runs", "2", "--results", results)
    assert done.returncode == 1, done.stderr
    return results, done.stdout


def test_a_run_blames_the_agent_that_mishandled_the_fault_its_scenario_injects(run_folder):
    results, stdout = run_folder
    run = json.loads((results / "run_order_timeout" / "run_1.json").read_text())
    assert (run["blame"]["actor"], run["blame"]["rule"], run["blame"]["turn"]) == ("agent", "fault_mishandled", 2)
    assert "blame: agent at turn 2" in (results / "run_order_timeout" / "run_1.txt").read_text()
    summary = json.loads((results / "summary.json").read_text())
    assert summary["blame"] == {"agent": 2, "user": 0, "environment": 0, "judge": 0, "unknown": 0}
    assert "2 runs: 0 passed, 2 failed, 0 errored\nwhose fault: 2 agent\n" in stdout
    assert "whose fault: 2 agent" in dialogcheck("report", results).stdout
