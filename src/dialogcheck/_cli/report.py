"""`dialogcheck report`: print a results folder, or render it as HTML or JUnit; and the report writing `run` and `check` share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import orjson

from ..errors import LoadError
from ..report.batch_text import render_summary
from ..report.data import conversation_dict
from ..report.html import render_html
from ..report.json import dumps
from ..report.junit import render_junit
from ..results.atomic import write_atomic
from ..engines.shards import SUMMARY_NAME as SHARD_SUMMARY
from ..results.files import PLAN, summary_document
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
    return _check_page(runs, events)


def _check_page(runs: list[dict[str, Any]], events: Mapping[tuple[str, int], Sequence[Mapping[str, Any]]]) -> str:
    summary = summary_document(runs, {})
    for row in summary["scenarios"]:
        row.update(flaky=False, pass_hat_k={})  # different conversations, not repeated runs
    return render_html(summary, runs, events, title="dialogcheck check", noun="conversation")


@dataclass(frozen=True)
class CheckOutput:
    """A folder `check --output` wrote: its summary, and each conversation's result (the JSON of its shard line)."""

    summary: dict[str, Any]
    results: list[dict[str, Any]]
    shards: int


def _shard_rows(path: Path) -> list[dict[str, Any]]:
    try:
        if path.suffix == ".jsonl":
            return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        from ..engines.parquet import _pyarrow

        pa = _pyarrow(str(path))
        return [orjson.loads(value) for value in pa.parquet.read_table(path, columns=["result"]).column("result").to_pylist()]
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not a result shard: invalid JSON ({err.msg})", str(path)) from None


def load_check_output(folder: Path) -> CheckOutput | None:
    """The folder `check --output` wrote (its summary.json and part-NNNNN shards), or None for another folder."""
    summary_path = folder / SHARD_SUMMARY
    shards = sorted(p for p in folder.glob("part-*") if p.suffix in (".jsonl", ".parquet") and p.is_file())
    if (folder / PLAN).exists() or not summary_path.is_file() or not shards:
        return None
    try:
        summary = orjson.loads(summary_path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"invalid JSON: {err.msg}", str(summary_path)) from None
    if not isinstance(summary, dict) or not {"conversations", "passed", "failed", "errored"} <= summary.keys():
        raise LoadError.one("not the summary of `check --output`: `conversations`, `passed`, `failed` and `errored` are needed", str(summary_path))
    return CheckOutput(summary, [row for shard in shards for row in _shard_rows(shard)], len(shards))


def _report_check_output(found: CheckOutput, folder: str, html_path: str | None, junit_path: str | None, output_format: str) -> None:
    """`report` of a `check --output` folder: its summary, or the HTML and JUnit of its results (no transcripts:
    shards keep the verdicts and checks, not the events)."""
    from ..report.junit import render_junit_rows
    from .check_output import summary_text, warnings_text

    written = []
    try:
        if junit_path:
            write_atomic(junit_path, render_junit_rows([(row.get("scenario") or row["subject"], row) for row in found.results]))
            written.append(junit_path)
        if html_path:
            runs = [
                {**row, "scenario": {"slug": row.get("scenario") or row["subject"], "name": row["subject"], "type": None, "tags": []},
                 "run": number, "error": None, "transcript": []}
                for number, row in enumerate(found.results, 1)
            ]
            write_atomic(html_path, _check_page(runs, {}))
            written.append(html_path)
    except OSError as err:
        raise LoadError.one(f"cannot write the report: {err.strerror or err}", str(err.filename or junit_path or html_path)) from None
    if written and output_format == "json":
        print_json(dumps({"results": folder, "written": written}))
    elif written:
        click.echo("".join(f"wrote {path}\n" for path in written), nl=False)
    elif output_format == "json":
        print_json(dumps(found.summary))
    else:
        click.echo(summary_text(found.summary, found.shards, folder), nl=False)
        click.echo(warnings_text(found.summary.get("warnings", ())), nl=False, err=True)
    raise SystemExit(batch_exit_code(found.summary))


@click.command()
@click.argument("results_dir", type=click.Path())
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the HTML report here.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML here.")
@FORMAT_OPTION
def report(results_dir: str, html_path: str | None, junit_path: str | None, output_format: str) -> None:
    """Print the summary of RESULTS_DIR (a folder `dialogcheck run` or `check --output` wrote), or render it with --html / --junit.

    The exit code is the batch's: 0 all passed, 1 a run failed, 3 a run errored; 2 for a missing or broken folder.
    """
    try:
        found = load_check_output(Path(results_dir))
        if found is not None:
            _report_check_output(found, results_dir, html_path, junit_path, output_format)
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
