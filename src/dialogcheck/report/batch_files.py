"""The files a batch's results folder holds besides the data: each run's and the summary's text, JUnit and HTML.

The runner writes the folder with what it is handed (`FolderText`); this is the renderer every caller hands it,
so the runner never imports a renderer, and a batch's folder reads the same whoever ran it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..results.atomic import write_atomic
from ..results.model import BatchResult, RunResult
from .html import render_batch_html
from .junit import render_junit
from .run_text import render_run, render_summary

JUNIT, HTML = "junit.xml", "report.html"


class BatchFiles:
    """`run_N.txt`, `summary.txt`, `junit.xml` and `report.html` of a results folder, rendered."""

    def run_text(self, run: RunResult) -> str:
        return render_run(run).plain

    def summary_text(self, batch: BatchResult) -> str:
        return render_summary(batch).plain

    def write_reports(self, batch: BatchResult, folder: Path) -> list[str]:
        """The folder's JUnit and HTML, each written atomically; the paths written."""
        return write_reports(batch, [folder / JUNIT], [folder / HTML])


#: The one renderer of results folders: `run`, the library, the pytest plugin and the MCP server hand it on.
BATCH_FILES = BatchFiles()


def write_reports(batch: BatchResult, junit_paths: Sequence[str | Path] = (), html_paths: Sequence[str | Path] = ()) -> list[str]:
    """Render the batch's JUnit and HTML once each, write each copy atomically; the paths written, in order."""
    written = []
    for paths, render in ((junit_paths, render_junit), (html_paths, render_batch_html)):
        if paths:
            content = render(batch)
            for path in paths:
                write_atomic(path, content)
                written.append(str(path))
    return written


__all__ = ["BATCH_FILES", "HTML", "JUNIT", "BatchFiles", "write_reports"]
