"""`dialogcheck check`: judge recorded conversations against a scenario's goals or an SOP.

The library (`dialogcheck.checking.CheckBatch`) plans the input and judges it
in this process, in worker processes (`--jobs`) or on Ray (`--engine ray`);
this module parses options, asks for the results encoded as the output
format wants them, writes them in input order and maps the batch to an exit code.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .._shown import counted
from ..checking import CheckBatch, CheckTally, judged_count, load_subject, note_unfinished
from ..config import QUALITY_METRICS, ProjectConfig, find_config, load_config
from ..engines.chunks import is_stream
from ..engines.local import WorkerLost, usable_cores
from ..engines.work import CheckJob, ChunkResult
from ..errors import LoadError
from ..events.model import FRAMEWORK_TOOLS
from ..importers import IMPORTERS
from ..report.json import dumps
from ..report.styled import Styled
from ..report.text import (
    plain_conversation,
    plain_failing_checks,
    render_output_summary,
)
from ..results.atomic import write_atomic
from ..results.codec import check_summary_document, conversation_line
from ..results.lock import BatchLock
from .calibration_floor import REQUIRE_CALIBRATION_OPTION, require_calibration
from .check_output import JsonWriter, TextWriter, print_warnings
from .env_options import env_options
from .numbers import Number
from .output import (
    EXIT_BAD_INPUT,
    EXIT_ERRORED,
    FORMAT_OPTION,
    MAX_FAILURES_OPTION,
    SHOW_OPTION,
    _surely_not_terminal,
    check_exit_code,
    claim_report_paths,
    console,
    fail_with_load_error,
    print_json,
    print_text,
)
from .progress import Progress
from .replay import REPLAY_OPTION, refuse_replay_without_cache
from .telemetry_out import TelemetryOut, require_sdk, telemetry_options

if TYPE_CHECKING:
    from .html_file import HtmlReportFile

#: Largest --chunk-mb (1 TiB): past it every input is one task anyway; the bound keeps inf out.
MAX_CHUNK_MB = 2**20
SHARD_FORMATS = ("jsonl", "parquet")

JOBS_HELP = (
    "Worker processes for the checks (default: the usable cores). Results come out in input order, the same "
    "as with --jobs 1. Inputs under 2 MB, --junit, and LLM-judged checks (criteria, llm_judge, --metrics, with "
    "a judge configured) run in this process: the judge's limit on calls in flight is shared. With "
    "--engine ray: the CPUs of the local Ray instance."
)


def _config(subject_path: str, config_path: str | None) -> ProjectConfig | None:
    path = Path(config_path) if config_path else find_config(subject_path)
    return load_config(path) if path is not None else None


def _write_reports(batch: CheckBatch, junit_path: str | None, html: HtmlReportFile | None) -> None:
    """--junit, and the end of --html (written as the results went by); a report that cannot be written is a
    `LoadError` naming it."""
    try:
        if junit_path:
            from ..report.junit import render_junit_check  # the XML writer, only when a report is asked for

            write_atomic(junit_path, render_junit_check(batch.kept, batch.subject))
    except OSError as err:
        raise LoadError.of_os("cannot write the report", err, str(err.filename or junit_path)) from None
    if html is not None:
        html.commit()


def judge_note(subject, judge, no_judge: bool) -> str | None:
    """Say which checks were not judged, and why, so a skipped check is never mistaken for a pass."""
    count = judged_count(subject)
    if not count or (judge is not None and not no_judge):
        return None
    why = "skipped (--no-judge)" if no_judge else "not judged: no judge configured (evaluation.llm in eval/conftest.yml)"
    several = getattr(subject, "scenarios", None)
    per = f"in {counted(len(several), 'scenario')}" if several is not None else "per conversation"
    return f"{counted(count, 'LLM-judged check')} {per} {why}"


def wants_judge(subject, no_judge: bool, metrics: bool) -> bool:
    """Whether a judge is needed: LLM-judged checks to decide, or quality metrics to score."""
    return bool(not no_judge and judged_count(subject)) or metrics


def _make_judge(config, no_cache: bool, cache_dir: str | None, where: str, output_format: str, replay: bool = False):
    from ..judge.setup import judge_from_config
    from ..llm.base import LLMError

    try:
        return judge_from_config(config, use_cache=not no_cache, cache_dir=Path(cache_dir) if cache_dir else None, replay=replay)
    except LLMError as err:
        fail_with_load_error(LoadError.one(str(err), str(config.path) if config and config.path else where), output_format)
    except LoadError as err:  # the project's cache folder is a link out of it
        fail_with_load_error(err, output_format)


def _check_options(engine, output_dir, output_format_shards, input_format, junit_path, html_path) -> None:
    if engine == "ray":
        if not output_dir:
            raise click.UsageError("--engine ray writes its results to a folder: give --output DIR (a path or an object-store URI)")
        if input_format:
            raise click.UsageError("--engine ray reads native JSONL, JSON and Parquet: convert with `dialogcheck import` first")
        if junit_path or html_path:
            raise click.UsageError("--junit and --html are written by --engine local")
    if output_format_shards == "parquet" or engine == "ray":
        try:
            import pyarrow  # noqa: F401 - imported only to learn that it is installed
        except ImportError:
            hint = "pip install 'dialogcheck[ray]'" if engine == "ray" else "pip install 'dialogcheck[parquet]'"
            raise click.UsageError(f"--engine ray and Parquet shards need pyarrow: {hint}") from None


def _refuse_unless_empty(output_dir: str) -> None:
    from ..engines.storage import folder_is_empty

    try:
        empty = folder_is_empty(output_dir)
    except OSError as err:
        raise LoadError.of_os("cannot use the output folder", err, output_dir) from None
    if not empty:
        raise LoadError.one("the output folder is not empty: give a new or empty folder", output_dir)


def _claim_output(output_dir: str, output_format: str) -> BatchLock | None:
    """The output folder, new or empty, locked as `run` locks its results folder, so a second process writing it
    is refused rather than mixing its shards in; None for an object-store URI, which has no lock (checked empty only)."""
    from ..engines.storage import is_uri

    try:
        if is_uri(output_dir):
            _refuse_unless_empty(output_dir)
            return None
        return BatchLock.claim(Path(output_dir), lambda folder: _refuse_unless_empty(output_dir), command="check")
    except LoadError as err:
        fail_with_load_error(err, output_format)
    except OSError as err:  # the folder cannot be made
        _cannot_write_output(err, output_dir, output_format)
    raise AssertionError("unreachable")


def _let_go(lock: BatchLock, output_dir: str) -> None:
    """Release the output folder: a batch that finished keeps its lock file there, one that wrote nothing leaves
    the folder as it found it."""
    from ..engines.shards import SUMMARY_NAME

    if os.path.lexists(os.path.join(output_dir, SUMMARY_NAME)):
        lock.release()
    else:
        lock.abandon()


@click.command()
@click.option(
    "--scenario", "scenario_paths", type=click.Path(), multiple=True,
    help="Scenario file whose goals judge the conversations. Repeat it, or give a folder (or project) of scenarios, "
    "to judge each conversation against its own: the one its tracker object names (`\"scenario\": SLUG`), or the "
    "one --pair finds.",
)
@click.option("--sop", "sop_paths", type=click.Path(), multiple=True, help="SOP file to apply to each conversation (one).")
@click.option(
    "--pair", metavar="REGEX",
    help="With several scenarios: pair a conversation with the scenario whose slug gives the key its id gives, the "
    "key being what REGEX's one group captures (--pair 'task-(\\d+)' pairs task-7-trial-2 with tau-bench-task-7, "
    "not with tau-bench-task-17). A conversation that pairs with none is bad input.",
)
@click.option("--config", "config_path", type=click.Path(), help="eval/conftest.yml to take the judge from (default: the project's).")
@click.option("--no-judge", is_flag=True, help="Skip LLM-judged checks (criteria, llm_judge) instead of reporting them as errors.")
@click.option("--metrics", is_flag=True, help="Also score the quality metrics (never part of the verdict).")
@click.option("--no-cache", is_flag=True, help="Ask the LLM again instead of reusing cached answers.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Folder of the LLM answer cache.")
@REPLAY_OPTION
@REQUIRE_CALIBRATION_OPTION
@click.option("--input-format", type=click.Choice(list(IMPORTERS)), help="Read CONVERSATIONS in this format (as `dialogcheck import --from` does).")
@click.option("--stream", is_flag=True, help="Judge conversations as they are read, whatever the input size (memory stays flat).")
@click.option(
    "--strict", is_flag=True,
    help="A name in the logs one edit from a known one (an event type `tool_exectued`, a field `txt`) is bad "
    "input (exit 2) instead of a warning.",
)
@click.option(
    "--review-user", is_flag=True,
    help="Also review the conversations' `user` messages against the scenario's simulation_context: a conversation "
    "whose simulated user is suspect (it repeats its prompt, echoes the agent, leaks its brief, ...) is counted as suspect.",
)
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Also write an HTML report here.")
@click.option("--jobs", type=click.IntRange(min=1), metavar="N", help=JOBS_HELP)
@click.option(
    "--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
    help="local: this machine. ray: Ray Data tasks on the cluster at --ray-address, or on a local Ray instance "
    "(pip install 'dialogcheck[ray]'); needs --output; LLM-judged checks need --no-judge there.",
)
@click.option("--ray-address", metavar="ADDR", help="Ray cluster to run on (as `ray.init(address=...)` takes it; default: RAY_ADDRESS, else a local instance).")
@click.option(
    "--output", "output_dir", metavar="DIR",
    help="Write the results as shards in this folder (a path, or with --engine ray an object-store URI) plus "
    "summary.json, and print only the summary. The folder must be new or empty.",
)
@click.option("--output-format", "shard_format", type=click.Choice(SHARD_FORMATS), default="jsonl", show_default=True, help="Format of the shards written to --output.")
@click.option("--chunk-mb", type=Number(min=0.001, max=MAX_CHUNK_MB), help="Input per task in MiB: JSONL split on line ends, Parquet by row group (default 1, 16 with --engine ray).")
@telemetry_options
@SHOW_OPTION
@MAX_FAILURES_OPTION
@FORMAT_OPTION
@click.argument("conversations", nargs=-1, required=True, type=click.Path())
@env_options
def check(**given) -> None:
    """Judge recorded CONVERSATIONS (files or folders) against --scenario or --sop.

    CONVERSATIONS are JSONL (one conversation a line, or one event a line),
    JSON, or Parquet with one conversation a row (an `events` column holding
    the events as a JSON string or a list of structs; optional `id` and
    `source` columns). With --engine ray they may also be object-store URIs
    (s3://, gs://, ...). `-` is standard input; a pipe or FIFO is read once.
    A folder `dialogcheck run` wrote gives its runs' recorded events
    (`SLUG/run_N.events.jsonl`), each filed under its scenario.

    An unknown event type or field one edit from a known one is probably a
    typo: it is reported as a warning with its file, line and column (on
    stderr, or under `warnings` in JSON), or as bad input with --strict.

    Exit code 0 when every conversation passed, 1 when a check failed, 2 for
    bad input, 3 when a check errored (for example, no judge configured) or,
    with --review-user, a conversation's simulated user is suspect.
    """
    o = CheckOptions(**given)
    refuse_replay_without_cache(o.replay, o.no_cache)
    _refuse_what_cannot_go_together(o)
    config, subject = _config_and_subject(o)
    if o.engine == "ray" and (o.metrics or (wants_judge(subject, o.no_judge, False) and config is not None and config.evaluation.llm is not None)):
        raise click.UsageError("--engine ray runs the deterministic checks: add --no-judge to skip LLM-judged ones, or use --engine local")
    lock = _claim_output(o.output_dir, o.output_format) if o.output_dir else None
    try:
        _check(o, config, subject)
    finally:
        if lock is not None:
            _let_go(lock, o.output_dir)  # type: ignore[arg-type]  # a lock is taken only with --output


def _check(o: CheckOptions, config, subject) -> None:
    """Judge, with the output folder (if any) held: on Ray, or here."""
    claim_report_paths([o.junit_path], "report", o.output_format)  # --html and --otlp-out are opened before the batch
    if o.engine == "ray":
        _check_on_ray(o, subject)
    judge = _make_judge(config, o.no_cache, o.cache_dir, o.where, o.output_format, o.replay) if wants_judge(subject, o.no_judge, o.metrics) else None
    require_calibration(judge, config.root if config else None, o.min_kappa)
    html = telemetry = None
    try:
        html = _html_report(o.html_path)
        telemetry = TelemetryOut.of(o.otlp_out, o.openinference_out, o.otlp_endpoint)
        batch = CheckBatch(
            subject, o.conversations, jobs=o.jobs, judge=judge, no_judge=o.no_judge,
            metrics=QUALITY_METRICS if o.metrics else (config.evaluation.metrics if config else ()),
            input_format=o.input_format, strict=o.strict, stream=o.stream, chunk_bytes=o.chunk_bytes, keep=bool(o.junit_path),
            on_result=_each_result(html, telemetry), review_user=o.review_user, transcript=html is not None,
        )
    except LoadError as err:
        for output in (html, telemetry):
            if output is not None:
                output.discard()
        fail_with_load_error(err, o.output_format)
    try:
        _check_locally(batch, o, html, telemetry)
    finally:
        for output in (html, telemetry):
            if output is not None:
                output.discard()  # a report not committed (bad input, an interrupt) is removed, never left half-written


def _html_report(path: str | None) -> HtmlReportFile | None:
    """--html: the page written as the results come; its renderer is imported only when a page is asked for."""
    if not path:
        return None
    from .html_file import HtmlReportFile

    return HtmlReportFile(path)


def _each_result(html: HtmlReportFile | None, telemetry: TelemetryOut | None):
    """What is given every typed result as the batch goes: the HTML report and the telemetry outputs."""
    takers = [output.add for output in (html, telemetry) if output is not None]
    if len(takers) < 2:
        return takers[0] if takers else None

    def each(result) -> None:
        for take in takers:
            take(result)

    return each


@dataclass(frozen=True)
class CheckOptions:
    """The options of `check`, as click parsed them."""

    scenario_paths: tuple[str, ...]
    sop_paths: tuple[str, ...]
    pair: str | None
    config_path: str | None
    no_judge: bool
    metrics: bool
    no_cache: bool
    cache_dir: str | None
    replay: bool
    min_kappa: float | None
    input_format: str | None
    junit_path: str | None
    html_path: str | None
    stream: bool
    strict: bool
    review_user: bool
    jobs: int | None
    engine: str
    ray_address: str | None
    output_dir: str | None
    shard_format: str
    chunk_mb: float | None
    show: str
    max_failures: int
    output_format: str
    conversations: tuple[str, ...]
    otlp_out: str | None = None
    openinference_out: str | None = None
    otlp_endpoint: str | None = None

    @property
    def sop_path(self) -> str | None:
        return self.sop_paths[0] if self.sop_paths else None

    @property
    def where(self) -> str:
        """The file the subject came from, where a problem of the project's setup is reported."""
        return self.scenario_paths[0] if self.scenario_paths else self.sop_paths[0]

    @property
    def chunk_bytes(self) -> int | None:
        return int(self.chunk_mb * 2**20) if self.chunk_mb else None


def _refuse_what_cannot_go_together(o: CheckOptions) -> None:
    """Options that cannot go together are usage errors (exit 2)."""
    if bool(o.scenario_paths) == bool(o.sop_paths):
        raise click.UsageError("give exactly one of --scenario or --sop")
    if len(o.sop_paths) > 1:
        raise click.UsageError("give --sop once: an SOP applies to every conversation (several scenarios may be given with --scenario)")
    if o.pair is not None and o.sop_paths:
        raise click.UsageError("--pair pairs conversations with scenarios: it does not go with --sop")
    if o.review_user and o.sop_paths:
        raise click.UsageError("--review-user reviews the user against a scenario's simulation_context: give --scenario, not --sop")
    if o.review_user and o.engine == "ray":
        raise click.UsageError("--review-user goes with --engine local")
    _check_options(o.engine, o.output_dir, o.shard_format, o.input_format, o.junit_path, o.html_path)
    if o.engine == "ray" and (o.otlp_out or o.openinference_out or o.otlp_endpoint):
        raise click.UsageError("--otlp-out, --openinference-out and --otlp-endpoint are written by --engine local")
    require_sdk(o.otlp_endpoint)
    if o.engine == "ray" and any(is_stream(Path(c)) for c in o.conversations if "://" not in c):
        raise click.UsageError("--engine ray reads files and object-store URIs, which its tasks open themselves: save a pipe's input to a file first")


def _config_and_subject(o: CheckOptions):
    """The project's config (when there is one) and the scenario, scenarios or SOP to judge by; bad input is exit 2."""
    try:
        config = _config(o.where, o.config_path)
        return config, load_subject(o.scenario_paths, o.sop_path, o.pair, config.framework_tools if config else FRAMEWORK_TOOLS)
    except LoadError as err:
        fail_with_load_error(err, o.output_format)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="'--pair'") from None
    raise AssertionError("unreachable")


