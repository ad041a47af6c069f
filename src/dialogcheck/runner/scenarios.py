"""Running scenarios against an agent: the batch behind `dialogcheck run` and `run_scenarios`.

`ScenarioBatch` plans a batch (or the rest of one, to resume it), checks the
agent is up, runs every scenario the planned number of times with a bounded
number in flight, writes the results folder as runs finish (each run's files,
the summary, then JUnit and HTML, rendered by the `FolderText` its caller
hands it: the runner never renders), and returns the typed `BatchResult`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from .._paths import project_folder
from ..config import AgentSettings, ProjectConfig, in_flight_for
from ..connectors.base import AgentConnector, AgentError
from ..errors import COMMAND_LINE, LoadError, Problem, Spelling, os_reason
from ..results.files import ResultsFolder, new_folder
from ..results.load import finished_runs
from ..results.lock import BatchLock
from ..results.model import BatchResult, RunResult
from ..results.plan import MAX_BATCH_RUNS, Plan, PlannedScenario, new_plan, read_plan
from ..results.writer import BatchWriter
from ..scenario.model import Scenario
from .batch import BatchSettings, RunSpec, run_batch
from .project import Project, load_planned, load_project
from .review import run_reviewer
from .world import Server


class FolderText(Protocol):
    """What writes a results folder's rendered files (`report.batch_files.BatchFiles`), handed to `ScenarioBatch.run`
    by its caller: the runner moves results and never renders them."""

    def run_text(self, run: RunResult) -> str: ...

    def summary_text(self, batch: BatchResult) -> str: ...

    def write_reports(self, batch: BatchResult, folder: Path) -> list[str]: ...


def make_users(
    project: Project, *, use_cache: bool = True, cache_dir: Path | None = None, mode: str = "auto", parallel: int = 1,
    matrix: Mapping[str, Sequence[str]] | None = None, replay: bool = False, spelling: Spelling = COMMAND_LINE,
):
    """One simulated user per run: the script when there is one (unless `mode` is llm), else the configured LLM.

    `matrix` is the persona traits each scenario (by slug) runs under, when they come from elsewhere than its
    own `personas` (the plan of `--persona`)."""
    from ..simulate.user import LLMUser, ScriptedUser

    unscripted = [s for s in project.scenarios if s.script is None or mode == "llm"]
    settings = project.config.simulation.llm
    if unscripted and settings is None:
        raise LoadError(
            Problem(
                "this scenario has no `script`, and no simulation model is configured (simulation.llm in eval/conftest.yml)"
                if s.script is None
                else f"{spelling.option('simulate', 'llm')} needs a simulation model (simulation.llm in eval/conftest.yml)",
                s.path,
            )
            for s in unscripted
        )
    client = templates = None
    if unscripted:
        from ..llm.factory import make_client
        from ..llm.templates import Templates

        role = project.config.simulation
        limit = in_flight_for(role, parallel)
        client = make_client(settings, cache=project.config.cache, max_in_flight=limit, use_cache=use_cache, cache_dir=cache_dir, replay=replay)  # type: ignore[arg-type]  # unscripted runs without `simulation.llm` are refused above
        templates = Templates(role.prompts)

    if templates is not None:
        _refuse_unshown(templates, unscripted, matrix or {})

    def make_user(scenario):
        if scenario.script is not None and mode != "llm":
            return ScriptedUser(scenario.script)
        return LLMUser(client, settings, scenario, templates)  # type: ignore[arg-type]  # made above whenever a scenario is unscripted

    return make_user


def _refuse_unshown(templates, scenarios, matrix: Mapping[str, Sequence[str]]) -> None:
    """`LoadError` when the simulated user's template would leave out a user field or the persona trait a
    scenario gives: a project's own template that reads no `persona`, say. Never a run that ignored it."""
    from ..simulate.user import PROMPT

    read = templates.variables(PROMPT)
    problems = []
    for scenario in scenarios:
        given = [*scenario.user.given(), *(("trait",) if matrix.get(scenario.slug, scenario.personas) else ())]
        missing = [name for name in given if name not in read]
        if missing:
            names = ", ".join(f"`{{{{ {name} }}}}`" for name in missing)
            problems.append(Problem(f"the simulated user's prompt shows no {names}, which scenario `{scenario.slug}` gives (add it to the template)", templates.where(PROMPT)))
    if problems:
        raise LoadError(problems)


def _refuse_too_many(planned: Sequence[PlannedScenario], runs: int, spelling: Spelling) -> None:
    """A `LoadError` for a batch past `MAX_BATCH_RUNS`, before anything runs: a plan past it is refused when read back."""
    total = sum(item.count for item in planned)
    if total > MAX_BATCH_RUNS:
        traits = " under their persona traits" if any(item.personas for item in planned) else ""
        message = (
            f"these {len(planned):,} scenarios at {runs:,} runs each{traits} plan {total:,} runs, more than the {MAX_BATCH_RUNS:,}"
            f" a batch may run: give fewer {spelling.option('runs')}, or run the scenarios in several batches"
        )
        raise LoadError.one(message, spelling.option("runs"))


