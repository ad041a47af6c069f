"""tau2 runs named by task and trial, and scenarios derived from tau2 tasks: they pair, and pass and fail where the recorded reward does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck import LoadError, Outcome, evaluate, load_scenario
from dialogcheck._cli.main import cli
from dialogcheck.importers import import_file
from dialogcheck.importers.tau2_scenarios import derive_scenarios

SAMPLE = Path(__file__).parent / "data" / "tau2_airline_sample.json"


def _results(tasks, simulations=()) -> dict:
    return {"info": {}, "tasks": tasks, "simulations": list(simulations)}


def _task(task_id="7", actions=(), said=(), instructions=None):
    return {"id": task_id, "user_scenario": {"instructions": instructions or {"domain": "airline", "reason_for_call": "Cancel my trip.", "known_info": "I am u1."}},
            "evaluation_criteria": {"actions": list(actions), "communicate_info": list(said), "nl_assertions": ["polite"]}}


def _derived(tmp_path: Path, document: dict) -> dict[str, str]:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document, indent=2))
    return dict(derive_scenarios(path))


def test_real_runs_are_named_by_task_and_trial_and_keep_their_simulation_id():
    runs = list(import_file(SAMPLE, "tau2"))
    simulations = json.loads(SAMPLE.read_text())["simulations"]
    assert [r.conversation_id for r in runs] == [f"task-{s['task_id']}-trial-{s['trial']}" for s in simulations] == [
        "task-13-trial-0", "task-16-trial-0", "task-25-trial-0"]
    assert [r.conversation.events[0].metadata["simulation_id"] for r in runs] == [s["id"] for s in simulations]


def test_verdicts_of_the_derived_scenarios_follow_the_recorded_rewards(tmp_path):
    scenarios = {}
    for slug, text in derive_scenarios(SAMPLE):
        (tmp_path / f"{slug}.yml").write_text(text)
        scenarios[slug] = load_scenario(tmp_path / f"{slug}.yml")
    assert sorted(scenarios) == ["tau2-task-13", "tau2-task-16", "tau2-task-25"]
    assert scenarios["tau2-task-25"].name == "tau2 airline task 25" and scenarios["tau2-task-25"].tags == ("tau2", "airline", "task-25")
    assert scenarios["tau2-task-25"].simulation_context.startswith("Reason for call: ")
    rewards = [s["reward_info"]["reward"] for s in json.loads(SAMPLE.read_text())["simulations"]]
    verdicts = [evaluate(scenarios[f"tau2-{r.conversation_id.split('-trial-')[0]}"], r.conversation, no_judge=True).verdict
                for r in import_file(SAMPLE, "tau2")]
    assert verdicts == [Outcome.PASS if reward == 1.0 else Outcome.FAIL for reward in rewards] == [Outcome.PASS, Outcome.PASS, Outcome.FAIL]


def test_import_derives_tau2_scenarios_and_check_pairs_each_run_with_its_task(tmp_path):
    runner = CliRunner()
    done = runner.invoke(cli, ["import", "--from", "tau2", str(SAMPLE), "-o", str(tmp_path / "runs.jsonl"), "--derive-scenarios", str(tmp_path / "scenarios")])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in (tmp_path / "scenarios").iterdir()) == ["tau2-task-13.yml", "tau2-task-16.yml", "tau2-task-25.yml"]
    checked = runner.invoke(cli, ["check", "--no-judge", "--scenario", str(tmp_path / "scenarios"), "--pair", r"task-(\d+)",
                                  "--format", "json", str(tmp_path / "runs.jsonl")])
    assert checked.exit_code == 1, checked.output
    found = {c["conversation_id"]: (c["scenario"], c["verdict"]) for c in json.loads(checked.stdout)["conversations"]}
    assert found == {"task-13-trial-0": ("tau2-task-13", "pass"), "task-16-trial-0": ("tau2-task-16", "pass"), "task-25-trial-0": ("tau2-task-25", "fail")}


def test_goals_are_the_expected_writes_with_the_compared_arguments_and_what_must_be_communicated(tmp_path):
    actions = [{"name": "get_user_details", "arguments": {"user_id": "u1"}},
               {"name": "cancel_reservation", "arguments": {"reservation_id": "A", "reason": "any words"}, "compare_args": ["reservation_id"]}]
    (text,) = _derived(tmp_path, _results([_task(actions=actions, said=["1,000"])])).values()
    assert '- tool_executed: {"tool_name": "cancel_reservation", "source": "local", "arguments": {"reservation_id": "A"}, "is_error": false}' in text
    assert '"tool_name": "get_user_details", "source": "local", "arguments"' not in text  # a read is never a goal
    assert '- tool_executed: {"tool_name": "book_reservation", "source": "local", "is_error": false, "times": 0}' in text
    assert '- bot_uttered: {"text_matches": "(?i)1,*,,*0,*0,*0"}' in text  # commas in the reply skipped, as tau2 removes them
    assert "polite" not in text  # tau2's nl_assertions are an LLM's to judge, not derived
    assert 'simulation_context: "Reason for call: Cancel my trip.\\n\\nKnown info: I am u1."' in text


def test_a_domain_no_list_names_expects_every_action_and_a_plain_brief_is_the_context(tmp_path):
    task = _task(actions=[{"name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}], instructions="You have no signal.")
    (text,) = _derived(tmp_path, _results([task])).values()
    assert '"tool_name": "toggle_airplane_mode", "source": "local", "arguments": {}, "is_error": false}' in text
    assert 'simulation_context: "You have no signal."' in text


@pytest.mark.parametrize("document, message", [
    ({"info": {}, "simulations": []}, "1:1: the results file holds no `tasks`: deriving scenarios needs each task's expected actions"),
    ([{"id": "s", "task_id": "1", "trial": 0, "messages": []}], "2:3: this is a simulation run, not a task: deriving scenarios needs a tau2 results file"),
    (_results([{**_task(), "id": {"n": 1}}]), "5:13: `id` must be an integer or a string, got an object"),
    (_results([{**_task(), "evaluation_criteria": {"actions": [{"name": "x", "arguments": []}]}}]), "`action arguments` must be an object, got a list"),
])
def test_a_file_without_its_tasks_or_with_a_bad_task_is_bad_input_at_its_place(tmp_path, document, message):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document, indent=2))
    with pytest.raises(LoadError) as err:
        list(derive_scenarios(path))
    assert message in str(err.value) and str(err.value).startswith(f"{path}:")
