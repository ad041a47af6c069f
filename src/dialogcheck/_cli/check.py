"""`dialogcheck check`: judge recorded conversations against a scenario's goals or an SOP."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
from rich.text import Text

from ..batch import iter_results
from ..checks.base import Outcome
from ..config import QUALITY_METRICS, ProjectConfig, find_config, load_config
from ..errors import LoadError
from ..evaluate import ConversationResult, judge_requests
from ..events.load import conversation_files, iter_conversations
from ..importers import IMPORTERS, iter_imported_conversations
from ..llm.base import LLMError
from ..report import json as json_report
from ..report import text as text_report
from ..scenario.load import load_scenario
from .output import (
    FORMAT_OPTION,
    exit_code,
    fail_with_load_error,
    print_json,
    print_text,
)

#: Inputs larger than this are judged as they are read instead of being read whole first.
STREAM_ABOVE_BYTES = 64 * 2**20


@dataclass
class Tally:
    """What the exit code needs, counted as results stream past."""

    verdicts: list[Outcome] = field(default_factory=list)
    any_error: bool = False

    @property
    def total(self) -> int:
        return len(self.verdicts)

    def add(self, result: ConversationResult, kept: list | None) -> None:
        self.verdicts.append(result.verdict)
        self.any_error = self.any_error or Outcome.ERROR in result.check_outcomes
        if kept is not None:
            kept.append(result)


def stream_text(results: Iterator[ConversationResult], tally: Tally, kept: list | None) -> None:
    """One block per conversation as it is judged, then the batch line when there were several."""
    for result in results:
        if tally.total:
            print_text(Text("\n"))
        tally.add(result, kept)
        print_text(text_report.render_conversation(result))
    if tally.total > 1:
        print_text(text_report.render_tally(tally.verdicts))


def stream_json(results: Iterator[ConversationResult], tally: Tally, kept: list | None) -> None:
    """One conversation: its document. Several: `{"conversations": [...], "summary": {...}}`, written as they come."""
    first = next(results, None)
    if first is None:
        return
    tally.add(first, kept)
    second = next(results, None)
    if second is None:
        print_json(json_report.render_check([first]))
        return
    print_json('{"conversations": [\n' + json_report.conversation_json(first))
    for result in itertools.chain([second], results):
        tally.add(result, kept)
        print_json(",\n" + json_report.conversation_json(result))
    print_json('\n], "summary": ' + json_report.tally_json(tally.verdicts) + "}\n")


def _config(subject_path: str, config_path: str | None) -> ProjectConfig | None:
    path = Path(config_path) if config_path else find_config(subject_path)
    return load_config(path) if path is not None else None


def _judge_note(subject, judge, no_judge: bool) -> str | None:
    """Say which checks were not judged, and why, so a skipped check is never mistaken for a pass."""
    count = len(judge_requests(subject))
    if not count or (judge is not None and not no_judge):
        return None
    why = "skipped (--no-judge)" if no_judge else "not judged: no judge configured (evaluation.llm in eval/conftest.yml)"
    return f"{count} LLM-judged check{'s' if count != 1 else ''} per conversation {why}"


def _write_reports(results, loaded, subject, junit_path, html_path, output_format) -> None:
    from ..report.junit import render_junit_check
    from ..results.atomic import write_atomic
    from .report import check_html

    try:
        if junit_path:
            write_atomic(junit_path, render_junit_check(results, subject))
        if html_path:
            write_atomic(html_path, check_html(results, loaded, subject))
    except OSError as err:
        fail_with_load_error(LoadError.one(f"cannot write the report: {err.strerror or err}", str(err.filename or junit_path or html_path)), output_format)


@click.command()
@click.option("--scenario", "scenario_path", type=click.Path(), help="Scenario file whose goals judge the conversations.")
@click.option("--sop", "sop_path", type=click.Path(), help="SOP file to apply to each conversation.")
@click.option("--config", "config_path", type=click.Path(), help="eval/conftest.yml to take the judge from (default: the project's).")
@click.option("--no-judge", is_flag=True, help="Skip LLM-judged checks (criteria, llm_judge) instead of reporting them as errors.")
@click.option("--metrics", is_flag=True, help="Also score the quality metrics (never part of the verdict).")
@click.option("--no-cache", is_flag=True, help="Ask the LLM again instead of reusing cached answers.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Folder of the LLM answer cache.")
@click.option("--input-format", type=click.Choice(list(IMPORTERS)), help="Read CONVERSATIONS in this format (as `dialogcheck import --from` does).")
@click.option("--stream", is_flag=True, help="Judge conversations as they are read, whatever the input size (memory stays flat).")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Also write an HTML report here.")
@FORMAT_OPTION
@click.argument("conversations", nargs=-1, required=True, type=click.Path())
def check(
    scenario_path: str | None,
    sop_path: str | None,
    config_path: str | None,
    no_judge: bool,
    metrics: bool,
    no_cache: bool,
    cache_dir: str | None,
    input_format: str | None,
    junit_path: str | None,
    html_path: str | None,
    stream: bool,
    output_format: str,
    conversations: tuple[str, ...],
) -> None:
    """Judge recorded CONVERSATIONS (files or folders) against --scenario or --sop.

    Exit code 0 when every conversation passed, 1 when a check failed, 2 for
    bad input, 3 when a check errored (for example, no judge configured).
    """
    if (scenario_path is None) == (sop_path is None):
        raise click.UsageError("give exactly one of --scenario or --sop")
    try:
        if scenario_path is not None:
            subject = load_scenario(scenario_path)
        else:
            from ..sop.load import load_sop

            subject = load_sop(sop_path)
        config = _config(scenario_path or sop_path, config_path)
        files = conversation_files(conversations)
        source = iter_imported_conversations(files, input_format) if input_format else iter_conversations(files)
        # Read small inputs whole, so bad input anywhere stops the check before anything is judged;
        # stream big ones (or on request), so memory stays flat.
        if not (stream or sum(f.stat().st_size for f in files) > STREAM_ABOVE_BYTES) or html_path:
            source = list(source)
            if not source:
                raise LoadError.one("no conversation files found (.json, .jsonl)", " ".join(conversations))
    except LoadError as err:
        fail_with_load_error(err, output_format)
    judge = None
    if not no_judge and judge_requests(subject) or metrics:
        try:
            from ..judge.setup import judge_from_config

            judge = judge_from_config(config, use_cache=not no_cache, cache_dir=Path(cache_dir) if cache_dir else None)
        except LLMError as err:
            where = str(config.path) if config and config.path else (scenario_path or sop_path)
            fail_with_load_error(LoadError.one(str(err), where), output_format)
    wanted = QUALITY_METRICS if metrics else (config.evaluation.metrics if config else ())
    results = iter_results(subject, source, judge=judge, no_judge=no_judge, metrics=wanted)
    kept: list[ConversationResult] | None = [] if (junit_path or html_path) else None
    tally = Tally()
    try:
        if output_format == "json":
            stream_json(results, tally, kept)
        else:
            stream_text(results, tally, kept)
    except LoadError as err:  # a bad record met while streaming a big input
        fail_with_load_error(err, output_format)
    if tally.total == 0:
        fail_with_load_error(LoadError.one("no conversation files found (.json, .jsonl)", " ".join(conversations)), output_format)
    if output_format != "json":
        note = _judge_note(subject, judge, no_judge)
        if note:
            print_text(Text(f"{note}\n", style="dim"))
    if kept is not None:
        _write_reports(kept, source, subject, junit_path, html_path, output_format)
    raise SystemExit(exit_code(tally.verdicts, tally.any_error))

