"""`dialogcheck run`: simulate and judge every scenario of a project, writing results as runs finish."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ..config import in_flight_for
from ..connectors.base import AgentError
from ..errors import LoadError, Problem
from ..llm.base import LLMError
from ..report.batch_text import render_run, render_summary
from ..report.json import dumps
from ..results.files import ResultsFolder, new_folder, summary_document
from ..results.load import read_events
from ..results.lock import BatchLock
from ..results.plan import MAX_RUNS, Plan, new_plan, read_plan
from ..results.writer import BatchWriter
from ..runner.batch import BatchSettings, RunSpec, run_batch
from ..runner.project import Project, load_planned, load_project
from .env_options import env_options
from .output import (
    EXIT_ERRORED,
    FORMAT_OPTION,
    batch_exit_code,
    console,
    fail_with_load_error,
    print_json,
    print_text,
)
from .report import HTML, JUNIT, write_reports


def _plan(project: Project, runs: int, started: str) -> Plan:
    config = os.path.abspath(project.config.path) if project.config.path else None
    return new_plan(started, str(project.root), config, project.planned(runs))


def _refuse_with_resume(paths, results_dir: str | None, config_path: str | None) -> None:
    """`--resume` finishes the batch as its plan.json planned it: what would plan another is a usage error, never ignored."""
    runs_given = click.get_current_context().get_parameter_source("runs") is not click.core.ParameterSource.DEFAULT
    given = {"PATHS": bool(paths), "--runs": runs_given, "--results": results_dir is not None, "--config": config_path is not None}
    named = [name for name, present in given.items() if present]
    if named:
        raise click.UsageError(
            f"--resume finishes the batch its plan.json describes (its scenarios, runs and config): {', '.join(named)}"
            " cannot be given with it (start a new batch for other scenarios or runs)"
        )


def _make_users(project: Project, use_cache: bool, cache_dir: Path | None, mode: str = "auto", parallel: int = 1):
    """One simulated user per run: the script when there is one (unless `mode` is llm), else the configured LLM."""
    from ..simulate.user import LLMUser, ScriptedUser

    unscripted = [s for s in project.scenarios if s.script is None or mode == "llm"]
    settings = project.config.simulation.llm
    if unscripted and settings is None:
        raise LoadError(
            Problem(
                "this scenario has no `script`, and no simulation model is configured (simulation.llm in eval/conftest.yml)"
                if s.script is None
                else "--simulate llm needs a simulation model (simulation.llm in eval/conftest.yml)",
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
        client = make_client(settings, cache=project.config.cache, max_in_flight=limit, use_cache=use_cache, cache_dir=cache_dir)
        templates = Templates(role.prompts)

    def make_user(scenario):
        if scenario.script is not None and mode != "llm":
            return ScriptedUser(scenario.script)
        return LLMUser(client, settings, scenario.simulation_context, templates)

    return make_user


def _agent(project: Project, agent_flag: str | None):
    """The connector `--agent` names (keeping the config's `agent.timeout`), else the config's."""
    from ..connectors.factory import connector_from_settings, parse_agent_flag

    where = str(project.config.path or project.root)
    configured = project.config.agent
    settings = configured
    if agent_flag:
        try:
            settings = parse_agent_flag(agent_flag)
        except ValueError as err:
            raise click.UsageError(str(err)) from None
        if configured is not None:
            settings = replace(settings, timeout=configured.timeout)  # the flag says only where the agent is
    if settings is None:
        raise LoadError.one("no agent to talk to: set `agent` in eval/conftest.yml or pass --agent", where)
    try:
        return connector_from_settings(settings, project.root)
    except (ValueError, AgentError) as err:
        if agent_flag:
            raise click.BadParameter(f"cannot set up the agent: {err}", param_hint="'--agent'") from None
        raise LoadError.one(f"cannot set up the agent: {err}", where) from None


def _check_reachable(agent, output_format: str) -> None:
    """Exit 3 with one message when the agent is down, before any run or any file of the batch."""
    try:
        asyncio.run(agent.check_reachable())
    except AgentError as err:
        message = f"the agent is not reachable, so no run was started: {err}"
        if output_format == "json":
            print_json(dumps({"error": {"message": message, "file": None, "line": None, "column": None}}))
        else:
            print_text(Text(message + "\n", style="bold red"), stderr=True)
        raise SystemExit(EXIT_ERRORED) from None


def _claim(results_dir: str | None, resume_dir: str | None, project: Project, stamp: str) -> tuple[ResultsFolder, BatchLock]:
    """The batch's folder, locked: the one resumed, the new or empty `--results`, or a new `eval/results/<stamp>`."""
    if resume_dir:
        folder = ResultsFolder(resume_dir)
        return folder, folder.lock()
    folder = ResultsFolder(results_dir or new_folder(project.root / "eval" / "results", stamp))
    return folder, folder.claim()


def _progress():
    """A progress line on a terminal (stderr); nothing when piped."""
    if not sys.stderr.isatty():
        return None
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[tally]}"),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
    )


