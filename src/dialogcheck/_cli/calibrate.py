"""`dialogcheck calibrate`: the configured judge against human labels, and the calibration file it earns."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import LoadError
from ..report.json import dumps
from ..report.styled import Styled
from .env_options import env_options
from .output import EXIT_ERRORED, FORMAT_OPTION, fail_with_load_error, print_json, print_text
from .replay import REPLAY_OPTION, refuse_replay_without_cache

NO_JUDGE = "calibrate needs a judge: set `evaluation.llm` in the project's eval/conftest.yml (or pass --config)"


@click.command()
@click.option("--scenario", "scenario_path", type=click.Path(), required=True, help="Scenario whose criteria were labelled.")
@click.option(
    "--labels", "labels_path", type=click.Path(), required=True,
    help='JSONL, one {"source", "criterion", "label": "pass"|"fail"} a line; source as `check --format json` prints it, '
    "or a results folder's <slug>/run_N.",
)
@click.option("--config", "config_path", type=click.Path(), help="eval/conftest.yml to take the judge from (default: the project's).")
@click.option("--no-cache", is_flag=True, help="Ask the LLM again instead of reusing cached answers.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Folder of the LLM answer cache.")
@REPLAY_OPTION
@FORMAT_OPTION
@env_options
def calibrate(scenario_path, labels_path, config_path, no_cache, cache_dir, replay, output_format) -> None:
    """The judge's agreement with human labels: Cohen's kappa, the confusion matrix, where they disagree.

    Runs the configured judge on every labelled pair and writes a calibration
    file (eval/calibration/<hash>.json) bound to the judge's provider, model,
    options and prompt template, which `check` and `run` read with
    --require-calibration MIN_KAPPA. Exit code 3 when the judge broke on some
    pair (its figures leave those out), 2 for bad input.
    """
    from ..calibration import binding_of, calibration_document, calibration_folder, conversation_of, judge_pairs, read_labels, write_calibration
    from ..checking import load_subject
    from ..config import find_config, load_config
    from ..judge.setup import judge_from_config
    from ..llm.base import LLMError
    from ..scenario.model import Scenario

    refuse_replay_without_cache(replay, no_cache)
    try:
        path = Path(config_path) if config_path else find_config(scenario_path)
        config = load_config(path) if path is not None else None
        scenario = load_subject([scenario_path], None, None)
        if not isinstance(scenario, Scenario):
            raise LoadError.one("calibrate takes one scenario file: its criteria are what was labelled", scenario_path)
        labels = read_labels(labels_path, scenario)
        judge = judge_from_config(config, use_cache=not no_cache, cache_dir=Path(cache_dir) if cache_dir else None, replay=replay)
        if judge is None or config is None:
            raise LoadError.one(NO_JUDGE, str(path or scenario_path))
        conversations = {label.source: conversation_of(label, labels_path, config.root) for label in labels}
        calibration_folder(config.root)  # a link out of the project is refused before the judge is asked anything
    except LoadError as err:
        fail_with_load_error(err, output_format)
    except LLMError as err:
        fail_with_load_error(LoadError.one(str(err), str(config_path or scenario_path)), output_format)
    pairs = asyncio.run(judge_pairs(judge, scenario, labels, conversations))
    try:
        document = calibration_document(pairs, binding_of(judge))
        written = write_calibration(config.root, document)
    except LoadError as err:  # scikit-learn missing, or the file cannot be written
        fail_with_load_error(err, output_format)
    except OSError as err:
        fail_with_load_error(LoadError.of_os("cannot write the calibration", err, str(err.filename or config.root)), output_format)
    if output_format == "json":
        print_json(dumps({**document, "calibration_file": str(written)}))
    else:
        print_text(render_calibration(document, str(written)))
    if any(pair["judge"] == "error" for pair in document["undecided"]):
        sys.exit(EXIT_ERRORED)  # the judge broke on some pair: its figures leave those out


def _figure(value: Any, pattern: str) -> str:
    return "-" if value is None else format(value, pattern)


def _summary_line(name: str, figures: dict[str, Any]) -> str:
    c = figures["confusion"]
    return (
        f"{name}: {figures['decided']}/{figures['pairs']} decided, agreement {_figure(figures['agreement'], '.0%')}, "
        f"kappa {_figure(figures['kappa'], '.2f')}, human pass rate {_figure(figures['base_rate'], '.0%')}; "
        f"judge pass/human pass {c['judge_pass_human_pass']}, judge pass/human fail {c['judge_pass_human_fail']}, "
        f"judge fail/human pass {c['judge_fail_human_pass']}, judge fail/human fail {c['judge_fail_human_fail']}\n"
    )


def render_calibration(document: dict[str, Any], written: str) -> Styled:
    """The text of `calibrate`: overall, per criterion, then the pairs left undecided and those in disagreement."""
    from .._shown import shown

    text = Styled(_summary_line("overall", document), "bold")
    for criterion, figures in document["criteria"].items():
        text.append("  " + shown(_summary_line(f"criterion {criterion!r}", figures).rstrip("\n")) + "\n")
    for title, key in (("undecided by the judge", "undecided"), ("judge and human disagree", "disagreements")):
        if document[key]:
            text.append(f"{title}:\n", "bold")
        for pair in document[key]:
            line = f"  {pair['source']} {pair['criterion']!r}: human {pair['human']}, judge {pair['judge']}: {pair['rationale']}"
            text.append(shown(line) + "\n")
    text.append(f"calibration file: {shown(written)}\n", "dim")
    return text
