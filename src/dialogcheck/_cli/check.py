"""`dialogcheck check`: judge recorded conversations against a scenario's goals or an SOP.

The library's `CheckRun` plans the input and judges it in this process, in
worker processes (`--jobs`) or on Ray (`--engine ray`); this module parses
options (`check_options`), hands the run its sinks (`check_output`: stdout as
text or JSON, `--html`, `--junit`, telemetry) or its output folder, and maps
the tally to an exit code.
"""

from __future__ import annotations

import click

from ..blame import BLAME_MODES
from ..checking import CheckRun, wants_judge
from ..config import QUALITY_METRICS
from ..engines import EngineError, RayUnavailable
from ..engines.local import WorkerLost
from ..errors import LoadError
from ..importers import IMPORTERS
from ..report.styled import Styled
from .calibration_floor import REQUIRE_CALIBRATION_OPTION, require_calibration
from .check_options import (
    JOBS_HELP,
    MAX_CHUNK_MB,
    SHARD_FORMATS,
    CheckOptions,
    config_and_subject,
    make_judge,
    refuse_blame_llm_without_a_model,
    refuse_judging_on_ray,
    refuse_what_cannot_go_together,
)
from .check_output import (
    Fanout,
    JunitSink,
    cannot_write_output,
    claim_output,
    errored,
    fail,
    judge_note,
    let_go,
    print_warnings,
    stdout_sink,
    write_summary,
)
from .env_options import env_options
from .numbers import Number
from .output import (
    EXIT_ERRORED,
    FORMAT_OPTION,
    MAX_FAILURES_OPTION,
    SHOW_OPTION,
    check_exit_code,
    claim_report_paths,
    fail_with_load_error,
    print_text,
)
from .progress import Progress
from .replay import REPLAY_OPTION, refuse_replay_without_cache
from .telemetry_out import TelemetryOut, telemetry_options


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
@click.option(
    "--blame", type=click.Choice(BLAME_MODES), default="evidence", show_default=True,
    help="evidence: each conversation that did not pass says whose fault it was (agent, user, environment, judge or "
    "unknown) and its decisive turn, decided from its checks, its user's review and the faults injected. llm: also ask the "
    "evaluation model where the evidence placed nothing (its cited turn checked; it may answer unknown). off: no blame.",
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
    refuse_what_cannot_go_together(o)
    config, subject = config_and_subject(o)
    refuse_judging_on_ray(o, config, subject)
    refuse_blame_llm_without_a_model(o, config)
    lock = claim_output(o.output_dir, o.output_format) if o.output_dir else None
    try:
        _check(o, config, subject)
    finally:
        if lock is not None:
            let_go(lock, o.output_dir)  # type: ignore[arg-type]  # a lock is taken only with --output


def _check(o: CheckOptions, config, subject) -> None:
    """Judge, with the output folder (if any) held; the reports written as the results go by are removed unless whole."""
    claim_report_paths([o.junit_path], "report", o.output_format)  # --html and --otlp-out are opened before the batch
    judge = None
    if o.engine == "local":
        wanted = wants_judge(subject, o.no_judge, o.metrics) or o.blame == "llm"
        judge = make_judge(config, o.no_cache, o.cache_dir, o.where, o.output_format, o.replay) if wanted else None
        require_calibration(judge, config.root if config else None, o.min_kappa)
    reports: list = []
    try:
        if o.html_path:
            from .html_file import HtmlReportFile  # its renderer, only when a page is asked for

            reports.append(HtmlReportFile(o.html_path))
        telemetry = TelemetryOut.of(o.otlp_out, o.openinference_out, o.otlp_endpoint)
        reports += [telemetry] if telemetry is not None else []
        run = _run(o, config, subject, judge, html=bool(o.html_path))
        _judge_and_write(run, o, ([JunitSink(o.junit_path, subject)] if o.junit_path else []) + reports)
    except LoadError as err:
        fail_with_load_error(err, o.output_format)
    finally:
        for report in reports:
            report.discard()  # a report not committed (bad input, an interrupt) is removed, never left half-written


def _run(o: CheckOptions, config, subject, judge, html: bool) -> CheckRun:
    return CheckRun(
        subject, o.conversations, jobs=o.jobs, engine=o.engine, ray_address=o.ray_address, judge=judge, no_judge=o.no_judge,
        metrics=QUALITY_METRICS if o.metrics else (config.evaluation.metrics if config and o.engine == "local" else ()),
        input_format=o.input_format, strict=o.strict, stream=o.stream, chunk_bytes=o.chunk_bytes, whole=bool(o.junit_path),
        review_user=o.review_user, transcript=html, blame=o.blame,
    )


def _judge_and_write(run: CheckRun, o: CheckOptions, reports: list) -> None:
    """Judge in order and write as the results come; bad input stops it with exit 2, one JSON document in JSON."""
    sink = None
    try:
        if o.output_dir:
            _to_shards(run, o, Fanout(None, reports) if reports else None)
        else:
            sink = stdout_sink(run.tally, o.output_format, show_all=o.show == "all", max_failures=o.max_failures)
            with Progress("conversations") as progress:
                run.write(Fanout(sink, reports, progress))
        if run.tally.counts.total == 0:
            raise LoadError.one("no conversations found" if o.engine == "ray" else "no conversation files found (.json, .jsonl)", " ".join(o.conversations))
        for report in reports:
            report.commit()
    except LoadError as err:  # bad input: before anything was written, or (streaming) where it stands
        fail(err, sink, o.output_format)
    except WorkerLost as err:
        errored(str(err), sink, o.output_format)
    except RayUnavailable as err:
        raise click.UsageError(str(err)) from None
    except EngineError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(EXIT_ERRORED) from None
    if sink is not None:
        sink.finish()
    if o.output_dir:
        write_summary(run.tally, o.output_dir, o.output_format)
    elif o.output_format != "json":
        print_warnings(run.tally)
    if o.output_format != "json" and o.engine == "local":
        note = judge_note(run.subject, run.judge, run.no_judge)
        if note:
            print_text(Styled(f"{note}\n", "dim"))
    raise SystemExit(check_exit_code(run.tally.counts, run.tally.undecided))


def _to_shards(run: CheckRun, o: CheckOptions, sink: Fanout | None) -> None:
    try:
        run.to_shards(o.output_dir, o.shard_format, sink)  # type: ignore[arg-type]  # shards are written only with --output
    except OSError as err:  # a shard could not be written (the folder's place is a file, a full disk, ...)
        cannot_write_output(err, o.output_dir, o.output_format)
