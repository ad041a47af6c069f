"""Find and load the definition files a user writes: scenarios, SOPs and config.

`dialogcheck validate` takes files or folders; a YAML file is a scenario when
its top-level key is `scenario`, an SOP when it is `sop`, and the project
config when it is named `conftest.yml`. A scenario is checked with its
project's settings (`framework_tools`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._fields import Problems
from ._paths import files_in
from ._yaml import YMap, read_yaml
from .config import ProjectConfig, find_config, load_config, parse_config
from .errors import LoadError
from .events.model import FRAMEWORK_TOOLS
from .scenario.load import parse_scenario

YAML_SUFFIXES = (".yml", ".yaml")
CONFIG_NAMES = ("conftest.yml", "conftest.yaml")
_SKIP_DIRS = {"results", ".git", ".venv", "node_modules", "__pycache__"}


@dataclass(frozen=True)
class Definition:
    kind: str  # "scenario", "sop" or "config"
    path: str
    value: Any


def definition_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; folders expanded to the YAML files under them (results folders skipped)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(files_in(path, YAML_SUFFIXES, skip_dirs=_SKIP_DIRS))
        elif path.exists():
            found.append(path)
        else:
            raise LoadError.one("no such file or folder", str(path))
    return found


class ProjectSettings:
    """Each project's config, read once: a scenario is loaded with its project's `framework_tools`."""

    def __init__(self) -> None:
        self._configs: dict[Path, ProjectConfig | None] = {}

    def framework_tools(self, scenario: Path) -> frozenset[str]:
        """The setting of the project `scenario` belongs to; SPEC's list outside a project, or when its config does not load.

        A config that does not load is reported as its own file's problem, not once per scenario of the project.
        """
        found = find_config(scenario)
        if found is None:
            return FRAMEWORK_TOOLS
        key = found.resolve()
        if key not in self._configs:
            try:
                self._configs[key] = load_config(found)
            except LoadError:
                self._configs[key] = None
        config = self._configs[key]
        return FRAMEWORK_TOOLS if config is None else config.framework_tools


def load_definition(path: str | Path, settings: ProjectSettings | None = None) -> Definition:
    """Load one definition file of whichever kind it is; raises `LoadError`."""
    file = str(path)
    root = read_yaml(path)
    problems = Problems()
    if Path(path).name in CONFIG_NAMES:
        config = parse_config(root, problems, Path(path))
        if problems:
            raise LoadError(problems.items).in_file(file)
        return Definition("config", file, config)
    keys = tuple(root.values) if isinstance(root, YMap) else ()
    key = "sop" if "sop" in keys else "scenario" if "scenario" in keys else next(iter(keys), None)
    if key == "sop":
        from .sop.load import parse_sop

        value = parse_sop(root, problems, file)
        kind = "sop"
    elif key == "scenario" or key is None:
        framework_tools = (settings or ProjectSettings()).framework_tools(Path(path))
        value = parse_scenario(root, problems, file, framework_tools)  # reports what a scenario file lacks
        kind = "scenario"
    else:
        raise LoadError.one(
            f"not a scenario or SOP file: expected a top-level `scenario:` or `sop:` key, got `{key}`",
            file,
            root.keys[key].line,
            root.keys[key].column,
        )
    if problems or value is None:
        raise LoadError(problems.items).in_file(file)
    return Definition(kind, file, value)
