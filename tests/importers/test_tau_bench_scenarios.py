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


# --- task ids from the file become safe file names, or the input is refused ---------------------


def _runs_with_ids(tmp_path: Path, *task_ids) -> Path:
    base = json.loads(SAMPLE.read_text())[0]
    runs = [{**base, "task_id": task_id, "trial": i} for i, task_id in enumerate(task_ids)]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs, indent=2))
    return path


@pytest.mark.parametrize(
    ("task_id", "slug"),
    [
        (7, "tau-bench-task-7"),
        ("airline-7", "tau-bench-task-airline-7"),
        ("タスク", "tau-bench-task-タスク"),
        ("../../../../tmp/x/PWNED", "tau-bench-task-.._.._.._.._tmp_x_PWNED~"),
        ("..", "tau-bench-task-~"),
        ("a\\b:c", "tau-bench-task-a_b_c~"),
        ("x" * 5000, "tau-bench-task-" + "x" * 85 + "~"),
    ],
)
def test_a_task_id_becomes_a_safe_file_name(tmp_path, task_id, slug):
    ((derived, text),) = derive_scenarios(_runs_with_ids(tmp_path, task_id))
    assert derived == slug or (slug.endswith("~") and derived.startswith(slug) and len(derived) == len(slug) + 12)
    assert "/" not in derived and "\\" not in derived and derived not in (".", "..") and len(derived.encode()) <= 120
    (tmp_path / f"{derived}.yml").write_text(text)
    assert load_scenario(tmp_path / f"{derived}.yml", environ={}).name == f"tau-bench airline task {task_id}"


@pytest.mark.parametrize(
    ("task_id", "message"),
    [
        ({"id": 1}, "`task_id` must be an integer or a string, got an object"),
        ([1], "`task_id` must be an integer or a string, got a list"),
        (True, "`task_id` must be an integer or a string, got a boolean"),
        (1.5, "`task_id` must be an integer or a string, got the number 1.5"),
        ("", "`task_id` must not be empty"),
        ("x\x00y", "`task_id` holds the control character '\\x00': expected a plain name"),
        ("1\nscenario: {}", "`task_id` holds the control character '\\n': expected a plain name"),
    ],
)
def test_a_task_id_that_cannot_name_anything_is_bad_input_at_its_place(tmp_path, task_id, message):
    path = _runs_with_ids(tmp_path, task_id)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if '"task_id"' in t)
    for read in (lambda: list(derive_scenarios(path)), lambda: list(import_file(path, "tau-bench"))):
        with pytest.raises(LoadError) as info:
            read()
        (problem,) = info.value.problems
        assert (problem.line, problem.message) == (line, message)


@pytest.mark.parametrize(("first", "second"), [("a/b", "a_b~a908b527b8e2"), ("T1", "t1")])
def test_two_tasks_whose_file_names_collide_are_refused_not_overwritten(tmp_path, first, second):
    from dialogcheck._paths import safe_file_name

    assert safe_file_name(f"tau-bench-task-{first}").casefold() == safe_file_name(f"tau-bench-task-{second}").casefold()
    path = _runs_with_ids(tmp_path, first, second)
    with pytest.raises(LoadError) as info:
        list(derive_scenarios(path))
    (problem,) = info.value.problems
    lines = [i for i, t in enumerate(path.read_text().splitlines(), 1) if '"task_id"' in t]
    assert problem.line == lines[1]
    assert problem.message.startswith(f"task {second!r} and task {first!r} (line {lines[0]}) would both be written as the scenario file")


def test_ids_that_only_look_alike_keep_their_own_files(tmp_path):
    slugs = [slug for slug, _ in derive_scenarios(_runs_with_ids(tmp_path, "a/b", "a_b", "a:b"))]
    assert len(set(slugs)) == 3 and slugs[1] == "tau-bench-task-a_b"


def test_a_lone_surrogate_in_a_task_is_bad_input_at_its_place(tmp_path):
    """The standard library's JSON reader takes `\\ud800`; no scenario file (UTF-8) can hold it."""
    path = _runs_with_ids(tmp_path, 1)
    path.write_text(path.read_text().replace('"instruction": "', '"instruction": "\\ud800', 1))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "\\ud800" in t)
    with pytest.raises(LoadError) as info:
        list(derive_scenarios(path))
    (problem,) = info.value.problems
    assert (problem.line, problem.message) == (line, "invalid JSON: `\\ud800` is half of a UTF-16 surrogate pair, not a character")


def test_an_escaped_surrogate_pair_and_an_escaped_backslash_are_fine(tmp_path):
    path = _runs_with_ids(tmp_path, 1)
    path.write_text(path.read_text().replace('"instruction": "', '"instruction": "\\ud83d\\udcb3 \\\\ud800 ', 1))
    ((_, text),) = derive_scenarios(path)
    (tmp_path / "t.yml").write_text(text)
    assert load_scenario(tmp_path / "t.yml", environ={}).simulation_context.startswith("\U0001f4b3 \\ud800 ")
