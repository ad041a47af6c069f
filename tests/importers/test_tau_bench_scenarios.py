"""Scenarios derived from tau-bench tasks: they load, and they pass and fail where the recorded reward does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialogcheck import LoadError, Outcome, evaluate, load_scenario
from dialogcheck.importers import import_file
from dialogcheck.importers.tau_bench_scenarios import (
    READ_TOOLS,
    WRITE_TOOLS,
    derive_scenarios,
    output_pattern,
    scenario_yaml,
    task_assertions,
)

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "tau_bench_airline_sample.json"


def _scenarios(path: Path, folder: Path) -> dict:
    found = {}
    for slug, text in derive_scenarios(path):
        (folder / f"{slug}.yml").write_text(text)
        found[slug] = load_scenario(folder / f"{slug}.yml")
    return found


@pytest.mark.parametrize("sample", [SAMPLE, DATA / "tau_bench_quirks.json"])
def test_verdicts_follow_the_recorded_rewards(tmp_path, sample):
    scenarios = _scenarios(sample, tmp_path)
    rewards = [run["reward"] for run in json.loads(sample.read_text())]
    verdicts = []
    for imported in import_file(sample, "tau-bench"):
        task = imported.conversation_id.split("-trial-")[0]
        verdicts.append(evaluate(scenarios[f"tau-bench-{task}"], imported.conversation, no_judge=True).verdict)
    assert verdicts == [Outcome.PASS if r == 1.0 else Outcome.FAIL for r in rewards]


def test_one_scenario_per_task(tmp_path):
    scenarios = _scenarios(SAMPLE, tmp_path)
    assert sorted(scenarios) == ["tau-bench-task-1", "tau-bench-task-44"]
    task1 = scenarios["tau-bench-task-1"]
    assert task1.name == "tau-bench airline task 1"
    assert task1.tags == ("tau-bench", "airline", "task-1")
    assert task1.simulation_context.startswith("You are olivia_gonzalez_2305")


def test_goals_are_expected_writes_exact_counts_and_outputs():
    task = {
        "instruction": "x",
        "actions": [
            {"name": "get_user_details", "kwargs": {"user_id": "u"}},
            {"name": "cancel_reservation", "kwargs": {"reservation_id": "A"}},
            {"name": "cancel_reservation", "kwargs": {"reservation_id": "B"}},
            {"name": "send_certificate", "kwargs": {"user_id": "u", "amount": 50}},
            {"name": "send_certificate", "kwargs": {"user_id": "u", "amount": 50}},
            {"name": "transfer_to_human_agents", "kwargs": {"summary": "s"}},
        ],
        "outputs": ["327"],
    }
    assert task_assertions(task, "airline") == [
        {"tool_executed": {"tool_name": "cancel_reservation", "source": "local", "arguments": {"reservation_id": "A"}, "is_error": False}},
        {"tool_executed": {"tool_name": "cancel_reservation", "source": "local", "arguments": {"reservation_id": "B"}, "is_error": False}},
        {"tool_executed": {"tool_name": "send_certificate", "source": "local", "arguments": {"user_id": "u", "amount": 50}, "is_error": False, "times": 2}},
        {"tool_executed": {"tool_name": "book_reservation", "source": "local", "is_error": False, "times": 0}},
        {"tool_executed": {"tool_name": "cancel_reservation", "source": "local", "is_error": False, "times": 2}},
        {"tool_executed": {"tool_name": "send_certificate", "source": "local", "is_error": False, "times": 2}},
        {"tool_executed": {"tool_name": "update_reservation_baggages", "source": "local", "is_error": False, "times": 0}},
        {"tool_executed": {"tool_name": "update_reservation_flights", "source": "local", "is_error": False, "times": 0}},
        {"tool_executed": {"tool_name": "update_reservation_passengers", "source": "local", "is_error": False, "times": 0}},
        {"bot_uttered": {"text_matches": "(?i)3,*2,*7"}},
    ]


def test_read_and_write_tools_do_not_overlap():
    for domain in WRITE_TOOLS:
        assert not READ_TOOLS[domain] & WRITE_TOOLS[domain]
    assert "transfer_to_human_agents" in READ_TOOLS["airline"]


@pytest.mark.parametrize(
    ("output", "reply", "found"),
    [
        ("1000", "a refund of $1,000 today", True),
        ("1000", "a refund of $1,0,0,0", True),
        ("1000", "a refund of $1.000", False),
        ("Yes", "YES, that works", True),
        ("23553", "the total is $23,553.00", True),
        ("a.b", "axb", False),
    ],
)
def test_outputs_match_as_tau_bench_compares_them(output, reply, found):
    benchmark = output.lower() in reply.lower().replace(",", "")
    assert benchmark is found
    assert bool(re.search(output_pattern(output), reply)) is found


def test_task_text_never_reads_as_a_variable(tmp_path):
    text = scenario_yaml(3, {"instruction": "Say ${HOME} and \"quote\"", "actions": [], "outputs": []}, "airline")
    (tmp_path / "t.yml").write_text(text)
    assert load_scenario(tmp_path / "t.yml", environ={}).simulation_context == 'Say ${HOME} and "quote"'


def test_a_bad_task_is_reported_at_its_place(tmp_path):
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([{"task_id": 1, "info": {"task": {"instruction": "x", "actions": [{"name": "think"}]}}, "traj": []}], indent=2))
    with pytest.raises(LoadError) as info:
        list(derive_scenarios(path))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if '"name": "think"' in t) - 1
    assert str(info.value) == f"{path}:{line}:11: `action kwargs` must be an object, got null"
