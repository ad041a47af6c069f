"""`dialogcheck check`: judge recorded conversations against a scenario's goals or an SOP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from ..checks.base import Outcome
from ..config import QUALITY_METRICS, ProjectConfig, find_config, load_config
from ..errors import LoadError
from ..evaluate import ConversationResult, evaluate_batch, judge_requests
from ..events.load import iter_conversations
from ..importers import IMPORTERS, iter_imported_conversations
from ..llm.base import LLMError
from ..report import json as json_report
from ..report import text as text_report
from ..scenario.load import load_scenario
from .output import FORMAT_OPTION, exit_code, fail_with_load_error, print_json, print_text


def _any_error(results: list[ConversationResult]) -> bool:
    return any(Outcome.ERROR in result.check_outcomes for result in results)


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
        read = iter_imported_conversations(conversations, input_format) if input_format else iter_conversations(conversations)
        loaded = list(read)
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if not loaded:
        fail_with_load_error(LoadError.one("no conversation files found (.json, .jsonl)", " ".join(conversations)), output_format)
    judge = None
    if not no_judge and judge_requests(subject) or metrics:
        try:
            from ..judge.setup import judge_from_config

            judge = judge_from_config(config, use_cache=not no_cache, cache_dir=Path(cache_dir) if cache_dir else None)
        except LLMError as err:
            where = str(config.path) if config and config.path else (scenario_path or sop_path)
            fail_with_load_error(LoadError.one(str(err), where), output_format)
    wanted = QUALITY_METRICS if metrics else (config.evaluation.metrics if config else ())
    results = asyncio.run(evaluate_batch(subject, loaded, judge=judge, no_judge=no_judge, metrics=wanted))
    _write_reports(results, loaded, subject, junit_path, html_path, output_format)
    if output_format == "json":
        print_json(json_report.render_check(results))
    else:
        text = text_report.render_check(results)
        note = _judge_note(subject, judge, no_judge)
        if note:
            text.append(f"{note}\n", style="dim")
        print_text(text)
    raise SystemExit(exit_code((r.verdict for r in results), _any_error(results)))