def _check_locally(batch: CheckBatch, out: CheckOptions, html: HtmlReportFile | None = None, telemetry: TelemetryOut | None = None) -> None:
    """Judge in order and write as the results come; bad input stops it with exit 2, one JSON document in JSON."""
    writer = None
    try:
        if out.output_dir:
            _to_shards(batch, out)
        else:
            writer = _writer(batch, out)
            encode, join, alone = _encoding(out.output_format, out.show == "all")
            with Progress("conversations") as progress:
                for item in batch.judged(encode, join, with_results=writer_needs_results(out.output_format), encode_alone=alone):
                    writer.add(item)
                    progress.add(item.counts if isinstance(item, ChunkResult) else item.verdict)
        if batch.tally.counts.total == 0:
            raise LoadError.one("no conversation files found (.json, .jsonl)", " ".join(out.conversations))
        _write_reports(batch, out.junit_path, html)
        if telemetry is not None:
            telemetry.commit()
    except LoadError as err:  # bad input: before anything was written, or (streaming) where it stands
        _fail(err, writer, out.output_format)
    except WorkerLost as err:
        _errored(str(err), writer, out.output_format)
    if writer is not None:
        writer.finish()
    if out.output_dir:
        _summary(batch.tally, out.output_dir, out.output_format)
    elif out.output_format != "json":
        print_warnings(batch.tally)
    if out.output_format != "json":
        note = judge_note(batch.subject, batch.judge, batch.no_judge)
        if note:
            print_text(Styled(f"{note}\n", "dim"))
    raise SystemExit(check_exit_code(batch.tally.counts, batch.tally.undecided))


