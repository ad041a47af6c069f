"""`check --html`: the HTML report written as the results go by, to a file that becomes the report only when whole.

The page's pieces (`report.html.HtmlReport`) go to a temporary file next to the
report as each result comes, so memory stays flat however many conversations
there are; the report appears, whole, when the batch is done, and bad input or
an interrupted check leaves no report behind (and a previous one as it was).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import LoadError
from ..report.html import conversations_page
from ..results.atomic import AtomicFile
from ..results.model import ConversationResult


class HtmlReportFile:
    """The report of the conversations a check judges; a report that cannot be written is a `LoadError` naming it."""

    def __init__(self, path: str):
        self.path = path
        self.page = conversations_page()
        with self._writing():
            self.file = AtomicFile(path)
        self._write(self.page.start())

    def add(self, result: ConversationResult) -> None:
        self._write(self.page.add_conversation(result))

    def commit(self) -> None:
        self._write(self.page.finish())
        with self._writing():
            self.file.commit()

    def discard(self) -> None:
        self.file.discard()

    def _write(self, piece: str) -> None:
        if piece:
            with self._writing():
                self.file.write(piece)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except OSError as err:
            raise LoadError.of_os("cannot write the report", err, str(err.filename or self.path)) from None
