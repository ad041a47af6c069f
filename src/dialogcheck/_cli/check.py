"""`dialogcheck check`: judge recorded conversations against a scenario's goals or an SOP.

The input is planned into chunks (`engines.chunks`) and checked by an
engine: in this process, in worker processes (`--jobs`), or on Ray
(`--engine ray`). This module parses options, picks the engine and writes
what comes back in input order.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import click

from ..config import QUALITY_METRICS, ProjectConfig, find_config, load_config
from ..errors import LoadError
from ..events.model import FRAMEWORK_TOOLS
from ..importers import IMPORTERS
from .check_subject import judge_note, load_subject, wants_judge
from .env_options import env_options
from .output import EXIT_BAD_INPUT, EXIT_ERRORED, FORMAT_OPTION, fail_with_load_error, print_text

#: Inputs larger than this are judged as they are read instead of being read whole first.
STREAM_ABOVE_BYTES = 64 * 2**20
#: Inputs smaller than this are checked in this process whatever --jobs says: starting workers costs more.
IN_PROCESS_BELOW_BYTES = 2 * 2**20
#: Largest --chunk-mb (1 TiB): past it every input is one task anyway; the bound keeps inf out.
MAX_CHUNK_MB = 2**20
SHARD_FORMATS = ("jsonl", "parquet")

JOBS_HELP = (
    "Worker processes for the checks (default: the usable cores). Results come out in input order, the same "
    "as with --jobs 1. Inputs under 2 MB, --html, and LLM-judged checks (criteria, llm_judge, --metrics, with "
    "a judge configured) run in this process: the judge's limit on calls in flight is shared. With "
    "--engine ray: the CPUs of the local Ray instance."
)


def _config(subject_path: str, config_path: str | None) -> ProjectConfig | None:
    path = Path(config_path) if config_path else find_config(subject_path)
    return load_config(path) if path is not None else None


def _write_reports(results, loaded, subject, junit_path, html_path) -> None:
    """--junit and --html; a report that cannot be written is a `LoadError` naming it."""
    from ..report.junit import render_junit_check
    from ..results.atomic import write_atomic
    from .report import check_html

    try:
        if junit_path:
            write_atomic(junit_path, render_junit_check(results, subject))
        if html_path:
            write_atomic(html_path, check_html(results, loaded, subject))
    except OSError as err:
        raise LoadError.one(f"cannot write the report: {err.strerror or err}", str(err.filename or junit_path or html_path)) from None


def _make_judge(config, no_cache: bool, cache_dir: str | None, where: str, output_format: str):
    from ..judge.setup import judge_from_config
    from ..llm.base import LLMError

    try:
        return judge_from_config(config, use_cache=not no_cache, cache_dir=Path(cache_dir) if cache_dir else None)
    except LLMError as err:
        fail_with_load_error(LoadError.one(str(err), str(config.path) if config and config.path else where), output_format)


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
            import pyarrow  # noqa: F401
        except ImportError:
            hint = "pip install 'dialogcheck[ray]'" if engine == "ray" else "pip install 'dialogcheck[parquet]'"
            raise click.UsageError(f"--engine ray and Parquet shards need pyarrow: {hint}") from None


def _not_nan(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A range lets NaN through (every comparison with it is false); a size must be a number."""
    if value is not None and value != value:
        raise click.BadParameter("nan is not a size in MiB", ctx, param)
    return value