def _to_shards(batch: CheckBatch, out: CheckOptions) -> None:
    try:
        batch.to_shards(out.output_dir, out.shard_format)  # type: ignore[arg-type]  # shards are written only with --output
    except OSError as err:  # a shard could not be written (the folder's place is a file, a full disk, ...)
        _cannot_write_output(err, out.output_dir, out.output_format)


def _styled_terminal() -> bool:
    return not _surely_not_terminal(sys.stdout) and console().is_terminal


def writer_needs_results(output_format: str) -> bool:
    """A terminal's styled text is rendered here, from the typed results; anything else comes encoded."""
    return output_format != "json" and _styled_terminal()


def _encoding(output_format: str, show_all: bool):
    """(encode, join, encode_alone) for the results on stdout: the codec's JSON line, or plain text: every
    block joined per chunk (`--show all`), else each conversation's failing checks and, for a batch of one,
    its whole block."""
    if output_format == "json":
        return conversation_line, b",\n", None
    if _styled_terminal():
        return None, None, None
    if show_all:
        return plain_conversation, b"\n", None
    return plain_failing_checks, None, plain_conversation


def _writer(batch: CheckBatch, out: CheckOptions):
    if out.output_format == "json":
        return JsonWriter(batch.tally)
    return TextWriter(batch.tally, show_all=out.show == "all", max_failures=out.max_failures)


