"""`dialogcheck compare BASE NEW`: what changed between two batches, and whether it is more than noise.

Reads both sides through the library (`commands.compare`) and prints its
answer; `--fail-on regression` makes a significant regression exit 1.
"""

from __future__ import annotations

import click

from ..commands.compare import compare as comparison_of
from ..compare import ALPHA, MissingStats
from ..errors import LoadError
from ..pairing import compile_pair
from ..report.compare_text import MAX_ROWS
from .numbers import Number
from .output import FORMAT_OPTION, fail_with_load_error, print_json, print_text


def _pattern(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            compile_pair(value)
        except ValueError as err:
            raise click.BadParameter(str(err), ctx, param) from None
    return value


@click.command()
@click.argument("base", type=click.Path())
@click.argument("new", type=click.Path())
@click.option(
    "--match", metavar="REGEX", callback=_pattern,
    help="Pair by what REGEX's one group captures from each scenario slug or conversation id, e.g. 'task-(\\d+)'.",
)
@click.option(
    "--alpha", type=Number(0, 1, min_open=True, max_open=True), default=ALPHA, show_default=True,
    help="Significance level of the verdict.",
)
@click.option("--fail-on", type=click.Choice(["regression"]), help="Exit 1 when NEW is significantly worse than BASE.")
@click.option("--max-rows", type=click.IntRange(min=0), default=MAX_ROWS, show_default=True, help="Rows of each list in text output.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write the comparison as an HTML page here.")
@FORMAT_OPTION
def compare(base: str, new: str, match: str | None, alpha: float, fail_on: str | None, max_rows: int, html_path: str | None, output_format: str) -> None:
    """What changed between two batches BASE and NEW: flips per key and check, a paired test, a verdict.

    BASE and NEW are each a folder `dialogcheck run` or `check --output` wrote, or a file of
    `check --format json` output. Runs pair by scenario slug, conversations by id (or by --match);
    several of one key on a side are repeated runs. Errored runs are left out of the pass rates.
    Exit code 0, or with --fail-on regression: 1 when the verdict is `regressed`, 3 when no key could
    be compared (every shared key's runs errored on a side); 2 for bad input.
    """
    try:
        said = comparison_of(base, new, match=match, alpha=alpha, max_rows=max_rows, fail_on=fail_on, html=html_path)
    except MissingStats as err:
        raise click.UsageError(str(err)) from None
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if output_format == "json":
        for piece in said.json():
            print_json(piece)
    else:
        print_text(said.text)
    if said.notes.pieces:
        click.echo(said.notes.plain, err=True, nl=False)
    raise SystemExit(said.exit_code)
