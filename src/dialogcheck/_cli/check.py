"""`dialogcheck check`: judge recorded conversations against a scenario's goals or an SOP."""

from __future__ import annotations

import click

from ..checks.base import Outcome
from ..errors import LoadError
from ..evaluate import ConversationResult, evaluate, evaluate_sop
from ..events.load import iter_conversations
from ..report import json as json_report
from ..report import text as text_report
from ..scenario.load import load_scenario
from .output import FORMAT_OPTION, exit_code, fail_with_load_error, print_json, print_text


def _any_error(results: list[ConversationResult]) -> bool:
    return any(Outcome.ERROR in result.check_outcomes for result in results)


@click.command()
@click.option("--scenario", "scenario_path", type=click.Path(), help="Scenario file whose goals judge the conversations.")
@click.option("--sop", "sop_path", type=click.Path(), help="SOP file to apply to each conversation.")
@click.option("--no-judge", is_flag=True, help="Skip LLM-judged checks (criteria, llm_judge) instead of reporting them as errors.")
@FORMAT_OPTION
@click.argument("conversations", nargs=-1, required=True, type=click.Path())
def check(scenario_path: str | None, sop_path: str | None, no_judge: bool, output_format: str, conversations: tuple[str, ...]) -> None:
    """Judge recorded CONVERSATIONS (files or folders) against --scenario or --sop.

    Exit code 0 when every conversation passed, 1 when a check failed, 2 for
    bad input, 3 when a check errored (for example, no judge configured).
    """
    if (scenario_path is None) == (sop_path is None):
        raise click.UsageError("give exactly one of --scenario or --sop")
    try:
        if scenario_path is not None:
            subject = load_scenario(scenario_path)
            judge_one = lambda c: evaluate(subject, c, no_judge=no_judge)  # noqa: E731
        else:
            from ..sop.load import load_sop

            sop = load_sop(sop_path)
            judge_one = lambda c: evaluate_sop(sop, c, no_judge=no_judge)  # noqa: E731
        loaded = list(iter_conversations(conversations))
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if not loaded:
        fail_with_load_error(LoadError.one("no conversation files found (.json, .jsonl)", " ".join(conversations)), output_format)
    results = [judge_one(conversation) for conversation in loaded]
    if output_format == "json":
        print_json(json_report.render_check(results))
    else:
        print_text(text_report.render_check(results))
    raise SystemExit(exit_code((r.verdict for r in results), _any_error(results)))