def _fail(err: LoadError, writer, output_format: str) -> None:
    """Bad input, exit 2: a JSON document already begun on stdout is closed with the error, so stdout always
    holds exactly one document; otherwise the error is the whole output."""
    sys.stdout.flush()
    if writer is not None and output_format == "json" and writer.started:
        writer.fail(err)
        raise SystemExit(EXIT_BAD_INPUT)
    fail_with_load_error(err, output_format)


def _errored(message: str, writer, output_format: str) -> None:
    """A batch that could not finish for a reason not the input's (a worker killed): exit 3, one line; in JSON one
    document with its `error`, the one begun closed with it."""
    sys.stdout.flush()
    error = {"message": message, "file": None, "line": None, "column": None}
    if output_format == "json":
        if writer is not None and writer.started:
            writer.fail(error)
        else:
            print_json(dumps({"error": error}))
    else:
        print_text(Styled(f"error: {message}\n", "bold red"), stderr=True)
    raise SystemExit(EXIT_ERRORED)


def _check_on_ray(o: CheckOptions, subject) -> None:
    from ..engines.ray_engine import CHUNK_BYTES, EngineError, RayUnavailable, run_ray

    job = CheckJob(subject, no_judge=o.no_judge, strict=o.strict, encode=conversation_line)
    output_format, output_dir = o.output_format, o.output_dir
    noted = CheckTally()  # what the inputs lack (a `run` folder's runs that never finished), said before any task
    try:
        note_unfinished(noted, o.conversations)
        outcome = run_ray(
            job, o.conversations, output_dir, o.shard_format, address=o.ray_address, cpus=o.jobs or usable_cores(),  # type: ignore[arg-type]  # --output, required above
            chunk_bytes=o.chunk_bytes or CHUNK_BYTES,
        )
    except LoadError as err:
        fail_with_load_error(err, output_format)
    except RayUnavailable as err:
        raise click.UsageError(str(err)) from None
    except EngineError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(EXIT_ERRORED) from None
    tally = CheckTally(
        counts=outcome.counts, any_error=outcome.any_error, warnings=noted.warnings, shards=list(outcome.shards), stats=outcome.stats, unfinished_batches=noted.unfinished_batches
    )
    tally.warnings.add(outcome.warnings)
    if tally.counts.total == 0:
        fail_with_load_error(LoadError.one("no conversations found", " ".join(o.conversations)), output_format)
    _summary(tally, output_dir, output_format)  # type: ignore[arg-type]  # --engine ray writes to --output, required above
    raise SystemExit(check_exit_code(tally.counts, tally.undecided))


def _summary(tally: CheckTally, folder: str, output_format: str) -> None:
    """Write summary.json into the folder (last: a folder with one is complete) and print it."""
    from ..engines.shards import write_summary

    document = dumps(check_summary_document(tally.counts, tally.stats, tally.warnings.as_json(), tally.unfinished))
    try:
        write_summary(folder, document.encode("utf-8"))
    except OSError as err:
        _cannot_write_output(err, folder, output_format)
    if output_format == "json":
        print_json(document)
    else:
        print_text(render_output_summary(tally.counts, tally.stats, len(tally.shards), folder))
        print_warnings(tally)


def _cannot_write_output(err: OSError, folder: str | None, output_format: str) -> None:
    fail_with_load_error(LoadError.of_os("cannot write the output folder", err, str(err.filename or folder)), output_format)