EXIT_INTERRUPTED = 130


class _Interrupt:
    """SIGTERM ends a batch the way Ctrl-C does: the batch is cancelled, finished runs kept, the way to resume said.

    Like asyncio's own Ctrl-C handling, it cancels the batch rather than raise
    KeyboardInterrupt wherever the signal lands, so a signal to dialogcheck stays
    apart from a KeyboardInterrupt an agent raises (which errors only its run).
    """

    def __init__(self) -> None:
        self.batch: asyncio.Task | None = None

    def __call__(self, signum, frame) -> None:
        batch = self.batch
        if batch is None or batch.done():
            raise KeyboardInterrupt
        batch.cancel()
        batch.get_loop().call_soon_threadsafe(lambda: None)  # wake the loop to act on it


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--agent", "agent_flag", help="rasa:URL, http:URL (or the URL alone) or python:MODULE:FUNC (wins over eval/conftest.yml).")
@click.option("--runs", type=click.IntRange(1, MAX_RUNS), default=1, show_default=True, help="Runs of each scenario.")
@click.option("--parallel", type=click.IntRange(1, 1000), default=4, show_default=True, help="Runs in flight at once.")
@click.option("--timeout", "time_limit", type=click.FloatRange(min=0.001), default=300.0, show_default=True, help="Seconds a run may take.")
@click.option("--results", "results_dir", type=click.Path(file_okay=False), help="Results folder, new or empty (default: eval/results/<timestamp>).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, exists=True), help="Finish an interrupted batch in this folder, as its plan.json planned it.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="eval/conftest.yml to use (default: the project's).")
@click.option(
    "--simulate", "simulate_mode", type=click.Choice(["auto", "llm"]), default="auto", show_default=True,
    help="auto: a scenario's script when it has one, else the LLM user; llm: the LLM user for every scenario.",
)
@click.option("--no-judge", is_flag=True, help="Skip LLM-judged checks instead of reporting them as errors.")
@click.option("--no-cache", is_flag=True, help="Ask the LLMs again instead of reusing cached answers.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Folder of the LLM answer cache.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Also write the JUnit XML here (junit.xml is always in the results folder).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Also write the HTML report here (report.html is always in the results folder).")
@FORMAT_OPTION
@env_options
def run(paths, agent_flag, runs, parallel, time_limit, results_dir, resume_dir, config_path, simulate_mode, no_judge, no_cache, cache_dir, junit_path, html_path, output_format):
    """Simulate and judge scenarios: a PROJECT folder, scenario files, or folders of them (default: .)."""
    started = datetime.now(timezone.utc)
    cache = Path(cache_dir) if cache_dir else None
    if resume_dir:
        _refuse_with_resume(paths, results_dir, config_path)
    try:
        if resume_dir:
            plan_file = ResultsFolder(resume_dir).plan_path
            plan = read_plan(plan_file)
            project = load_planned(plan, str(plan_file))
        else:
            project = load_project(paths, config_path)
            plan = _plan(project, runs, started.isoformat(timespec="seconds"))
        make_user = _make_users(project, not no_cache, cache, simulate_mode, parallel)
        agent = _agent(project, agent_flag)
        from ..judge.setup import judge_from_config

        judge_limit = in_flight_for(project.config.evaluation, parallel)
        judge = None if no_judge else judge_from_config(project.config, use_cache=not no_cache, cache_dir=cache, max_in_flight=judge_limit)
    except LoadError as err:
        fail_with_load_error(err, output_format)
    except OSError as err:
        where = resume_dir or (paths[0] if paths else ".")
        fail_with_load_error(LoadError.one(f"cannot read: {err.strerror or err}", str(err.filename or where)), output_format)
    except LLMError as err:
        fail_with_load_error(LoadError.one(str(err), str(project.config.path or project.root)), output_format)
    _check_reachable(agent, output_format)
    try:
        folder, lock = _claim(results_dir, resume_dir, project, started.strftime("%Y%m%d-%H%M%S"))
    except LoadError as err:
        fail_with_load_error(err, output_format)
    settings = BatchSettings(parallel=parallel, time_limit=time_limit, no_judge=no_judge, metrics=project.config.evaluation.metrics)
    with lock:
        specs, documents = _runs_to_do(folder, plan, project, resumed=bool(resume_dir), output_format=output_format)
        writer = BatchWriter(folder, plan.to_dict(), documents, lambda d: render_run(d).plain, lambda s: render_summary(s).plain)
        interrupted = _run_batch(specs, agent, make_user, judge, settings, writer)
        try:
            writer.close()  # every finished run on disk before the summary reads them
        except Exception as err:  # noqa: BLE001 - a disk error: reported, never a traceback
            fail_with_load_error(LoadError.one(f"cannot write the results: {err}", str(folder.root)), output_format)
        _finish(folder, plan, interrupted, junit_path, html_path, output_format)


