"""Printing and exit codes, shared by every command. Only the CLI prints or exits.

rich is imported only to print in colour on a terminal, and the renderers
only when something is rendered: a piped `dialogcheck validate` needs neither.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

import click

from .._paths import require_folder
from .._redact import mask
from ..commands.answer import EXIT_BAD_INPUT, EXIT_ERRORED, EXIT_FAILED, EXIT_OK, check_exit_code, exit_code_of
from ..errors import DialogcheckError, LoadError, error_document, os_reason
from ..report.styled import Styled

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console

FORMAT_OPTION = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text for people, json for one JSON document on stdout.",
)

SHOW_OPTION = click.option(
    "--show", type=click.Choice(["failures", "all"]), default="failures", show_default=True,
    help="Text output of a batch: the failing checks of the failing conversations or runs, or every check of every one.",
)
MAX_FAILURES_OPTION = click.option(
    "--max-failures", type=click.IntRange(min=0), default=20, show_default=True, metavar="N",
    help="Text output of a batch: show at most N failing conversations or runs (the rest are counted, and in --format json, --output and --html).",
)

#: Variables that make rich treat a stream as a terminal whatever it is (rich's Console.is_terminal).
_TERMINAL_OVERRIDES = ("FORCE_COLOR", "TTY_COMPATIBLE")


def console(stderr: bool = False) -> Console:
    """Colour on a terminal, plain when piped; never reads conversation text as markup."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def _surely_not_terminal(stream: TextIO) -> bool:
    """What rich's `Console.is_terminal` would say is False, found without importing rich."""
    if any(name in os.environ for name in _TERMINAL_OVERRIDES):
        return False
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream: rich says not a terminal too
        return True


def print_text(text: Styled, stderr: bool = False) -> None:
    """Through rich (colour) on a terminal; as plain text, much faster, when piped. Held credentials are masked."""
    stream = sys.stderr if stderr else sys.stdout
    plain = text.plain
    masked = mask(plain)
    if masked is not plain:  # a credential is quoted: print the masked text, without its styles
        text = Styled(masked)
    if not _surely_not_terminal(stream):
        out = console(stderr)
        if out.is_terminal:
            out.print(text.to_rich(), end="")
            return
    stream.write(masked)
    stream.flush()


def print_json(document: str) -> None:
    sys.stdout.write(mask(document))
    sys.stdout.flush()


def fail(error: DialogcheckError, output_format: str) -> NoReturn:
    """End the command with `error`: its error document on stdout (JSON), or its text on stderr; exit 2 for bad
    input, else the code of a `CommandError` (3 for any other error)."""
    if output_format == "json":
        from ..report.json import dumps

        print_json(dumps(error_document(error)))
    else:
        from ..commands.answer import error_text

        print_text(error_text(error), stderr=True)
    raise SystemExit(EXIT_BAD_INPUT if isinstance(error, LoadError) else getattr(error, "exit_code", EXIT_ERRORED))


def fail_with_load_error(error: LoadError, output_format: str) -> NoReturn:
    """Report bad input and exit 2: JSON on stdout, or `path:line:col: message` lines on stderr."""
    fail(error, output_format)


def claim_report_paths(paths: Iterable[str | None], what: str, output_format: str) -> None:
    """Each file a report is asked for can be made, tried before the batch: a path that cannot be written is bad
    input (exit 2) before anything runs, never found once every run was paid for and its verdict then hidden."""
    from ..results.atomic import AtomicFile

    for path in filter(None, paths):
        try:
            require_folder(Path(path).parent, f"the {what}", path)
            AtomicFile(path).discard()
        except LoadError as problem:
            fail_with_load_error(problem, output_format)
        except OSError as err:
            fail_with_load_error(LoadError.one(f"cannot write the {what}: {os_reason(err)}", str(err.filename or path)), output_format)


__all__ = [
    "EXIT_BAD_INPUT", "EXIT_ERRORED", "EXIT_FAILED", "EXIT_OK", "FORMAT_OPTION", "MAX_FAILURES_OPTION", "SHOW_OPTION", "check_exit_code",
    "claim_report_paths", "console", "exit_code_of", "fail", "fail_with_load_error", "print_json", "print_text",
]
