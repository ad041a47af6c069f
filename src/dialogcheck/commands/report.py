"""`report`: what a results folder (of `run`, or of `check --output`) says, and its HTML and JUnit reports.

The folder is read back into typed results (`results.load`) and drawn by the same renderers `run` and `check`
use, so a report of a folder says what the command that wrote it said.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import LoadError
from ..report.styled import Styled
from ..results.load import CheckOutput, load_check_output, load_results
from .answer import Answer, check_exit_code, exit_code_of


def report(folder: str, *, show_all: bool = False, max_failures: int = 20, named: str | None = None) -> Answer:
    """The summary of `folder`: what `check --output` printed (drawn from its summary.json once the shards agree
    with it), or a batch's summary (`show_all` and `max_failures` as `run`'s text output takes them); the exit
    code is the batch's. `LoadError` for a missing or broken folder. The text names the folder as `named`
    (default: `folder`), the name its caller gave."""
    found = load_check_output(Path(folder))
    if found is not None:
        from ..report.check_text import render_output_summary, render_warnings

        found.verify()
        text = render_output_summary(found.counts, found.stats(), found.shards, named or folder)
        return Answer(found.summary, text, check_exit_code(found.counts, found.any_error), render_warnings(found.summary.get("warnings", ())))
    from ..report.run_text import render_summary
    from ..results.codec import summary_document

    batch = load_results(folder)
    return Answer(summary_document(batch), render_summary(batch, show_all=show_all, max_failures=max_failures), exit_code_of(batch.worst))


def report_files(folder: str, *, html: str | None = None, junit: str | None = None) -> Answer:
    """Write the HTML and JUnit reports of `folder` asked for (the HTML of a `check --output` folder is the page
    `check --html` wrote of the same results); the answer names them. A report that cannot be written, like a
    missing or broken folder, is a `LoadError`."""
    found = load_check_output(Path(folder))
    if found is not None:
        return _written(folder, lambda: _check_output_reports(found, junit, html), check_exit_code(found.counts, found.any_error))
    from ..report.batch_files import write_reports

    batch = load_results(folder)
    return _written(folder, lambda: write_reports(batch, [junit] if junit else [], [html] if html else []), exit_code_of(batch.worst))


def _written(folder: str, render: Callable[[], list[str]], exit_code: int) -> Answer:
    """The reports `render` writes, named; a report that cannot be written is bad input."""
    try:
        written = render()
    except OSError as err:
        raise LoadError.of_os("cannot write the report", err, str(err.filename or folder)) from None
    return Answer({"results": folder, "written": written}, Styled("".join(f"wrote {path}\n" for path in written)), exit_code)


def _check_output_reports(found: CheckOutput, junit_path: str | None, html_path: str | None) -> list[str]:
    """JUnit and HTML of a `check --output` folder, made from its shards, whose reading ends in the agreement check
    with its summary before anything is written."""
    from ..report.html import render_check_html
    from ..report.junit import render_junit_check
    from ..results.atomic import write_atomic

    written = []
    if junit_path:
        write_atomic(junit_path, render_junit_check(list(found.results())))
        written.append(junit_path)
    if html_path:
        write_atomic(html_path, render_check_html(found.results()))
        written.append(html_path)
    return written
