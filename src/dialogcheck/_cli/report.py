"""`dialogcheck report`: print a results folder (of `run`, or of `check --output`), or render it as HTML or JUnit.

The folder is read back into typed results (`results.load`) and drawn by the
same renderers `run` and `check` use, so a report of a folder says what the
command that wrote it said.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import LoadError
from ..report.batch_files import write_reports
from ..report.batch_text import render_summary
from ..report.html import render_check_html
from ..report.json import dumps
from ..report.junit import render_junit_check
from ..report.text import render_output_summary, render_warnings
from ..results.atomic import write_atomic
from ..results.load import CheckOutput, load_check_output, load_results
from .output import FORMAT_OPTION, MAX_FAILURES_OPTION, SHOW_OPTION, check_exit_code, exit_code_of, fail_with_load_error, print_json, print_text


def _write(folder: str, output_format: str, render) -> None:
    """Write the reports asked for (`render` writes them and names them); a report that cannot be written is bad input."""
    try:
        written = render()
    except OSError as err:
        raise LoadError.of_os("cannot write the report", err, str(err.filename or folder)) from None
    if output_format == "json":
        print_json(dumps({"results": folder, "written": written}))
    else:
        click.echo("".join(f"wrote {path}\n" for path in written), nl=False)


def _check_output_reports(found: CheckOutput, junit_path: str | None, html_path: str | None) -> list[str]:
    """JUnit and HTML of a `check --output` folder: the HTML is the page `check --html` wrote of the same results."""
    written = []
    if junit_path:
        write_atomic(junit_path, render_junit_check(list(found.results())))
        written.append(junit_path)
    if html_path:
        write_atomic(html_path, render_check_html(found.results()))
        written.append(html_path)
    return written


def _report_check_output(found: CheckOutput, folder: str, html_path: str | None, junit_path: str | None, output_format: str) -> None:
    """What `check --output` printed (drawn from its summary.json, once the shards agree with it), or its reports
    (made from the shards, whose reading ends in the same agreement check before anything is written)."""
    if html_path or junit_path:
        _write(folder, output_format, lambda: _check_output_reports(found, junit_path, html_path))
        raise SystemExit(check_exit_code(found.counts, found.any_error))
    found.verify()
    if output_format == "json":
        print_json(dumps(found.summary))
    else:
        print_text(render_output_summary(found.counts, found.stats(), found.shards, folder))
        print_text(render_warnings(found.summary.get("warnings", ())), stderr=True)
    raise SystemExit(check_exit_code(found.counts, found.any_error))


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
    try:
        found = load_check_output(Path(results_dir))
        if found is not None:
            _report_check_output(found, results_dir, html_path, junit_path, output_format)
        batch = load_results(results_dir)
        if html_path or junit_path:
            _write(results_dir, output_format, lambda: write_reports(batch, [junit_path] if junit_path else [], [html_path] if html_path else []))
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if not (html_path or junit_path):
        if output_format == "json":
            from ..results.codec import summary_document

            print_json(dumps(summary_document(batch)))
        else:
            print_text(render_summary(batch, show_all=show == "all", max_failures=max_failures))
    raise SystemExit(exit_code_of(batch.worst))
