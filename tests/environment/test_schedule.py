"""The seeded schedule: the same seed gives the same faults byte for byte, another seed another schedule."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson

from dialogcheck.environment import load_environment, run_seed

from .conftest import with_faults, write_environment

RATED = """\
- {tool: get_order, kind: error, message: flaky, rate: 0.5}
- {tool: cancel_order, kind: timeout, rate: 0.3}
"""


def events_of(environment, seed: int, calls: int = 64) -> bytes:
    run = environment.start(seed=seed, sleep=lambda seconds: None)
    for n in range(calls):
        run.call("get_order", {"order_id": "O1"})
        if n % 4 == 0:
            run.call("cancel_order", {"order_id": "O2", "reason": f"try {n}"})
    return orjson.dumps(run.events)


def faulted(events: bytes) -> list[bool]:
    return ["fault" in event["metadata"] for event in orjson.loads(events)]


def test_the_run_seed_is_a_stable_hash_of_the_batch_seed_and_the_runs_place():
    assert run_seed(42, "cancel-order", 1, "impatient") == 14608126332390391269
    assert run_seed(None, "x", 1) == run_seed(0, "x", 1)
    seeds = {run_seed(42, "cancel-order", repeat, persona) for repeat in (1, 2, 3) for persona in (None, "impatient")}
    assert len(seeds) == 6 and run_seed(43, "cancel-order", 1, "impatient") not in seeds


def test_the_run_seed_is_the_same_in_a_process_with_another_hash_salt():
    code = "from dialogcheck.environment import run_seed; print(run_seed(42, 'cancel-order', 1, 'impatient'))"
    for salt in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": salt}, capture_output=True, text=True, timeout=300, check=True)
        assert out.stdout.strip() == "14608126332390391269"


def test_the_same_seed_gives_the_same_faults_byte_for_byte(tmp_path):
    environment = load_environment(write_environment(tmp_path, with_faults(RATED)))
    first, second = events_of(environment, 11), events_of(environment, 11)
    assert first == second
    hits = faulted(first)
    assert 0 < sum(hits) < len(hits)  # a rate of a half or a third hits some calls, not all


def test_another_seed_gives_another_schedule(tmp_path):
    environment = load_environment(write_environment(tmp_path, with_faults(RATED)))
    schedules = {tuple(faulted(events_of(environment, seed))) for seed in (11, 12, run_seed(1, "s", 1), run_seed(1, "s", 2))}
    assert len(schedules) == 4


def test_a_faults_draws_never_depend_on_calls_of_other_tools(tmp_path):
    environment = load_environment(write_environment(tmp_path, with_faults(RATED)))
    alone, mixed = environment.start(seed=5), environment.start(seed=5)
    for n in range(32):
        alone.call("get_order", {"order_id": "O1"})
        mixed.call("cancel_order", {"order_id": "O2", "reason": str(n)})
        mixed.call("get_order", {"order_id": "O1"})
    mine = [faulted(orjson.dumps([e for e in run.events if e["tool_name"] == "get_order"])) for run in (alone, mixed)]
    assert mine[0] == mine[1]


def test_a_rate_of_0_never_fires_and_of_1_always(tmp_path):
    environment = load_environment(write_environment(tmp_path, with_faults("- {tool: get_order, kind: error, rate: 0}\n- {tool: cancel_order, kind: error, rate: 1}\n")))
    events = orjson.loads(events_of(environment, 3))
    assert all(("fault" in e["metadata"]) == (e["tool_name"] == "cancel_order") for e in events)
