"""`dialogcheck report`: print a results folder, or render it as HTML or JUnit; and the report writing `run` and `check` share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from ..errors import LoadError
from ..report.batch_text import render_summary
from ..report.data import conversation_dict
from ..report.html import render_html
from ..report.json import dumps
from ..report.junit import render_junit
from ..results.atomic import write_atomic
from ..results.files import summary_document
from ..results.load import load_results
from .output import (
    FORMAT_OPTION,
    batch_exit_code,
    fail_with_load_error,
    print_json,
    print_text,
)

JUNIT, HTML = "junit.xml", "report.html"


def write_reports(
    summary: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    events: Mapping[tuple[str, int], Sequence[Mapping[str, Any]]],
    junit_paths: Iterable[str | Path] = (),
    html_paths: Iterable[str | Path] = (),
) -> list[str]:
    """Render once, write each copy atomically; the paths written, in order."""
    written = []
    junit_paths, html_paths = list(junit_paths), list(html_paths)
    if junit_paths:
        xml = render_junit(summary, runs)
        for path in junit_paths:
            write_atomic(path, xml)
            written.append(str(path))
    if html_paths:
        page = render_html(summary, runs, events)
        for path in html_paths:
            write_atomic(path, page)
            written.append(str(path))
    return written


def check_html(results, conversations, subject) -> str:
    """`check --html`: each checked conversation drawn as an entry of its scenario or SOP."""
    several = getattr(subject, "scenarios", None)  # a ScenarioSet: each conversation's own scenario
    runs, events = [], {}
    for number, (result, conversation) in enumerate(zip(results, conversations), 1):
        said = [
            {"role": "user" if e.kind == "user" else "agent", "text": e.text}
            for e in conversation.events
            if e.kind in ("user", "bot") and e.text
        ]
        one = several[result.scenario] if several is not None else subject
        slug = getattr(one, "slug", None) or getattr(one, "id", None) or "conversations"
        scenario = {"slug": slug, "name": result.subject, "type": getattr(one, "type", None), "tags": list(getattr(one, "tags", ()))}
        runs.append({**conversation_dict(result), "scenario": scenario, "run": number, "source": result.source, "error": None, "transcript": said})
        events[(slug, number)] = [dict(e) for e in conversation.raw_events]
    summary = summary_document(runs, {})
    for row in summary["scenarios"]:
        row.update(flaky=False, pass_hat_k={})  # different conversations, not repeated runs
    return render_html(summary, runs, events, title="dialogcheck check", noun="conversation")


@click.command()
@click.argument("results_dir", type=click.Path())
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the HTML report here.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML here.")
@FORMAT_OPTION
def report(results_dir: str, html_path: str | None, junit_path: str | None, output_format: str) -> None:
    """Print the summary of RESULTS_DIR (a folder `dialogcheck run` wrote), or render it with --html / --junit.

    The exit code is the batch's: 0 all passed, 1 a run failed, 3 a run errored; 2 for a missing or broken folder.
    """
    try:
        loaded = load_results(results_dir)
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if html_path or junit_path:
        written = write_reports(loaded.summary, loaded.runs, loaded.events, [junit_path] if junit_path else [], [html_path] if html_path else [])
        if output_format == "json":
            print_json(dumps({"results": str(results_dir), "written": written}))
        else:
            click.echo("".join(f"wrote {path}\n" for path in written), nl=False)
    elif output_format == "json":
        print_json(dumps(loaded.summary))
    else:
        print_text(render_summary(loaded.summary))
    raise SystemExit(batch_exit_code(loaded.summary))