def agent_settings(config: ProjectConfig, agent: str | AgentSettings | None, spelling: Spelling = COMMAND_LINE) -> AgentSettings:
    """The agent `agent` names (`rasa:URL`, `http:URL` or a URL, `python:MODULE:FUNC`; keeping the config's
    `agent.timeout`), else the config's. Raises ValueError for a form it cannot read, LoadError for none at all."""
    from ..connectors.factory import parse_agent_flag

    configured = config.agent
    if isinstance(agent, str):
        settings = parse_agent_flag(agent)
        return replace(settings, timeout=configured.timeout) if configured is not None else settings  # the flag says only where
    if agent is not None:
        return agent
    if configured is None:
        raise LoadError.one(f"no agent to talk to: set `agent` in eval/conftest.yml or pass {spelling.option('agent')}", str(config.path or config.root))
    return configured


@dataclass(frozen=True)
class RunOptions:
    """How a batch runs, as `run`'s options (and `run_scenarios`' arguments) say: each described there."""

    runs: int = 1
    parallel: int = 4
    #: Seconds a whole run may take.
    time_limit: float = 300.0
    #: A new or empty results folder (default: eval/results/<timestamp>).
    results: str | Path | None = None
    #: The folder of a batch to finish, as its plan planned it.
    resume: str | Path | None = None
    config: str | Path | None = None
    no_judge: bool = False
    #: `auto` (a scenario's script when it has one) or `llm`.
    simulate: str = "auto"
    use_cache: bool = True
    cache_dir: str | Path | None = None
    retry_suspect: int = 1
    #: The persona traits every LLM-played scenario runs under (a matrix), instead of its own.
    personas: Sequence[str] = ()
    seed: int | None = None
    replay: bool = False
    #: Whether the environments' fault schedules are on.
    faults: bool = True
    #: Whose fault each run that did not pass was (`run --blame`: `evidence`, `llm` or `off`).
    blame: str = "evidence"


