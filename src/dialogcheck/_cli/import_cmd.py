"""`dialogcheck import --from FORMAT FILE`: convert another tool's logs into native events (`commands.imports`).

The converted lines go to the output file, or to stdout, where the summary
line then goes to stderr (and the JSON summary nowhere: stdout holds the data).
"""

from __future__ import annotations

import sys

import click

from ..commands.imports import DERIVED, import_logs
from ..errors import LoadError
from ..importers import IMPORTERS
from ..report.json import dumps
from .output import FORMAT_OPTION, fail_with_load_error, print_json, print_text


@click.command("import")
@click.option("--from", "fmt", required=True, type=click.Choice(list(IMPORTERS)), help="Format of FILE.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), help="File to write (default, or -: stdout).")
@click.option(
    "--derive-scenarios", "scenarios_dir", type=click.Path(file_okay=False),
    help="tau-bench and tau2 only: also write one scenario per task into this folder, its goals the task's expectations.",
)
@FORMAT_OPTION
@click.argument("file", type=click.Path())
def import_cmd(fmt: str, output: str | None, scenarios_dir: str | None, output_format: str, file: str) -> None:
    """Convert FILE from another tool's format into native events (JSONL, one conversation a line).

    Exit code 0 when everything converted, 2 for bad input (nothing is written).
    """
    if scenarios_dir is not None and fmt not in DERIVED:
        raise click.UsageError("--derive-scenarios works only with --from tau-bench or --from tau2")
    if output == "-":  # the usual name of stdout, as `check` reads `-` as stdin
        output = None
    try:
        said = import_logs(file, fmt, output=output, scenarios_dir=scenarios_dir, stdout=sys.stdout.buffer, as_json_document=output_format == "json")
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if output_format == "json":
        if output is not None:
            print_json(dumps(said.document))
        return
    print_text(said.text, stderr=output is None)
