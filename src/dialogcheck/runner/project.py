"""Find what `dialogcheck run` runs: the project, its config, and its scenario files.

A project is a folder holding `eval/conftest.yml` and `eval/scenarios/`.
`run` takes projects, scenario files, or folders of scenario files; every
scenario is loaded (and every problem reported) before anything runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._paths import files_in
from ..config import ProjectConfig, find_config, load_config
from ..errors import LoadError, Problem
from ..scenario.load import load_scenario
from ..scenario.model import Scenario

YAML_SUFFIXES = (".yml", ".yaml")


@dataclass(frozen=True)
class Project:
    root: Path
    config: ProjectConfig
    scenarios: tuple[Scenario, ...]


def scenario_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise LoadError.one("no such file or folder", str(path))
    folder = path / "eval" / "scenarios" if (path / "eval" / "scenarios").is_dir() else path
    return files_in(folder, YAML_SUFFIXES, boundary=path)


def load_project(paths: Sequence[str | Path], config_path: str | Path | None = None) -> Project:
    """Load the config and every scenario; raises one `LoadError` with every problem found."""
    targets = [Path(p) for p in paths] or [Path(".")]
    files: list[Path] = []
    for target in targets:
        files.extend(scenario_files(target))
    found = Path(config_path) if config_path else find_config(targets[0])
    config = load_config(found) if found else ProjectConfig.empty(_guess_root(targets[0]))
    problems: list[Problem] = []
    scenarios: list[Scenario] = []
    for file in dict.fromkeys(files):  # a file named twice runs once
        try:
            scenarios.append(load_scenario(file, framework_tools=config.framework_tools))
        except LoadError as err:
            problems.extend(err.problems)
    if not files:
        problems.append(Problem("no scenario files found (eval/scenarios/*.yml)", str(targets[0])))
    slugs: dict[str, Scenario] = {}
    for scenario in scenarios:
        if scenario.slug in slugs:
            problems.append(Problem(f"two scenarios have the slug {scenario.slug!r} (also {slugs[scenario.slug].path})", scenario.path))
        slugs[scenario.slug] = scenario
    if problems:
        raise LoadError(problems)
    return Project(config.root, config, tuple(scenarios))


def _guess_root(target: Path) -> Path:
    here = target.resolve()
    folder = here if here.is_dir() else here.parent
    for candidate in (folder, *folder.parents):
        if candidate.name == "eval":
            return candidate.parent
    return folder
