"""benchmarks/synth.py: the same seed gives the same bytes, and everything it writes is a valid conversation.

The generator is run as the benchmarks run it, as a subprocess writing a
real file; small sizes keep this to a few seconds.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from dialogcheck import Outcome, evaluate, evaluate_sop, iter_conversations, load_conversation, load_scenario, load_sop
from dialogcheck.checks import ASSERTIONS
from dialogcheck.checks.state import STATE_CHECKS
from tests.conftest import REPO

#: Every assertion key that judges a conversation's events: the benchmark's recorded conversations hold no
#: environment state, which the state checks judge.
EVENT_KEYS = set(ASSERTIONS) - {cls.key for cls in STATE_CHECKS}

SYNTH = REPO / "benchmarks" / "synth.py"
FIXTURES = REPO / "benchmarks" / "fixtures"


def generate(out: Path, *args: str, hash_seed: str = "0") -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, str(SYNTH), "--out", str(out), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def synth_module():
    spec = importlib.util.spec_from_file_location("synth", SYNTH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("synth", module)  # its dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("synth") / "convs.jsonl"
    generate(path, "--conversations", "300", "--seed", "7")
    return path


def test_same_seed_same_bytes_in_another_process(batch: Path, tmp_path: Path):
    again = tmp_path / "again.jsonl"
    generate(again, "--conversations", "300", "--seed", "7", hash_seed="12345")
    assert again.read_bytes() == batch.read_bytes()


def test_another_seed_other_conversations(batch: Path, tmp_path: Path):
    other = tmp_path / "other.jsonl"
    generate(other, "--conversations", "300", "--seed", "8")
    assert other.read_bytes() != batch.read_bytes()
    assert len(other.read_bytes().splitlines()) == 300


def test_every_conversation_loads(batch: Path):
    lines = batch.read_bytes().splitlines()
    loaded = list(iter_conversations([batch]))
    assert len(loaded) == len(lines) == 300
    for line, conversation in zip(lines, loaded):
        events = orjson.loads(line)["events"]
        assert len(load_conversation(events)) == len(conversation) == len(events)


def test_shaped_like_tau_bench_with_the_mantle_layer(batch: Path, synth_module):
    figures = synth_module.describe(orjson.loads(line)["events"] for line in batch.read_bytes().splitlines())
    observed = synth_module.load_fit()["observed"]
    # The tool log is resampled from tau-bench's runs: the same most common tool and a close call count.
    assert next(iter(figures["tool_mix"])) == next(iter(observed["tool_mix"])) == "get_reservation_details"
    assert abs(figures["tool_calls_per_conversation"] - observed["tool_calls_per_conversation"]) < 1.5
    assert 40 <= figures["events_per_conversation"] <= 75
    kinds = {e["event"] for line in batch.read_bytes().splitlines() for e in orjson.loads(line)["events"]}
    assert kinds >= {"user", "bot", "tool_executed", "memory_set", "memory_cleared", "skill_activated",
                     "skill_completed", "skill_cancelled", "skill_interrupted", "skill_resumed",
                     "ordered_block_entered", "ordered_block_completed", "ordered_block_cancelled",
                     "ordered_block_interrupted", "ordered_block_resumed", "action", "session_started"}


def test_results_are_json_strings_and_arguments_nested(batch: Path):
    runs = [e for line in batch.read_bytes().splitlines() for e in orjson.loads(line)["events"]
            if e["event"] == "tool_executed" and e["tool_name"] == "get_reservation_details" and not e["is_error"]]
    assert runs
    assert all(isinstance(orjson.loads(run["result"])["flights"], list) for run in runs)
    changes = [e for line in batch.read_bytes().splitlines() for e in orjson.loads(line)["events"]
               if e["event"] == "tool_executed" and e["tool_name"] == "update_reservation_flights"]
    assert changes and all(isinstance(c["arguments"]["flights"][0], dict) for c in changes)


def test_single_long_conversation(tmp_path: Path):
    path = tmp_path / "long.jsonl"
    generate(path, "--single-events", "3000", "--seed", "3")
    assert len(path.read_bytes().splitlines()) == 3000
    assert len(load_conversation(path)) == 3000


def test_short_conversations_are_small(tmp_path: Path, synth_module):
    path = tmp_path / "short.jsonl"
    generate(path, "--conversations", "200", "--seed", "3", "--short")
    figures = synth_module.describe(orjson.loads(line)["events"] for line in path.read_bytes().splitlines())
    assert figures["events_per_conversation"] < 25
    assert len(list(iter_conversations([path]))) == 200


def test_benchmark_fixtures_are_valid_and_split_the_batch(batch: Path):
    done = subprocess.run([sys.executable, "-c", "from dialogcheck._cli.main import main; main()", "validate",
                           str(FIXTURES / "scale_scenario.yml"), str(FIXTURES / "scale_sop.yml")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 files, 2 valid, 0 with problems" in done.stdout
    scenario = load_scenario(FIXTURES / "scale_scenario.yml")
    sop = load_sop(FIXTURES / "scale_sop.yml")
    assert len(scenario.goals.assertions) == 20
    assert {c.key for c in scenario.goals.assertions} == EVENT_KEYS
    assert sorted(step.type for step in sop.steps.steps) == sorted(
        ["tool_called", "tool_sequence", "tool_input_contains", "tool_output_contains", "no_tool_called",
         "confirmation_requested", "llm_judge"])
    conversations = list(iter_conversations([batch]))
    scenario_verdicts = {evaluate(scenario, c).verdict for c in conversations}
    sop_verdicts = {evaluate_sop(sop, c, no_judge=True).verdict for c in conversations}
    assert scenario_verdicts == sop_verdicts == {Outcome.PASS, Outcome.FAIL}


def test_the_check_benchmark_runs_the_scenario_and_the_sop_as_one_scenario(batch: Path, tmp_path: Path):
    """`scale.py check` times one run of a scenario holding the 20 assertions and the SOP's 7 steps as `goals.sop`:
    it must judge each check as the scenario and the SOP do apart (a list of steps has no `threshold`, so only the
    SOP's overall outcome may differ; the work is the same)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("scale", REPO / "benchmarks" / "scale.py")
        scale = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(scale)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    both = load_scenario(scale.scenario_with_sop(tmp_path))
    scenario, sop = load_scenario(FIXTURES / "scale_scenario.yml"), load_sop(FIXTURES / "scale_sop.yml")
    assert both.goals.assertions == scenario.goals.assertions and both.goals.sop.steps == sop.steps.steps
    for conversation in list(iter_conversations([batch]))[:100]:
        alone, with_sop = evaluate(scenario, conversation), evaluate(both, conversation, no_judge=True)
        assert with_sop.assertions == alone.assertions
        assert with_sop.sop.results == evaluate_sop(sop, conversation, no_judge=True).sop.results


# --- profiles: failure-heavy and mostly-passing data for `scale.py check` and `outcomes` -----------------------

FAMILIES = {"user", "bot", "tool_executed", "memory_set", "memory_cleared", "skill_activated", "skill_completed",
            "skill_cancelled", "skill_interrupted", "skill_resumed", "ordered_block_entered", "ordered_block_completed",
            "ordered_block_cancelled", "ordered_block_interrupted", "ordered_block_resumed"}


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("profiles")
    paths = {}
    for profile in ("failing", "passing"):
        paths[profile] = folder / f"{profile}.jsonl"
        generate(paths[profile], "--conversations", "300", "--seed", "7", "--profile", profile)
    return paths


def failed_checks(path: Path) -> list[int]:
    """How many checks of the fixtures' scenario and SOP each conversation fails."""
    scenario, sop = load_scenario(FIXTURES / "scale_scenario.yml"), load_sop(FIXTURES / "scale_sop.yml")
    counts = []
    for conversation in iter_conversations([path]):
        results = [*evaluate(scenario, conversation).assertions, *(s.result for s in evaluate_sop(sop, conversation, no_judge=True).sop.results)]
        counts.append(sum(r.outcome is Outcome.FAIL for r in results))
    return counts


def test_the_failing_profile_has_about_35_events_of_every_family_and_most_conversations_fail_several_checks(profiles, synth_module):
    lines = profiles["failing"].read_bytes().splitlines()
    figures = synth_module.describe(orjson.loads(line)["events"] for line in lines)
    assert 30 <= figures["events_per_conversation"] <= 40
    assert {e["event"] for line in lines for e in orjson.loads(line)["events"]} >= FAMILIES
    failed = failed_checks(profiles["failing"])
    assert sum(n >= 3 for n in failed) >= 0.8 * len(failed)
    # The agent breaks the policy in every way the profile says: a misnamed key (a "did you mean" hint), keys
    # named after a record (sets of keys that never repeat), a forbidden reply, a stray booking.
    keys = [e["key"] for line in lines for e in orjson.loads(line)["events"] if e["event"] == "memory_set"]
    assert {"project.userId", "project.user", "user_id", "project.customer_id"} & set(keys)
    assert sum(key.startswith("reservation.") for key in keys) > 100
    texts = [e["text"] for line in lines for e in orjson.loads(line)["events"] if e["event"] == "bot"]
    assert any(text.startswith("As an AI language model") for text in texts)


def test_the_passing_profile_mostly_passes_every_check(profiles):
    failed = failed_checks(profiles["passing"])
    assert sum(n == 0 for n in failed) >= 0.8 * len(failed)


def test_a_profile_is_the_same_bytes_for_the_same_seed(profiles, tmp_path: Path):
    again = tmp_path / "again.jsonl"
    generate(again, "--conversations", "300", "--seed", "7", "--profile", "failing", hash_seed="99")
    assert again.read_bytes() == profiles["failing"].read_bytes()


def test_the_default_profile_draws_nothing_for_the_rates_only_other_profiles_set(synth_module):
    """The default's data stays the bytes its published figures were measured on: a rate of 0 draws no number."""
    assert synth_module.PROFILES["tau"] == synth_module.Profile()
    generator = synth_module.Generator(3)
    state = generator.rng.getstate()
    assert not generator._chance(0.0)
    assert generator.rng.getstate() == state
    assert generator._chance(1.0) and generator.rng.getstate() != state
