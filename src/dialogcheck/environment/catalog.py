"""The environments of a project, `eval/environments/NAME.yml`, found by the name a scenario or the config gives.

A name is a file's stem, never a path: one with a slash, a dot-dot or any character outside letters, digits,
`_`, `-` and `.` is refused before anything is opened, so no scenario can reach a file outside the folder.
Each file is read once per catalog, and its problems are reported once, at their own file, line and column.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

from .._fields import Problems
from .._paths import project_folder, read_regular, resolved
from .._yaml import MAX_FILE_BYTES, Pos
from ..errors import LoadError, Problem, os_reason
from .load import load_environment
from .model import Environment

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


class Catalog:
    """The environments of the project at `root`, loaded on first use; `safe_env` refuses `python:` tools."""

    def __init__(self, root: Path, *, safe_env: bool | None = None):
        self.root = Path(root)
        self.safe_env = safe_env
        self._loaded: dict[str, Environment | LoadError | str] = {}
        self._reported: set[str] = set()
        #: Problems of environment files, each at its own file, line and column (reported once per file).
        self.file_problems: list[Problem] = []

    @classmethod
    def for_file(cls, path: str | Path, *, safe_env: bool | None = None) -> Catalog:
        """The catalog of the project a definition file is in: the folder holding the `eval/` it is under, else its own folder."""
        folder = (resolved(Path(path)) or Path(path).absolute()).parent  # a loop of links: reading the file says so
        for candidate in (folder, *folder.parents):
            if candidate.name == "eval":
                return cls(candidate.parent, safe_env=safe_env)
        return cls(folder, safe_env=safe_env)

    def folder(self) -> Path:
        return self.root / "eval" / "environments"

    def get(self, name: str, problems: Problems, pos: Pos, where: str) -> Environment | None:
        """The environment `name`, or None with a problem at `pos` (of the file that names it, `where`)."""
        if not _NAME.fullmatch(name) or ".." in name:
            problems.add(
                f"{where} names the environment {name!r}: a name is the stem of a file in eval/environments/"
                " (letters, digits, `_`, `-`, `.`), never a path",
                pos,
            )
            return None
        found = self._loaded.get(name)
        if found is None:
            found = self._loaded[name] = self._load(name)
        if isinstance(found, str):
            problems.add(f"{where} names the environment `{name}`: {found}", pos)
            return None
        if isinstance(found, LoadError):
            if name not in self._reported:
                self._reported.add(name)
                self.file_problems.extend(found.problems)
            count = len(found.problems)
            problems.add(f"{where} names the environment `{name}`, whose file has {count} problem{'' if count == 1 else 's'} (each listed at its line)", pos)
            return None
        return found

    def _load(self, name: str) -> Environment | LoadError | str:
        """The environment, the problems of its file, or why there is no file to read."""
        try:
            folder = project_folder(self.root, self.folder(), "the environments folder", "eval/environments is a link out of the project")
        except LoadError as err:
            return err.problems[0].message
        path = folder / f"{name}.yml"
        if not path.is_file():
            others = sorted(p.stem for p in folder.glob("*.yml")) if folder.is_dir() else []
            known = f" (the environments are {', '.join(others)})" if others else " (there is no eval/environments/*.yml)"
            return f"there is no file eval/environments/{name}.yml{known}"
        try:
            environment = load_environment(path, project=self.root, safe_env=self.safe_env)
            data = read_regular(path, MAX_FILE_BYTES)
        except LoadError as err:
            return err
        except OSError as err:  # gone or changed into something else since it was read
            return f"cannot read eval/environments/{name}.yml: {os_reason(err)}"
        return replace(environment, digest=hashlib.sha256(data + b"\0" + environment.state_json).hexdigest())

    def take_file_problems(self) -> list[Problem]:
        """The problems of environment files found since last asked, to report beside those of what named them."""
        taken, self.file_problems = self.file_problems, []
        return taken


__all__ = ["Catalog"]
