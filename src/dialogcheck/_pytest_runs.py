"""What the pytest plugin does with the library: run one item's run, write the results folder, add JUnit properties.

Each pytest process (the only one, or each pytest-xdist worker) plans one
`ScenarioBatch` per project from the scenario files it collected, and runs each
item's run through the batch runner on one event loop of its own, so a
connector's connections live as long as the session. The process that sees
every report (the only one, or xdist's controller) writes the results folder
from the runs the reports carry, with the same files and renderers as `run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest

from ._redact import mask
from .connectors.base import AgentError, AgentSetupError
from .errors import LoadError, os_reason
from .llm.base import LLMError
from .report.batch_files import BATCH_FILES
from .report.check_text import render_load_error
from .results.codec import decode_run
from .results.files import ResultsFolder
from .results.load import with_events
from .results.lock import BatchLock
from .results.model import RunResult
from .results.plan import new_plan
from .results.writer import BatchWriter
from .runner.project import load_project
from .runner.scenarios import RunOptions, ScenarioBatch


class Unrunnable(Exception):
    """Why no run of a project can start (bad files, an agent that cannot be set up or is down): each item's error."""


def batch_options(config: pytest.Config) -> RunOptions:
    """The options of `run` the plugin's flags set: the one place a `run` option is mapped."""
    return RunOptions(
        runs=config.getoption("dialogcheck_runs"),
        no_judge=config.getoption("dialogcheck_no_judge"),
        parallel=1,  # items run one at a time in a process; pytest-xdist runs processes side by side
        replay=bool(config.getoption("dialogcheck_replay")),
    )


class ProcessRuns:
    """The runs of one pytest process: a planned batch per project, one event loop for all of them."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.loop = asyncio.new_event_loop()
        self.batches: dict[Path, ScenarioBatch | Unrunnable] = {}
        self.servers: dict[Path, Any] = {}  # each project's environment server, started when a run first needs one

    def run(self, item: Any) -> RunResult:
        """The item's run, judged; `pytest.fail` (the item's error) when its project cannot run at all."""
        batch = self._batch(item)
        if isinstance(batch, Unrunnable):
            pytest.fail(mask(str(batch)), pytrace=False)
        spec = batch.planned_run(item.slug, item.number)  # its persona trait and seed, as `run` plans them
        root = item.parent.root
        if self.servers.get(root) is None:
            self.servers[root] = batch.serve_environments([spec])
        return self.loop.run_until_complete(batch.run_one(spec, self.servers[root]))

    def _batch(self, item: Any) -> ScenarioBatch | Unrunnable:
        root = item.parent.root
        if root not in self.batches:
            files = sorted({str(other.path) for other in item.session.items if getattr(getattr(other, "parent", None), "root", None) == root})
            self.batches[root] = self._plan(files)
        return self.batches[root]

    def _plan(self, files: Sequence[str]) -> ScenarioBatch | Unrunnable:
        """The project's batch, its agent found reachable; else why not, in the words of `dialogcheck run`."""
        try:
            batch = ScenarioBatch(files, batch_options(self.config), agent=self.config.getoption("dialogcheck_agent") or None)
        except LoadError as err:
            return Unrunnable(render_load_error(err).plain.rstrip("\n"))
        except (AgentSetupError, LLMError) as err:
            return Unrunnable(str(err))
        except OSError as err:
            return Unrunnable(f"cannot read: {os_reason(err)}")
        try:
            self.loop.run_until_complete(batch.agent_reachable())
        except AgentError as err:
            return Unrunnable(f"the agent is not reachable, so no run was started: {err}")
        return batch

    def close(self) -> None:
        for server in self.servers.values():
            if server is not None:
                server.stop()
        for batch in self.batches.values():
            if isinstance(batch, ScenarioBatch):
                self.loop.run_until_complete(batch.aclose())
        self.loop.close()


def claim_results(folder: str) -> BatchLock:
    """The results folder, locked for this session (new or empty); `pytest.UsageError` when it cannot be."""
    try:
        return ResultsFolder(folder).claim()
    except LoadError as err:
        raise pytest.UsageError(f"--dialogcheck-results: {render_load_error(err).plain.rstrip()}") from None


def carried_runs(carried: Sequence[str]) -> list[RunResult]:
    """The runs reports carried, as typed results with their recorded events."""
    runs = []
    for text in carried:
        document = orjson.loads(text)
        run = decode_run(document["run"], "a pytest report")
        runs.append(with_events(run, document["events"]))
    return runs


def write_results(folder: str, carried: Sequence[str], runs_each: int) -> None:
    """The results folder of the finished runs, as `run` writes it: plan, run files, summary, JUnit and HTML.

    The plan holds each scenario that ran with `runs_each` runs, so the runs left out (deselected by `-k`)
    can still be finished with `dialogcheck run --resume`.
    """
    runs = carried_runs(carried)
    project = load_project(sorted({run.scenario.path for run in runs}))
    config_path = str(Path(project.config.path).resolve()) if project.config.path else None
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    plan = new_plan(started, str(project.root), config_path, project.planned(runs_each), seed=project.config.simulation.seed,
                    environments=project.environment_digests())
    results = ResultsFolder(folder)
    results.write_plan(plan)
    writer = BatchWriter(results, plan, [], BATCH_FILES.run_text, BATCH_FILES.summary_text)
    for run in runs:
        writer.add(run)
    writer.close()
    batch = writer.batch(False)
    writer.write_summary(batch)
    BATCH_FILES.write_reports(batch, results.root)


def junit_properties(config: pytest.Config, nodeid: str, carried: str) -> None:
    """The run's scenario, run number, verdict and each check's outcome as properties of pytest's JUnit file.

    At the level of the test suite, named after the test: the Jenkins schema has no properties inside a test case.
    """
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    run = decode_run(orjson.loads(carried)["run"], "a pytest report")
    name = nodeid.rsplit("::", 1)[-1]
    scenario = run.scenario
    found = [("scenario", scenario.slug), ("scenario.name", scenario.name), ("run", str(run.number)), ("verdict", run.verdict.value)]
    if scenario.type:
        found.append(("scenario.type", scenario.type))
    if scenario.tags:
        found.append(("scenario.tags", ",".join(scenario.tags)))
    found += [(f"check {'' if line.index is None else f'{line.index} '}{line.short_title}", line.outcome.value) for line in run.checks()]
    for key, value in found:
        xml.add_global_property(f"{name} {key}", value)
