"""`compare`: what changed between two batches (results folders or `check --format json` files), and whether it is
more than noise; with `fail_on="regression"`, the exit code a gate on regressions ends with.

The document, the text and the JSON pieces are drawn from the `Comparison` only when asked for: the command line
prints one of them, and a comparison of many keys is printed a key a line as it is drawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

from .._shown import listed
from ..compare import ALPHA, compare_results
from ..compare.model import Comparison, Verdict
from ..errors import LoadError
from ..report.compare_text import MAX_ROWS
from ..report.styled import Styled
from ..results.model import unfinished_text
from .answer import EXIT_ERRORED, EXIT_FAILED, EXIT_OK, Answer


class Compared(Answer):
    """The answer of `compare`: a `Comparison`'s document and text, drawn when asked for."""

    def __init__(self, comparison: Comparison, max_rows: int, fail_on: str | None):
        self.comparison, self.max_rows = comparison, max_rows
        notes = Styled()
        super().__init__(None, Styled(), _exit_code(comparison, fail_on, notes), notes)

    @cached_property
    def document(self) -> Any:
        from ..compare.document import comparison_document

        return comparison_document(self.comparison)

    @cached_property
    def text(self) -> Styled:
        from ..report.compare_text import render_comparison

        return render_comparison(self.comparison, self.max_rows)

    def json(self) -> Iterator[str]:
        """The document's JSON text, its keys one a line."""
        from ..compare.document import comparison_json

        return comparison_json(self.comparison)


def compare(
    base: str, new: str, *, match: str | None = None, alpha: float = ALPHA, max_rows: int = MAX_ROWS, fail_on: str | None = None,
    html: str | None = None,
) -> Compared:
    """What changed from `base` to `new` (runs paired by scenario slug, conversations by id, or by what `match`'s
    one group captures), the page written to `html` when asked for. The exit code is 0, or with `fail_on` set to
    `regression`: 1 for a significant regression, 3 when a side is unfinished or no key could be compared (the
    notes say why). `LoadError` for bad input; `compare.MissingStats` without the `compare` extra."""
    comparison = compare_results(base, new, match=match, alpha=alpha)
    if html:
        from ..report.compare_html import render_comparison_html
        from ..results.atomic import write_atomic

        try:
            write_atomic(html, render_comparison_html(comparison))
        except OSError as err:
            raise LoadError.of_os("cannot write the report", err, str(err.filename or html)) from None
    return Compared(comparison, max_rows, fail_on)


def _exit_code(comparison: Comparison, fail_on: str | None, notes: Styled) -> int:
    """A gate on regressions must not pass a batch it could not judge: no key compared is exit 3, as an errored run
    is; what it never ran (an unfinished side) could have regressed, so it is no pass either."""
    if fail_on != "regression":
        return EXIT_OK
    if comparison.verdict is Verdict.REGRESSED:
        return EXIT_FAILED
    unfinished = [(name, side) for name, side in (("BASE", comparison.base), ("NEW", comparison.new)) if side.unfinished]
    for name, side in unfinished:
        notes.append(
            f"dialogcheck: {name} is an unfinished batch: {unfinished_text(side.unfinished, side.planned)}:"
            f" finish it with dialogcheck run --resume {side.source}, then compare again\n"
        )
    if unfinished:
        return EXIT_ERRORED
    if not comparison.keys:
        notes.append(f"dialogcheck: nothing compared: every key both sides have errored on a side ({listed(list(comparison.not_judged), 5)})\n")
        return EXIT_ERRORED
    return EXIT_OK
