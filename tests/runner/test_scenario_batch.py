"""`ScenarioBatch`'s runs one at a time, as the pytest plugin runs them: a planned run by its scenario and number,
run and judged on the caller's loop, with nothing written."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.runner.scenarios import RunOptions, ScenarioBatch
from tests.conftest import EXAMPLE


@pytest.fixture
def batch(tmp_path) -> ScenarioBatch:
    project = tmp_path / "card_replace"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".dialogcheck", "results"))
    return ScenarioBatch([project / "eval" / "scenarios" / "run_stolen_card.yml"], RunOptions(runs=2, no_judge=True))


def test_a_planned_run_runs_on_the_caller_s_loop_and_writes_nothing(batch):
    spec = batch.planned_run("run_stolen_card", 2)
    assert (spec.scenario.slug, spec.number, spec.repeat) == ("run_stolen_card", 2, 2)

    async def go():
        await batch.agent_reachable()
        try:
            return await batch.run_one(spec, batch.serve_environments([spec]))
        finally:
            await batch.aclose()

    run = asyncio.run(go())
    assert (run.slug, run.number, run.verdict) == ("run_stolen_card", 2, Outcome.FAIL)
    assert not (batch.project.root / "eval" / "results").exists()


def test_a_scenario_the_batch_lacks_is_a_key_error(batch):
    with pytest.raises(KeyError):
        batch.planned_run("run_cancel", 1)


def test_the_batch_keeps_its_options(batch):
    assert batch.options == RunOptions(runs=2, no_judge=True)
    assert (batch.settings.no_judge, batch.judge, len(batch.plan.run_keys())) == (True, None, 2)
