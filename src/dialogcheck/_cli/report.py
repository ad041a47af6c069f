"""`dialogcheck report`: print a results folder (of `run`, or of `check --output`), or render it as HTML or JUnit.

What it says is `commands.report`'s; this module parses options, prints, and exits with the batch's code.
"""

from __future__ import annotations

import click

from ..commands.report import report as summary_of, report_files
from ..errors import LoadError
from ..report.json import dumps
from .output import FORMAT_OPTION, MAX_FAILURES_OPTION, SHOW_OPTION, fail_with_load_error, print_json, print_text


@click.command()
@click.argument("results_dir", type=click.Path())
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the HTML report here.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML here.")
@SHOW_OPTION
@MAX_FAILURES_OPTION
@FORMAT_OPTION
def report(results_dir: str, html_path: str | None, junit_path: str | None, show: str, max_failures: int, output_format: str) -> None:
    """Print the summary of RESULTS_DIR (a folder `dialogcheck run` or `check --output` wrote), or render it with --html / --junit.

    The exit code is the batch's: 0 all passed, 1 a run failed, 3 a run errored or was suspect; 2 for a missing or broken folder.
    """
    files = bool(html_path or junit_path)
    try:
        said = report_files(results_dir, html=html_path, junit=junit_path) if files else summary_of(results_dir, show_all=show == "all", max_failures=max_failures)
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if output_format == "json":
        print_json(dumps(said.document))
    elif files:
        click.echo(said.text.plain, nl=False)
    else:
        print_text(said.text)
        if said.notes.pieces:
            print_text(said.notes, stderr=True)
    raise SystemExit(said.exit_code)
