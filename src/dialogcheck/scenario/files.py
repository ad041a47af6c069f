"""Which scenario files a target names: the one discovery `run`, `check --scenario` and the pytest plugin share."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._paths import files_in
from ..errors import LoadError

YAML_SUFFIXES = (".yml", ".yaml")


def scenario_files_of(targets: Sequence[Path]) -> list[Path]:
    """Every scenario file `run TARGETS` runs, each once, in the order named: the one discovery `run` and the
    pytest plugin share, so pytest collects exactly what `run` runs."""
    files: list[Path] = []
    for target in targets:
        files.extend(scenario_files(target))
    return list(dict.fromkeys(files))  # a file named twice runs once


def scenario_files(path: Path) -> list[Path]:
    """The scenario files of one target: a file itself, else every `.yml` and `.yaml` (in any case) under the
    project's `eval/scenarios/` or the folder, in every sub-folder."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise LoadError.one("no such file or folder", str(path))
    folder = path / "eval" / "scenarios" if (path / "eval" / "scenarios").is_dir() else path
    return files_in(folder, YAML_SUFFIXES, boundary=path)


__all__ = ["YAML_SUFFIXES", "scenario_files", "scenario_files_of"]