def _runs_to_do(folder: ResultsFolder, plan: Plan, project: Project, *, resumed: bool, output_format: str) -> tuple[list[RunSpec], list[dict]]:
    """The runs of the plan not finished yet, and the documents of those that are; a new batch's plan is written first."""
    by_slug = {s.slug: s for s in project.scenarios}
    if not resumed:
        try:
            folder.write_plan(plan)
        except OSError as err:
            fail_with_load_error(LoadError.one(f"cannot write the plan: {err.strerror or err}", str(folder.plan_path)), output_format)
        return [RunSpec(by_slug[slug], number) for slug, number in plan.run_keys()], []
    documents = folder.runs(plan)
    done = {(run["scenario"]["slug"], run["run"]) for run in documents}
    return [RunSpec(by_slug[slug], number) for slug, number in plan.run_keys() if (slug, number) not in done], documents


def _run_batch(specs: list[RunSpec], agent, make_user, judge, settings: BatchSettings, writer: BatchWriter) -> bool:
    """Run `specs`, each run handed to `writer` as it finishes; whether Ctrl-C or SIGTERM cut the batch short."""
    progress = _progress()
    task = progress.add_task("running", total=len(specs), tally="") if progress else None
    counts = {"pass": 0, "fail": 0, "error": 0}

    def on_finished(record) -> None:
        writer.add(record)  # the document, its text and the files are made on the writer's thread
        counts[record.verdict.value] += 1
        if progress is not None:
            tally = f"{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errored"
            progress.update(task, advance=1, description=f"{record.slug} run {record.number}", tally=tally)

    interrupt = _Interrupt()

    async def go():
        interrupt.batch = asyncio.current_task()
        try:
            return await run_batch(specs, agent, make_user, judge, settings, on_finished)
        finally:
            await agent.aclose()

    if progress is not None:
        progress.start()
    interrupted = False
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C or SIGTERM: finished runs are already on disk
        interrupted = True
    finally:
        signal.signal(signal.SIGTERM, previous)
        if progress is not None:
            progress.stop()
    return interrupted


def _finish(folder: ResultsFolder, plan: Plan, interrupted: bool, junit_path, html_path, output_format: str) -> None:
    """The summary and the reports from the runs on disk, then the batch's exit code."""
    finished = folder.runs(plan)
    summary = summary_document(finished, plan.to_dict()) | {"interrupted": interrupted}
    folder.write_summary(summary, render_summary(summary).plain)
    if interrupted:
        message = (
            f"interrupted: {summary['completed_runs']} of {summary['planned_runs']} runs finished; "
            f"finish with: dialogcheck run --resume {folder.root}\n"
        )
        print_text(Text(message, style="bold yellow"), stderr=True)
        raise SystemExit(EXIT_INTERRUPTED)
    junit_paths = [folder.root / JUNIT] + ([junit_path] if junit_path else [])
    html_paths = [folder.root / HTML] + ([html_path] if html_path else [])
    try:
        write_reports(summary, finished, read_events(folder.root, finished), junit_paths, html_paths)
    except OSError as err:
        fail_with_load_error(LoadError.one(f"cannot write the report: {err.strerror or err}", str(err.filename or folder.root)), output_format)
    if output_format == "json":
        print_json(dumps({"results": str(folder.root), **summary}))
    else:
        text = render_summary(summary)
        text.append(f"results: {folder.root}\n", style="dim")
        print_text(text)
    raise SystemExit(batch_exit_code(summary))
