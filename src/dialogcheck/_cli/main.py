"""`dialogcheck`: the command group."""

from __future__ import annotations

import click

from .. import __version__
from .check import check
from .validate import validate


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dialogcheck")
def cli() -> None:
    """Test conversational agents: deterministic checks over recorded events, plus LLM-judged criteria."""


cli.add_command(validate)
cli.add_command(check)


def main() -> None:
    cli(prog_name="dialogcheck")
