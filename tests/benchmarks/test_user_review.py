"""benchmarks/user_review.py on the real runs copied into tests/importers/data: no false flag, every planted fault caught.

The full measurement (260 runs of tau-bench and tau2-bench) needs `shared/data`; these seven runs are the same
kind of data, so the planting and the review are held to the same bar wherever the tests run.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from dialogcheck.simulate.review import RULES, Prompts, review_user
from tests.conftest import REPO

SAMPLES = REPO / "tests" / "importers" / "data"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_user_review", REPO / "benchmarks" / "user_review.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it is executed
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cases(bench):
    return [*bench.tau_bench_cases(SAMPLES / "tau_bench_airline_sample.json"), *bench.tau2_cases(SAMPLES / "tau2_airline_sample.json")]


def test_the_samples_are_read_with_their_briefs(cases):
    assert [c.dataset for c in cases] == ["tau-bench"] * 4 + ["tau2 airline"] * 3
    assert all(c.brief.simulation_context and any(line.role == "user" for line in c.transcript) for c in cases)
    tau2 = cases[-1].brief
    assert len(tau2.extra) >= 1  # known_info and the task instructions beside the reason for the call


def test_no_real_run_is_flagged(cases):
    for case in cases:
        assert review_user(case.transcript, case.brief).reasons == (), case.conversation_id


def test_every_planted_fault_is_caught_by_its_rule(bench, cases):
    prompts = Prompts.bundled()
    found = bench.planted_faults(cases, prompts)
    assert set(found) == {rule.name for rule in RULES}
    for kind, (planted, caught, missed) in found.items():
        assert planted >= 6 and caught == planted and missed == [], kind


def test_a_plant_changes_the_run_and_the_unchanged_run_is_not_caught(bench, cases):
    prompts = Prompts.bundled()
    case = cases[0]
    for kind, plant in bench.PLANTS.items():
        planted = plant(case, 0, prompts)
        assert planted.transcript != case.transcript, kind
        unplanted = bench.Planted(case.transcript, planted.turns)
        assert not bench.caught(case, unplanted, kind, prompts), kind
        assert bench.caught(case, planted, kind, prompts), kind
