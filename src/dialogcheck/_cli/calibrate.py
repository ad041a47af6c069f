"""`dialogcheck calibrate`: the configured judge against human labels, and the calibration file it earns
(`commands.calibrate`)."""

from __future__ import annotations

import sys

import click

from ..errors import LoadError
from ..report.json import dumps
from .env_options import env_options
from .output import FORMAT_OPTION, fail_with_load_error, print_json, print_text
from .replay import REPLAY_OPTION, refuse_replay_without_cache


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
    from ..commands.calibrate import calibrate as calibration

    refuse_replay_without_cache(replay, no_cache)
    try:
        said = calibration(scenario_path, labels_path, config_path=config_path, use_cache=not no_cache, cache_dir=cache_dir, replay=replay)
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if output_format == "json":
        print_json(dumps(said.document))
    else:
        print_text(said.text)
    if said.exit_code:
        sys.exit(said.exit_code)  # the judge broke on some pair: its figures leave those out