class ScenarioBatch:
    """A planned batch of runs, ready to go: its project, plan, agent, simulated users and judge.

    Building it loads everything and reports every problem (`LoadError`, bad input) before any run;
    `check_agent` finds an agent that is down; `run` claims the results folder and runs.
    """

    def __init__(
        self,
        paths: Sequence[str | Path] = (),
        options: RunOptions = RunOptions(),
        *,
        agent: str | AgentSettings | AgentConnector | None = None,
        spelling: Spelling = COMMAND_LINE,
    ):
        #: How the batch runs (a resumed batch runs its plan's scenarios, runs, seed and faults, not these).
        self.options = options
        #: How messages name the options: the command line's flags, or `run_scenarios`' arguments.
        self.spelling = spelling
        self.started = datetime.now(timezone.utc)
        cache = Path(options.cache_dir) if options.cache_dir else None
        if options.resume is not None:
            plan_file = ResultsFolder(options.resume).plan_path
            self.plan = read_plan(plan_file)
            self.project = load_planned(self.plan, str(plan_file))
        else:
            self.plan = self._new_plan(paths, options)
            if not options.results:
                self._results_parent()  # refused now, before anything runs, when a link takes it out of the project
        self._planned = {item.slug: item for item in self.plan.scenarios}
        matrix = {slug: item.personas for slug, item in self._planned.items()}
        o = options
        self.make_user = make_users(
            self.project, use_cache=o.use_cache, cache_dir=cache, mode=o.simulate, parallel=o.parallel, matrix=matrix, replay=o.replay, spelling=spelling
        )
        self.reviewer = run_reviewer(self.project.config, use_cache=o.use_cache, cache_dir=cache, parallel=o.parallel, replay=o.replay)
        self.agent: AgentConnector = agent if _is_connector(agent) else _connector(self.project, agent, spelling)  # type: ignore[assignment, arg-type]  # _is_connector
        evaluation = self.project.config.evaluation
        self.settings = BatchSettings(
            parallel=o.parallel, time_limit=o.time_limit, no_judge=o.no_judge, metrics=evaluation.metrics, retry_suspect=o.retry_suspect, faults=self.plan.faults,
            blame=o.blame,
        )
        self.judge = None
        if not o.no_judge:
            from ..judge.setup import judge_from_config

            self.judge = judge_from_config(
                self.project.config, use_cache=o.use_cache, cache_dir=cache, max_in_flight=in_flight_for(evaluation, o.parallel), replay=o.replay
            )
        if o.blame == "llm" and self.judge is None:
            blamed = self.spelling.option("blame", "llm")
            why = f"{self.spelling.option('no_judge')} keeps it from being asked" if o.no_judge else "the project's config has no evaluation.llm"
            raise LoadError.one(f"{blamed} asks the evaluation model for what the evidence cannot place, and {why}", blamed)

    def _new_plan(self, paths: Sequence[str | Path], o: RunOptions) -> Plan:
        """The project of `paths` loaded (`self.project`), and the plan of a new batch of it: `LoadError` for a
        persona matrix, seed or size of batch it cannot run."""
        self.project = load_project(paths, o.config)
        config_path = os.path.abspath(self.project.config.path) if self.project.config.path else None
        _refuse_bad_matrix(o.personas, o.seed, self.spelling)
        planned = self.project.planned(o.runs, o.personas, o.simulate, o.seed)
        if o.personas and not any(item.personas for item in planned):
            persona = self.spelling.option("persona")
            message = f"{persona} is played by an LLM user, and every scenario here follows its `script` (add {self.spelling.option('simulate', 'llm')})"
            raise LoadError.one(message, persona)
        _refuse_too_many(planned, o.runs, self.spelling)
        batch_seed = self.project.config.simulation.seed if o.seed is None else o.seed
        return new_plan(
            self.started.isoformat(timespec="seconds"), str(self.project.root), config_path, planned, o.personas, batch_seed, o.faults,
            self.project.environment_digests(),
        )

    def check_agent(self) -> None:
        """Raise `AgentError` when the agent cannot be reached at all (before any run or file of the batch)."""
        asyncio.run(self.agent_reachable())

    async def agent_reachable(self) -> None:
        """`check_agent` on the caller's event loop, where the agent's connections then live (the pytest plugin's)."""
        await self.agent.check_reachable()

    async def aclose(self) -> None:
        """Close the agent's connections, on the loop the runs ran on."""
        await self.agent.aclose()

    def planned_run(self, slug: str, number: int) -> RunSpec:
        """Run `number` of the scenario `slug` as the plan has it (`spec`): `KeyError` for a scenario the batch lacks."""
        scenario = next((s for s in self.project.scenarios if s.slug == slug), None)
        if scenario is None:
            raise KeyError(slug)
        return self.spec(scenario, number)

    async def run_one(self, spec: RunSpec, server: Server | None = None) -> RunResult:
        """One planned run (`planned_run`), simulated and judged as the batch runs each, its environment served by
        `server` (`serve_environments`); nothing is written. What the pytest plugin runs for each item."""
        runs = await run_batch([spec], self.agent, self.make_user, self.judge, self.settings, reviewer=self.reviewer, server=server)
        return runs[0]

    def claim(self) -> tuple[ResultsFolder, BatchLock]:
        """The batch's folder, locked: the one resumed, the new or empty `results`, or a new `eval/results/<stamp>`."""
        if self.options.resume is not None:
            folder = ResultsFolder(self.options.resume)
            return folder, folder.lock()
        stamp = self.started.strftime("%Y%m%d-%H%M%S")
        folder = ResultsFolder(self.options.results or new_folder(self._results_parent(), stamp))
        return folder, folder.claim(self.spelling)

    def _results_parent(self) -> Path:
        """`eval/results` of the project, where a batch's folder is made when none is named; `LoadError` when a link takes it out."""
        root = self.project.root
        return project_folder(root, root / "eval" / "results", "the results folder", f"{self.spelling.about('results', 'DIR')} names a folder elsewhere")

    def run(
        self, files: FolderText, on_finished: Callable[[RunResult], None] = lambda run: None, on_start: Callable[[asyncio.Task], None] | None = None
    ) -> BatchResult:
        """Claim the folder, run what the plan still holds, and write the results, their text, JUnit and HTML by
        `files`; the batch, interrupted or not.

        Ctrl-C (or a cancellation of the task `on_start` is given) ends the batch early: the finished
        runs are kept and the summary says it was interrupted, so `resume` can finish it.
        """
        server = self.serve_environments()  # before the folder is claimed: an address it cannot take leaves nothing written
        try:
            return self._claim_and_run(files, server, on_finished, on_start)
        finally:
            if server is not None:
                server.stop()

    def _claim_and_run(self, files: FolderText, server, on_finished, on_start) -> BatchResult:
        folder, lock = self.claim()
        with lock:
            specs, finished = self._runs_to_do(folder)
            writer = BatchWriter(folder, self.plan, finished, files.run_text, files.summary_text)
            interrupted = self._go(specs, writer, on_finished, on_start, server)
            try:
                writer.close()  # every finished run on disk before the summary
                batch = writer.batch(interrupted)
                writer.write_summary(batch)
            except Exception as err:  # noqa: BLE001 - a disk error, or a value no file can hold: bad output, never a traceback
                raise LoadError.one(f"cannot write the results: {err}", str(folder.root)) from None
            if not interrupted:
                try:
                    files.write_reports(batch, folder.root)
                except OSError as err:
                    raise LoadError.of_os("cannot write the report", err, str(err.filename or folder.root)) from None
            return batch

    def _runs_to_do(self, folder: ResultsFolder) -> tuple[list[RunSpec], list[RunResult]]:
        """The runs of the plan not finished yet, and those that are; a new batch's plan is written first."""
        by_slug = {s.slug: s for s in self.project.scenarios}
        if self.options.resume is None:
            try:
                folder.write_plan(self.plan)
            except OSError as err:
                raise LoadError.of_os("cannot write the plan", err, str(folder.plan_path)) from None
            return [self.spec(by_slug[slug], number) for slug, number in self.plan.run_keys()], []
        finished = finished_runs(folder, self.plan)
        done = {run.key for run in finished}
        return [self.spec(by_slug[slug], number) for slug, number in self.plan.run_keys() if (slug, number) not in done], finished

    def spec(self, scenario: Scenario, number: int) -> RunSpec:
        """Run `number` of a scenario as its plan has it: which persona trait it plays, which seed it samples with,
        which repeat it is."""
        planned = self._planned[scenario.slug]
        return RunSpec(
            scenario, number, planned.persona_of(number), planned.seed_of(number), repeat=planned.repeat_of(number), batch_seed=self.plan.seed
        )

    def _go(self, specs, writer: BatchWriter, on_finished, on_start, server=None) -> bool:
        """Run `specs`, each run handed to `writer` as it finishes, their environments served by `server`; whether
        the batch was cut short."""

        def finished(run: RunResult) -> None:
            writer.add(run)  # its files are encoded and written on the writer's thread
            on_finished(run)

        async def go():
            if on_start is not None:
                on_start(asyncio.current_task())
            try:
                return await run_batch(specs, self.agent, self.make_user, self.judge, self.settings, finished, self.reviewer, server)
            finally:
                await self.agent.aclose()

        try:
            asyncio.run(go())
        except (KeyboardInterrupt, asyncio.CancelledError):  # finished runs are already with the writer
            return True
        return False

    def serve_environments(self, specs: Sequence[RunSpec] | None = None):
        """The loopback server of the runs' environments (all the batch's scenarios', or those of `specs`), started,
        for an agent that is not called in process (a Python agent is handed its environment); None when no run has
        one. `LoadError` when it cannot listen where `DIALOGCHECK_ENVIRONMENT_HTTP` says."""
        from ..connectors.python import PythonConnector

        scenarios = [spec.scenario for spec in specs] if specs is not None else self.project.scenarios
        if isinstance(self.agent, PythonConnector) or not any(scenario.environment is not None for scenario in scenarios):
            return None
        from ..environment.serve import HTTP_VARIABLE, EnvironmentServer, bound_address

        try:
            server = EnvironmentServer(*bound_address())
            server.start()
        except ValueError as err:
            raise LoadError.one(str(err), HTTP_VARIABLE) from None
        except OSError as err:
            message = f"cannot serve the environments at {os.environ.get(HTTP_VARIABLE) or 'a loopback port'}: {os_reason(err)}"
            raise LoadError.one(message, HTTP_VARIABLE) from None
        return server


