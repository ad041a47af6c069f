"""A run's persona and simulator in the results: written only when there are some, read back as written, and a
plan's matrix (traits and seed) kept and checked."""

from __future__ import annotations

import json

import orjson
import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.errors import LoadError
from dialogcheck.llm.base import Usage
from dialogcheck.results.codec import decode_run, encode_run, summary_document
from dialogcheck.results.model import BatchResult, RunResult, ScenarioInfo, SimulatorInfo
from dialogcheck.results.plan import PlannedScenario, new_plan, read_plan
from dialogcheck.results.stats import runs_by_persona

INFO = ScenarioInfo("card", "Card", "card.yml")
SIMULATOR = SimulatorInfo("sim", 0.5, 9, "ab" * 32, Usage(120, 30, 0.25))


def run(number: int, persona: str | None = None, simulator: SimulatorInfo | None = None, verdict: Outcome = Outcome.PASS) -> RunResult:
    return RunResult(INFO, number, verdict, persona=persona, simulator=simulator)


def test_a_run_without_persona_or_simulator_writes_neither():
    document = json.loads(encode_run(run(1)))
    assert "persona" not in document and "simulator" not in document
    assert list(document)[:3] == ["scenario", "run", "verdict"]


def test_persona_and_simulator_are_written_and_read_back():
    written = run(2, "terse", SIMULATOR)
    document = orjson.loads(encode_run(written))
    assert list(document)[:3] == ["scenario", "run", "persona"] and document["persona"] == "terse"
    assert document["simulator"] == {"model": "sim", "temperature": 0.5, "seed": 9, "prompt_sha256": "ab" * 32, "usage": {"input_tokens": 120, "output_tokens": 30, "cost": 0.25}}
    read = decode_run(document, "run_2.json")
    assert (read.persona, read.simulator) == ("terse", SIMULATOR)


def test_a_summary_without_personas_or_simulator_has_no_such_sections():
    document = summary_document(BatchResult((run(1), run(2))))
    assert "personas" not in document and "usage" not in document
    assert all("persona" not in row for row in document["failed_runs"] + document["errored_runs"])


def test_runs_are_grouped_by_trait_in_the_order_the_traits_come():
    runs = [run(1, "terse"), run(2, "verbose"), run(3), run(4, "terse")]
    assert {name: [r.number for r in group] for name, group in runs_by_persona(runs).items()} == {"terse": [1, 4], "verbose": [2]}
    assert list(runs_by_persona(runs)) == ["terse", "verbose"]


def test_the_summary_counts_each_trait_and_sums_the_simulator_apart_from_the_judge():
    runs = (run(1, "terse", SIMULATOR), run(2, "verbose", SIMULATOR, Outcome.FAIL), run(3, "terse", SIMULATOR, Outcome.ERROR))
    document = summary_document(BatchResult(runs))
    assert [(p["persona"], p["runs"], p["passed"], p["failed"], p["errored"], p["pass_rate"]) for p in document["personas"]] == [
        ("terse", 2, 1, 0, 1, 1.0),
        ("verbose", 1, 0, 1, 0, 0.0),
    ]
    assert document["personas"][0]["scenarios"][0]["slug"] == "card"
    assert document["usage"] == {"simulator": {"input_tokens": 360, "output_tokens": 90, "cost": 0.75}, "judge": {"input_tokens": 0, "output_tokens": 0, "cost": None}}
    assert [(r["run"], r["persona"]) for r in document["failed_runs"]] == [(2, "verbose")]
    assert [(r["run"], r["persona"]) for r in document["errored_runs"]] == [(3, "terse")]


def test_a_plan_numbers_matrix_runs_repeat_by_repeat_and_writes_traits_and_seed_only_when_given(tmp_path):
    plain = PlannedScenario(slug="a", path="/a", runs=2, sha256="0" * 64)
    matrix = PlannedScenario(slug="b", path="/b", runs=2, sha256="1" * 64, personas=["terse", "verbose", "confused"], seed=2147483647)
    plan = new_plan("now", "/p", None, [plain, matrix])
    assert plan.total_runs == 8
    assert plan.run_keys() == [("a", 1), ("a", 2), *(("b", n) for n in range(1, 7))]
    assert [matrix.persona_of(n) for n in range(1, 7)] == ["terse", "verbose", "confused"] * 2
    assert [matrix.seed_of(n) for n in range(1, 7)] == [2147483647] * 3 + [0] * 3  # wraps within the seed range
    assert (plain.persona_of(1), plain.seed_of(2)) == (None, None)
    written = plan.to_dict()["scenarios"]
    assert written[0] == {"slug": "a", "path": "/a", "runs": 2, "sha256": "0" * 64}
    assert written[1]["personas"] == ["terse", "verbose", "confused"] and written[1]["seed"] == 2147483647
    path = tmp_path / "plan.json"
    path.write_bytes(plan.to_json())
    assert read_plan(path) == plan


def test_a_plan_naming_an_unknown_trait_is_refused_at_its_place(tmp_path):
    plan = new_plan("now", "/p", None, [PlannedScenario(slug="b", path="/b", runs=1, sha256="1" * 64, personas=["terse", "sneaky"])])
    path = tmp_path / "plan.json"
    path.write_bytes(plan.to_json())
    with pytest.raises(LoadError) as info:
        read_plan(path)
    assert str(info.value).startswith(f"{path}:13:9: invalid plan: unknown persona trait 'sneaky'")