def _output_folder(output_dir: str, output_format: str) -> None:
    from ..engines.storage import folder_is_empty

    try:
        empty = folder_is_empty(output_dir)
    except OSError as err:
        fail_with_load_error(LoadError.one(f"cannot use the output folder: {err.strerror or err}", output_dir), output_format)
    if not empty:
        fail_with_load_error(LoadError.one("the output folder is not empty: give a new or empty folder", output_dir), output_format)


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
@click.option("--input-format", type=click.Choice(list(IMPORTERS)), help="Read CONVERSATIONS in this format (as `dialogcheck import --from` does).")
@click.option("--stream", is_flag=True, help="Judge conversations as they are read, whatever the input size (memory stays flat).")
@click.option(
    "--strict", is_flag=True,
    help="A name in the logs one edit from a known one (an event type `tool_exectued`, a field `txt`) is bad "
    "input (exit 2) instead of a warning.",
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
@click.option("--chunk-mb", type=click.FloatRange(min=0.001, max=MAX_CHUNK_MB), callback=_not_nan, help="Input per task in MiB: JSONL split on line ends, Parquet by row group (default 1, 16 with --engine ray).")
@FORMAT_OPTION
@click.argument("conversations", nargs=-1, required=True, type=click.Path())
@env_options
def check(
    scenario_paths: tuple[str, ...],
    sop_paths: tuple[str, ...],
    pair: str | None,
    config_path: str | None,
    no_judge: bool,
    metrics: bool,
    no_cache: bool,
    cache_dir: str | None,
    input_format: str | None,
    junit_path: str | None,
    html_path: str | None,
    stream: bool,
    strict: bool,
    jobs: int | None,
    engine: str,
    ray_address: str | None,
    output_dir: str | None,
    shard_format: str,
    chunk_mb: float | None,
    output_format: str,
    conversations: tuple[str, ...],
) -> None:
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
    bad input, 3 when a check errored (for example, no judge configured).
    """
    if bool(scenario_paths) == bool(sop_paths):
        raise click.UsageError("give exactly one of --scenario or --sop")
    if len(sop_paths) > 1:
        raise click.UsageError("give --sop once: an SOP applies to every conversation (several scenarios may be given with --scenario)")
    if pair is not None and sop_paths:
        raise click.UsageError("--pair pairs conversations with scenarios: it does not go with --sop")
    sop_path = sop_paths[0] if sop_paths else None
    where = scenario_paths[0] if scenario_paths else sop_path
    _check_options(engine, output_dir, shard_format, input_format, junit_path, html_path)
    from ..engines.chunks import input_files, is_stream

    if engine == "ray" and any(is_stream(Path(c)) for c in conversations if "://" not in c):
        raise click.UsageError("--engine ray reads files and object-store URIs, which its tasks open themselves: save a pipe's input to a file first")

    try:
        config = _config(where, config_path)
        subject = load_subject(scenario_paths, sop_path, pair, config.framework_tools if config else FRAMEWORK_TOOLS)
        files = None if engine == "ray" else input_files(conversations, with_parquet=not input_format)
        if files == []:
            raise LoadError.one("no conversation files found (.json, .jsonl)", " ".join(conversations))
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if engine == "ray" and (metrics or (wants_judge(subject, no_judge, False) and config is not None and config.evaluation.llm is not None)):
        raise click.UsageError("--engine ray runs the deterministic checks: add --no-judge to skip LLM-judged ones, or use --engine local")
    if output_dir:
        _output_folder(output_dir, output_format)
    chunk_bytes = int(chunk_mb * 2**20) if chunk_mb else None
    if engine == "ray":
        _check_on_ray(subject, conversations, no_judge, strict, jobs, ray_address, output_dir, shard_format, chunk_bytes, output_format)
    judge = None
    if wants_judge(subject, no_judge, metrics):
        judge = _make_judge(config, no_cache, cache_dir, where, output_format)
    wanted = QUALITY_METRICS if metrics else (config.evaluation.metrics if config else ())
    _check_locally(
        subject, files, input_format, judge, no_judge, wanted, jobs, stream, strict, chunk_bytes,
        output_dir, shard_format, junit_path, html_path, output_format, " ".join(conversations),
    )


def _check_locally(
    subject, files, input_format, judge, no_judge, metrics, jobs, stream, strict, chunk_bytes,
    output_dir, shard_format, junit_path, html_path, output_format, given,
) -> None:
    from ..engines.chunks import CHUNK_BYTES, ReadChunk, is_stream, plan_local
    from ..engines.local import usable_cores
    from ..engines.work import CheckJob
    from .check_output import Tally
    from .output import _surely_not_terminal, console

    size = sum(_size(f) for f in files)
    # Small inputs are read whole first, so bad input anywhere stops the check before anything is judged;
    # big ones (or on request) stream, so memory stays flat. A pipe's size is known once it is read: it is
    # read ahead up to the same bound.
    stream = (stream or size > STREAM_ABOVE_BYTES) and not html_path
    chunks = plan_local(files, input_format, chunk_bytes or CHUNK_BYTES)
    size_known = not any(is_stream(f) for f in files)
    if not stream:
        chunks, held, complete = _read_ahead(chunks, None if html_path else STREAM_ABOVE_BYTES - size)
        size, stream, size_known = size + held, not complete, True
    workers = 1 if (size_known and size < IN_PROCESS_BELOW_BYTES) or html_path else (jobs or usable_cores())
    if output_dir or output_format == "json":
        how = "json"
    else:
        how = "text" if _surely_not_terminal(sys.stdout) or not console().is_terminal else "rich"
    keep = bool(junit_path or html_path)
    join = None if (output_dir or keep or how == "rich") else ("\n" if how == "text" else ",\n")
    job = CheckJob(subject, no_judge=no_judge, render=how, keep_results=keep, join=join, strict=strict)
    tally = Tally(kept=[] if job.keep_results else None)
    writer = None
    try:
        if not stream and (judge is not None or html_path):  # checked in this process: read once, all of it before any LLM call
            chunks = [ReadChunk.of(chunk) for chunk in chunks]
        if output_dir:
            try:
                _to_shards(job, chunks, workers, output_dir, shard_format, tally, judge=judge, metrics=metrics)
            except OSError as err:  # a shard could not be written (the folder's place is a file, a full disk, ...)
                _cannot_write_output(err, output_dir, output_format)
        else:
            from .check_output import JsonWriter, TextWriter

            items = _in_order(job, chunks, workers, stream, judge=judge, metrics=metrics)
            writer = JsonWriter(tally) if output_format == "json" else TextWriter(tally)
            for item in items:
                writer.add(item)
        if tally.total == 0:
            raise LoadError.one("no conversation files found (.json, .jsonl)", given)
        if tally.kept is not None:
            loaded = [c for chunk in chunks for c in chunk.read()] if html_path else None  # read chunks: no parsing again
            _write_reports(tally.kept, loaded, subject, junit_path, html_path)
    except LoadError as err:  # bad input: before anything was written, or (streaming) where it stands
        _fail(err, writer, output_format)
    if writer is not None:
        writer.finish()
    if output_dir:
        _summary(tally, output_dir, len(tally.shards), output_format)
    elif output_format != "json":
        tally.print_warnings()
    if output_format != "json":
        note = judge_note(subject, judge, no_judge)
        if note:
            from .output import StyledText

            text = StyledText()
            text.append(f"{note}\n", style="dim")
            print_text(text)
    raise SystemExit(tally.exit_code())


def _read_ahead(chunks, room: int | None):
    """Plan every chunk (reading piped inputs into memory), unless the pipes fill more than `room` bytes
    first: then the rest is planned as it is checked. (chunks, bytes held, whether every chunk is planned)."""
    from ..engines.chunks import held_bytes

    taken, held = [], 0
    for chunk in chunks:
        taken.append(chunk)
        held += held_bytes(chunk)
        if room is not None and held > room:
            return itertools.chain(taken, chunks), held, False
    return taken, held, True


def _fail(err: LoadError, writer, output_format: str) -> None:
    """Bad input, exit 2: a JSON document already begun on stdout is closed with the error, so stdout always
    holds exactly one document; otherwise the error is the whole output."""
    sys.stdout.flush()
    if writer is not None and output_format == "json" and writer.started:
        writer.fail(err)
        raise SystemExit(EXIT_BAD_INPUT)
    fail_with_load_error(err, output_format)


def _in_order(job, chunks, workers, stream, *, judge, metrics):
    """Results to print, in input order; small inputs are checked whole before anything is printed."""
    from ..engines.local import results_in_order

    items = results_in_order(job, chunks, workers, judge=judge, metrics=metrics)
    return items if stream else list(items)


def _to_shards(job, chunks, workers, folder, fmt, tally, *, judge, metrics) -> None:
    """Each chunk's results into its own shard, written by the worker that checked it; bad input, or a shard
    that cannot be written, removes them all."""
    from ..engines.local import shards_in_order
    from ..engines.shards import remove_shards

    results = shards_in_order(job, chunks, workers, folder, fmt, judge=judge, metrics=metrics)
    try:
        for result in results:
            result.raise_problems()
            tally.add_block(result)
            if result.shard:
                tally.shards.append(result.shard)
            if tally.kept is not None:
                tally.kept.extend(item.result for item in result.items)
    except (LoadError, OSError):
        results.close()  # the chunks still in flight finish (and write) first
        remove_shards(folder, fmt)
        raise


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reported when the file is read


def _check_on_ray(subject, conversations, no_judge, strict, jobs, address, output_dir, shard_format, chunk_bytes, output_format):
    from ..engines.local import usable_cores
    from ..engines.ray_engine import CHUNK_BYTES, EngineError, RayUnavailable, run_ray
    from ..engines.work import CheckJob
    from .check_output import Tally

    job = CheckJob(subject, no_judge=no_judge, render="json", strict=strict)
    try:
        outcome = run_ray(
            job, conversations, output_dir, shard_format, address=address, cpus=jobs or usable_cores(), chunk_bytes=chunk_bytes or CHUNK_BYTES
        )
    except LoadError as err:
        fail_with_load_error(err, output_format)
    except RayUnavailable as err:
        raise click.UsageError(str(err)) from None
    except EngineError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(EXIT_ERRORED) from None
    tally = Tally(counts=outcome.counts, any_error=outcome.any_error)
    tally.warnings.add(outcome.warnings)
    if tally.total == 0:
        fail_with_load_error(LoadError.one("no conversations found", " ".join(conversations)), output_format)
    _summary(tally, output_dir, len(outcome.shards), output_format)
    raise SystemExit(tally.exit_code())


def _summary(tally, folder: str, shards: int, output_format: str) -> None:
    from .check_output import print_summary

    try:
        print_summary(tally, folder, shards, output_format)
    except OSError as err:
        _cannot_write_output(err, folder, output_format)


def _cannot_write_output(err: OSError, folder: str | None, output_format: str) -> None:
    fail_with_load_error(LoadError.one(f"cannot write the output folder: {err.strerror or err}", str(err.filename or folder)), output_format)