def _refuse_bad_matrix(personas: Sequence[str], seed: int | None, spelling: Spelling) -> None:
    """`LoadError` (bad input) naming each persona trait that is not a built-in one, and a seed out of range."""
    from ..config import SEED_RANGE
    from ..scenario.traits import trait_list_problems

    problems = [Problem(why, spelling.option("persona")) for why in trait_list_problems(personas)]
    if seed is not None and not 0 <= seed < SEED_RANGE:
        problems.append(Problem(f"the seed must be an integer from 0 to {SEED_RANGE - 1}, got {seed}", spelling.option("seed")))
    if problems:
        raise LoadError(problems)


def _is_connector(agent: Any) -> bool:
    return agent is not None and not isinstance(agent, (str, AgentSettings)) and hasattr(agent, "send")


def _connector(project: Project, agent: str | AgentSettings | None, spelling: Spelling) -> AgentConnector:
    """The connector of the agent named; `AgentSetupError` (bad input) when it cannot be set up."""
    from ..connectors.base import AgentSetupError
    from ..connectors.factory import connector_from_settings

    try:
        settings = agent_settings(project.config, agent, spelling)
    except ValueError as err:
        raise AgentSetupError(str(err)) from None
    try:
        return connector_from_settings(settings, project.root)
    except (ValueError, AgentError) as err:
        raise AgentSetupError(f"cannot set up the agent: {err}") from None
