"""Printing and exit codes, shared by every command. Only the CLI prints or exits."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import click
from rich.console import Console
from rich.text import Text

from ..checks.base import Outcome
from ..errors import LoadError
from ..report import json as json_report
from ..report import text as text_report

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_ERRORED = 0, 1, 2, 3

FORMAT_OPTION = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text for people, json for one JSON document on stdout.",
)


def console(stderr: bool = False) -> Console:
    """Colour on a terminal, plain when piped; never reads conversation text as markup."""
    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def print_text(text: Text, stderr: bool = False) -> None:
    """Through rich (colour) on a terminal; as plain text, much faster, when piped."""
    out = console(stderr)
    if out.is_terminal:
        out.print(text, end="")
    else:
        stream = sys.stderr if stderr else sys.stdout
        stream.write(text.plain)
        stream.flush()


def print_json(document: str) -> None:
    sys.stdout.write(document)
    sys.stdout.flush()


def fail_with_load_error(error: LoadError, output_format: str) -> None:
    """Report bad input and exit 2: JSON on stdout, or `path:line:col: message` lines on stderr."""
    if output_format == "json":
        print_json(json_report.render_load_error(error))
    else:
        print_text(text_report.render_load_error(error), stderr=True)
    raise SystemExit(EXIT_BAD_INPUT)


def exit_code(verdicts: Iterable[Outcome], any_error: bool) -> int:
    """1 if anything failed; else 3 if any check errored; else 0 (SPEC section 9)."""
    verdicts = list(verdicts)
    if Outcome.FAIL in verdicts:
        return EXIT_FAILED
    if any_error or Outcome.ERROR in verdicts:
        return EXIT_ERRORED
    return EXIT_OK


def batch_exit_code(summary) -> int:
    """The exit code of a batch from its summary's counts."""
    verdicts = [Outcome.FAIL] * summary["failed"] + [Outcome.ERROR] * summary["errored"] + [Outcome.PASS] * summary["passed"]
    return exit_code(verdicts, False)
