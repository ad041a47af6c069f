"""What a command says, whoever asked it: the command line prints it, the MCP server answers with it.

A command's answer is its JSON document (what `--format json` prints), its text for people, the text it prints
beside them on stderr (warnings), and the exit code the command line ends with. An error is a `DialogcheckError`:
its document is `errors.error_document`, its text `error_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import DialogcheckError, LoadError
from ..report.styled import Styled

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..checks.base import Outcome
    from ..results.model import Counts

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_ERRORED = 0, 1, 2, 3


class Answer:
    """A command's answer: its JSON document, its text, the text for stderr beside it, and its exit code."""

    def __init__(self, document: Any, text: Styled, exit_code: int = EXIT_OK, notes: Styled | None = None):
        self._document, self._text = document, text
        self.exit_code = exit_code
        #: Said on stderr after the text (probable typos, what `run` would refuse); no part of the JSON output.
        self.notes = notes if notes is not None else Styled()

    @property
    def document(self) -> Any:
        """What `--format json` prints."""
        return self._document

    @property
    def text(self) -> Styled:
        """What the command prints for people."""
        return self._text

    def json(self) -> Iterator[str]:
        """The document as `--format json` prints it, in pieces to print one after the other."""
        from ..report.json import dumps

        yield dumps(self.document)


class CommandError(DialogcheckError):
    """A command that could not do what it was asked for a reason that is not a file's (an agent that is down, a run
    of a results folder that never finished): its message and exit code. Bad input is a `LoadError` (exit 2)."""

    def __init__(self, message: str, exit_code: int = EXIT_ERRORED):
        super().__init__(message)
        self.exit_code = exit_code


def error_text(error: DialogcheckError) -> Styled:
    """An error as text output says it: a `LoadError`'s `path:line:col: message` lines, else its message in red."""
    if isinstance(error, LoadError):
        from ..report.check_text import render_load_error

        return render_load_error(error)
    return Styled(f"{error}\n", "bold red")


def exit_code_of(outcome: Outcome) -> int:
    """The exit code of a batch's worst outcome (docs/concepts.md, "Verdicts and exit codes"): 1 failed, 3 errored or suspect, 0 passed."""
    from ..checks.base import Outcome

    return {Outcome.FAIL: EXIT_FAILED, Outcome.ERROR: EXIT_ERRORED, Outcome.SUSPECT: EXIT_ERRORED}.get(outcome, EXIT_OK)


def check_exit_code(counts: Counts, any_error: bool) -> int:
    """`check`: 1 if a conversation failed; else 3 if any single check errored (an optional step too) or a
    conversation's user is suspect; else 0."""
    if counts.failed:
        return EXIT_FAILED
    return EXIT_ERRORED if any_error or counts.errored or counts.suspect else EXIT_OK
