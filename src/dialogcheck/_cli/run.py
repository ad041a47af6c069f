"""`dialogcheck run`: simulate and judge every scenario of a project, writing results as runs finish.

The library (`dialogcheck.runner.scenarios.ScenarioBatch`) plans, runs and
writes the batch, and `commands.run` says what it gave; this module parses
options, shows progress on a terminal, turns SIGTERM into the same stop as
Ctrl-C, prints the summary and exits with the batch's code.
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass

import click

from .._shown import counted
from ..blame import BLAME_MODES
from ..commands.answer import CommandError
from ..commands.run import check_agent, plan_run, run_answer
from ..config import SEED_RANGE
from ..connectors.base import AgentSetupError
from ..errors import LoadError
from ..report.batch_files import BATCH_FILES, write_reports
from ..report.json import dumps
from ..report.styled import Styled
from ..results.model import BatchResult
from ..results.plan import MAX_RUNS
from ..runner.scenarios import RunOptions, ScenarioBatch
from .calibration_floor import REQUIRE_CALIBRATION_OPTION, require_calibration
from .env_options import env_options
from .numbers import Number
from .output import FORMAT_OPTION, MAX_FAILURES_OPTION, SHOW_OPTION, claim_report_paths, fail, fail_with_load_error, print_json, print_text
from .progress import Progress
from .replay import REPLAY_OPTION, refuse_replay_without_cache
from .telemetry_out import TelemetryOut, require_sdk, telemetry_options

EXIT_INTERRUPTED = 130


def _refuse_with_resume(paths, results_dir: str | None, config_path: str | None) -> None:
    """`--resume` finishes the batch as its plan.json planned it: what would plan another is a usage error, never ignored."""
    context = click.get_current_context()
    runs_given = context.get_parameter_source("runs") is not click.core.ParameterSource.DEFAULT
    given = {"PATHS": bool(paths), "--runs": runs_given, "--results": results_dir is not None, "--config": config_path is not None}
    given |= {"--persona": bool(context.params.get("personas")), "--seed": context.params.get("seed") is not None}
    given |= {"--faults": context.get_parameter_source("faults") is not click.core.ParameterSource.DEFAULT}
    named = [name for name, present in given.items() if present]
    if named:
        raise click.UsageError(
            f"--resume finishes the batch its plan.json describes (its scenarios, runs and config): {', '.join(named)}"
            " cannot be given with it (start a new batch for other scenarios or runs)"
        )


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

    def started(self, task: asyncio.Task) -> None:
        self.batch = task


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--agent", "agent_flag", help="rasa:URL, http:URL (or the URL alone) or python:MODULE:FUNC (wins over eval/conftest.yml).")
@click.option("--runs", type=click.IntRange(1, MAX_RUNS), default=1, show_default=True, help="Runs of each scenario.")
@click.option("--parallel", type=click.IntRange(1, 1000), default=4, show_default=True, help="Runs in flight at once.")
@click.option("--timeout", "time_limit", type=Number(min=0.001), default=300.0, show_default=True, help="Seconds a run may take.")
@click.option("--results", "results_dir", type=click.Path(file_okay=False), help="Results folder, new or empty (default: eval/results/<timestamp>).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False, exists=True), help="Finish an interrupted batch in this folder, as its plan.json planned it.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="eval/conftest.yml to use (default: the project's).")
@click.option(
    "--simulate", "simulate_mode", type=click.Choice(["auto", "llm"]), default="auto", show_default=True,
    help="auto: a scenario's script when it has one, else the LLM user; llm: the LLM user for every scenario.",
)
@click.option(
    "--retry-suspect", type=click.IntRange(0, 10), default=1, show_default=True,
    help="Run a run whose simulated user is suspect again, up to this many times (the last attempt is kept).",
)
@click.option(
    "--persona", "personas", multiple=True, callback=lambda ctx, param, value: _traits(value),
    help="Run each LLM-simulated scenario once per repeat under this persona trait (repeatable: a matrix; wins over a scenario's `personas`).",
)
@click.option("--seed", type=click.IntRange(0, SEED_RANGE - 1), help="The simulated user's sampling seed, for providers that take one (wins over simulation.seed).")
@click.option(
    "--faults", type=click.Choice(["on", "off"]), default="on", show_default=True,
    help="off: run with the environments' fault schedules switched off (a baseline to `compare` a faulted batch with).",
)
@click.option(
    "--blame", type=click.Choice(BLAME_MODES), default="evidence", show_default=True,
    help="evidence: each run that did not pass says whose fault it was (agent, user, environment, judge or "
    "unknown) and its decisive turn, decided from its checks, its user's review and the faults injected. llm: also ask the "
    "evaluation model where the evidence placed nothing (its cited turn checked; it may answer unknown). off: no blame.",
)
@click.option("--no-judge", is_flag=True, help="Skip LLM-judged checks instead of reporting them as errors.")
@click.option("--no-cache", is_flag=True, help="Ask the LLMs again instead of reusing cached answers.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Folder of the LLM answer cache.")
@REPLAY_OPTION
@REQUIRE_CALIBRATION_OPTION
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Also write the JUnit XML here (junit.xml is always in the results folder).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Also write the HTML report here (report.html is always in the results folder).")
@telemetry_options
@SHOW_OPTION
@MAX_FAILURES_OPTION
@FORMAT_OPTION
@env_options
def run(**given) -> None:
    """Simulate and judge scenarios: a PROJECT folder, scenario files, or folders of them (default: .)."""
    o = RunArguments(**given)
    require_sdk(o.otlp_endpoint)
    refuse_replay_without_cache(o.replay, o.no_cache)
    if o.resume_dir:
        _refuse_with_resume(o.paths, o.results_dir, o.config_path)
    batch = _plan(o)
    require_calibration(batch.judge, batch.project.config.root, o.min_kappa)
    claim_report_paths([o.junit_path, o.html_path], "report", o.output_format)
    claim_report_paths([o.otlp_out, o.openinference_out], "telemetry file", o.output_format)
    try:
        check_agent(batch)
    except CommandError as err:
        fail(err, o.output_format)
    try:
        result = _run(batch)
    except LoadError as err:  # the folder cannot be claimed, or a file of the batch cannot be written
        fail_with_load_error(err, o.output_format)
    _telemetry(result, o.otlp_out, o.openinference_out, o.otlp_endpoint, o.output_format)
    _finish(result, o.junit_path, o.html_path, o.output_format, show_all=o.show == "all", max_failures=o.max_failures)


@dataclass(frozen=True)
class RunArguments:
    """The arguments of `run`, as click parsed them: the batch's `RunOptions`, and what the command line does
    around the batch (its agent flag, the calibration floor, extra reports, telemetry, the output)."""

    paths: tuple[str, ...]
    agent_flag: str | None
    runs: int
    parallel: int
    time_limit: float
    results_dir: str | None
    resume_dir: str | None
    config_path: str | None
    simulate_mode: str
    retry_suspect: int
    personas: tuple[str, ...]
    seed: int | None
    faults: str
    blame: str
    no_judge: bool
    no_cache: bool
    cache_dir: str | None
    replay: bool
    min_kappa: float | None
    junit_path: str | None
    html_path: str | None
    show: str
    max_failures: int
    output_format: str
    otlp_out: str | None = None
    openinference_out: str | None = None
    otlp_endpoint: str | None = None

    def options(self) -> RunOptions:
        """How the batch runs: the one place a flag of `run` becomes a `RunOptions` field."""
        return RunOptions(
            runs=self.runs, parallel=self.parallel, time_limit=self.time_limit, results=self.results_dir, resume=self.resume_dir,
            config=self.config_path, no_judge=self.no_judge, simulate=self.simulate_mode, use_cache=not self.no_cache, cache_dir=self.cache_dir,
            retry_suspect=self.retry_suspect, personas=self.personas, seed=self.seed, replay=self.replay, faults=self.faults == "on", blame=self.blame,
        )


def _telemetry(batch: BatchResult, otlp_out, openinference_out, otlp_endpoint, output_format: str) -> None:
    """The verdicts of every run that was judged, sent back as telemetry (`--otlp-out`, ...)."""
    if batch.interrupted:
        return
    telemetry = None
    try:
        telemetry = TelemetryOut.of(otlp_out, openinference_out, otlp_endpoint)
        if telemetry is not None:
            telemetry.add_all(run.conversation for run in batch.runs if run.conversation is not None)
            telemetry.commit()
    except LoadError as err:
        fail_with_load_error(err, output_format)
    finally:
        if telemetry is not None:
            telemetry.discard()


def _plan(o: RunArguments) -> ScenarioBatch:
    """Load and plan the batch; every problem of the files is bad input (exit 2), before anything runs."""
    try:
        return plan_run(o.paths, o.options(), _agent(o.agent_flag))
    except LoadError as err:
        fail_with_load_error(err, o.output_format)
    except AgentSetupError as err:  # of --agent: a usage error
        raise click.BadParameter(str(err), param_hint="'--agent'") from None


def _traits(names: tuple[str, ...]) -> tuple[str, ...]:
    """`--persona` as given, once each is a built-in trait (a usage error naming the nearest one when not)."""
    from ..scenario.traits import trait_list_problems

    if problems := trait_list_problems(names):
        raise click.BadParameter(problems[0], param_hint="'--persona'")
    return names


def _agent(agent_flag: str | None) -> str | None:
    """`--agent` as given, once it reads as an agent (a usage error when it does not); None leaves the project's."""
    if not agent_flag:
        return None
    from ..connectors.factory import parse_agent_flag

    try:
        parse_agent_flag(agent_flag)
    except ValueError as err:
        raise click.UsageError(str(err)) from None
    return agent_flag


