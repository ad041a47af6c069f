"""Printing and exit codes, shared by every command. Only the CLI prints or exits.

rich is imported only to print in colour on a terminal, and the renderers
only when something is rendered: a piped `dialogcheck validate` needs neither.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

import click

from .._redact import mask
from ..errors import LoadError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from ..checks.base import Outcome

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_ERRORED = 0, 1, 2, 3

FORMAT_OPTION = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text for people, json for one JSON document on stdout.",
)

#: Variables that make rich treat a stream as a terminal whatever it is (rich's Console.is_terminal).
_TERMINAL_OVERRIDES = ("FORCE_COLOR", "TTY_COMPATIBLE")


class StyledText:
    """Text with styles kept as plain pieces, so printing it where colour is off never imports rich."""

    def __init__(self) -> None:
        self._pieces: list[tuple[str, str] | Text] = []

    def append(self, text: str, style: str = "") -> None:
        self._pieces.append((text, style))

    def append_text(self, text: Text) -> None:
        """Add a rich `Text` a renderer made (its styles are kept)."""
        self._pieces.append(text)

    @property
    def plain(self) -> str:
        return "".join(piece[0] if isinstance(piece, tuple) else piece.plain for piece in self._pieces)

    def to_rich(self) -> Text:
        from rich.text import Text

        text = Text()
        for piece in self._pieces:
            if isinstance(piece, tuple):
                text.append(piece[0], style=piece[1])
            else:
                text.append_text(piece)
        return text


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


def print_text(text: Text | StyledText, stderr: bool = False) -> None:
    """Through rich (colour) on a terminal; as plain text, much faster, when piped. Held credentials are masked."""
    stream = sys.stderr if stderr else sys.stdout
    plain = text.plain
    masked = mask(plain)
    if masked is not plain:  # a credential is quoted: print the masked text, without its styles
        text = StyledText()
        text.append(masked)
    if not _surely_not_terminal(stream):
        out = console(stderr)
        if out.is_terminal:
            out.print(text.to_rich() if isinstance(text, StyledText) else text, end="")
            return
    stream.write(masked)
    stream.flush()


def print_json(document: str) -> None:
    sys.stdout.write(mask(document))
    sys.stdout.flush()


def fail_with_load_error(error: LoadError, output_format: str) -> None:
    """Report bad input and exit 2: JSON on stdout, or `path:line:col: message` lines on stderr."""
    if output_format == "json":
        from ..report import json as json_report

        print_json(json_report.render_load_error(error))
    else:
        from ..report import text as text_report

        print_text(text_report.render_load_error(error), stderr=True)
    raise SystemExit(EXIT_BAD_INPUT)


def exit_code(verdicts: Iterable[Outcome], any_error: bool) -> int:
    """1 if anything failed; else 3 if any check errored; else 0 (SPEC section 9)."""
    from ..checks.base import Outcome

    verdicts = list(verdicts)
    if Outcome.FAIL in verdicts:
        return EXIT_FAILED
    if any_error or Outcome.ERROR in verdicts:
        return EXIT_ERRORED
    return EXIT_OK


def batch_exit_code(summary) -> int:
    """The exit code of a batch from its summary's counts."""
    from ..checks.base import Outcome

    verdicts = [Outcome.FAIL] * summary["failed"] + [Outcome.ERROR] * summary["errored"] + [Outcome.PASS] * summary["passed"]
    return exit_code(verdicts, False)
