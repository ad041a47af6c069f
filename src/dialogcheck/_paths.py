"""Which files a folder holds, for the commands that take folders; a link out of the folder is refused.

The rule: a file the user names on the command line is read wherever it is; a
file found by walking a folder the user named must be inside that folder once
symbolic links are resolved. A CI job walks folders it did not write: a link
from `eval/scenarios/x.yml` to `~/.aws/credentials` must not get that file
read, and parts of it quoted in an error message in a public log.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .errors import LoadError, Problem


def files_in(folder: Path, suffixes: Iterable[str], *, skip_dirs: Iterable[str] = (), boundary: Path | None = None) -> list[Path]:
    """The files under `folder` with one of `suffixes`, sorted, outside `skip_dirs`; raises `LoadError` for links leaving `boundary` (default: `folder`)."""
    suffixes, skip = tuple(suffixes), set(skip_dirs)
    found = sorted(
        p for p in folder.rglob("*")
        if p.suffix in suffixes and p.is_file() and not skip.intersection(p.relative_to(folder).parts[:-1])
    )
    inside = (boundary or folder).resolve()
    problems = [
        Problem(
            f"this file is a link to {p.resolve()}, outside {boundary or folder}: files found in a folder must stay inside it"
            " (name the file itself on the command line to read it)",
            str(p),
        )
        for p in found
        if not p.resolve().is_relative_to(inside)
    ]
    if problems:
        raise LoadError(problems)
    return found