def _run(batch: ScenarioBatch) -> BatchResult:
    """Run the batch, showing progress on stderr; SIGTERM stops it as Ctrl-C does."""
    interrupt = _Interrupt()
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        with Progress("runs", len(batch.plan.run_keys())) as progress:
            return batch.run(BATCH_FILES, lambda run: progress.add(run.verdict, f"{run.slug} run {run.number}"), interrupt.started)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _finish(batch: BatchResult, junit_path, html_path, output_format: str, *, show_all: bool, max_failures: int) -> None:
    """Say how the batch ended, write the extra report copies, print the summary; exit with the batch's code."""
    if batch.interrupted:
        message = (
            f"interrupted: {len(batch.runs):,} of {counted(batch.planned, 'run')} finished; "  # type: ignore[arg-type]  # a batch run now has its plan
            f"finish with: dialogcheck run --resume {batch.folder}\n"
        )
        print_text(Styled(message, "bold yellow"), stderr=True)
        raise SystemExit(EXIT_INTERRUPTED)
    try:
        write_reports(batch, [junit_path] if junit_path else [], [html_path] if html_path else [])
    except OSError as err:
        fail_with_load_error(LoadError.of_os("cannot write the report", err, str(err.filename or batch.folder)), output_format)
    said = run_answer(batch, show_all=show_all, max_failures=max_failures)
    if output_format == "json":
        print_json(dumps(said.document))
    else:
        print_text(said.text)
    raise SystemExit(said.exit_code)
