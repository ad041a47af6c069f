"""`dialogcheck`: the command group, and the one place exceptions become exit codes."""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..report.json import dumps
from .check import check
from .import_cmd import import_cmd
from .output import EXIT_BAD_INPUT, print_json
from .report import report
from .run import run
from .validate import validate


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dialogcheck")
def cli() -> None:
    """Test conversational agents: deterministic checks over recorded events, plus LLM-judged criteria."""


cli.add_command(validate)
cli.add_command(check)
cli.add_command(run)
cli.add_command(report)
cli.add_command(import_cmd)


def _wants_json(args: list[str]) -> bool:
    return any(a == "--format=json" for a in args) or any(
        a == "--format" and b == "json" for a, b in zip(args, args[1:])
    )


def main(args: list[str] | None = None) -> None:
    """Run the CLI; a usage error is exit 2, as JSON too when `--format json` was asked for."""
    args = sys.argv[1:] if args is None else args
    try:
        cli.main(args, prog_name="dialogcheck", standalone_mode=False)
    except click.UsageError as err:
        if _wants_json(args):
            print_json(dumps({"error": {"message": err.format_message(), "file": None, "line": None, "column": None}}))
        else:
            err.show()
        raise SystemExit(EXIT_BAD_INPUT) from None
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        raise SystemExit(130) from None
    except click.ClickException as err:
        err.show()
        raise SystemExit(err.exit_code) from None
