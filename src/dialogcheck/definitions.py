"""Find and load the definition files a user writes: scenarios, SOPs and config.

`dialogcheck validate` takes files and folders. A file named on the command
line is loaded whatever it holds. A folder is searched for dialogcheck's own
files, not for every YAML file in it (a Rasa project root also holds
`domain.yml` and `data/*.yml`):

- a project (a folder holding `eval/conftest.yml`, `eval/scenarios/` or
  `sops/`), or its `eval/` folder: the config, and every YAML file under
  `scenarios/`, `environments/` and `sops/`;
- a folder named `scenarios`, `environments` or `sops`: every YAML file under
  it, each of which must be a definition;
- any other folder: the YAML files whose top-level key is `scenario` or `sop`
  (or a misspelling of them, which is then reported), and `conftest.yml`
  files; the others are skipped, and listed as skipped.

A YAML file is a scenario when its top-level key is `scenario`, an SOP when
it is `sop`, an environment when it is `environment`, and the project config
when it is named `conftest.yml`. A scenario is checked with its project's
settings (`framework_tools`, the default `environment`) and environments.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._fields import Problems
from ._paths import files_in
from ._yaml import MAX_FILE_BYTES, YMap, allowed_env, read_yaml
from .config import ProjectConfig, find_config, load_config, parse_config
from .environment.catalog import Catalog
from .environment.model import Environment
from .errors import LoadError
from .events.model import FRAMEWORK_TOOLS
from .scenario.load import parse_scenario

YAML_SUFFIXES = (".yml", ".yaml")
CONFIG_NAMES = ("conftest.yml", "conftest.yaml")
#: Folders whose every YAML file must be a definition.
DEFINITION_FOLDERS = ("scenarios", "sops", "environments")
#: The top-level key of each kind of definition file but the config.
KINDS = ("scenario", "sop", "environment")
_SKIP_DIRS = {"results", ".git", ".venv", "node_modules", "__pycache__"}
#: A key at the start of a line (plain or quoted), or the first key of a flow mapping opening a line: a top-level key.
_TOP_KEY = re.compile(r"""^(?:\{\s*)?(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#:"'{}\[\],&*!|>%@`-][^:\n#]*?))[ \t]*:(?:[ \t]|$)""", re.M)


@dataclass(frozen=True)
class Definition:
    kind: str  # "scenario", "sop", "environment" or "config"
    path: str
    value: Any


@dataclass(frozen=True)
class Found:
    """The files to load, and the YAML files a folder held that are not dialogcheck's."""

    files: list[Path]
    skipped: list[Path] = field(default_factory=list)


def _project_files(folder: Path) -> list[Path] | None:
    """A project's (or its `eval/` folder's) definition files; None when `folder` is neither."""
    candidates = [(folder / "eval", folder / "sops")] + ([(folder, None)] if folder.name == "eval" else [])
    for eval_dir, sops in candidates:
        configs = [eval_dir / name for name in CONFIG_NAMES if (eval_dir / name).is_file()]
        scenarios = eval_dir / "scenarios"
        if configs or scenarios.is_dir() or (sops is not None and sops.is_dir()):
            found = list(configs)
            for sub in (scenarios, eval_dir / "environments", sops):
                if sub is not None and sub.is_dir():
                    found.extend(files_in(sub, YAML_SUFFIXES, skip_dirs=_SKIP_DIRS, boundary=folder))
            return found
    return None


def _looks_like_definition(path: Path) -> bool:
    """Whether a YAML file found in a folder is dialogcheck's: named `conftest.yml`, or a top-level key like `scenario` or `sop`.

    Read as text, not parsed: another tool's YAML may be large or use what dialogcheck refuses, and is not ours to judge.
    """
    if path.name in CONFIG_NAMES:
        return True
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_FILE_BYTES).decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    except OSError:
        return True  # unreadable: loading it reports why
    for match in _TOP_KEY.finditer(text):
        key = next(group for group in match.groups() if group is not None).strip().lower()
        if key in ("scenario", "sop", "sops", "environment") or difflib.get_close_matches(key, ["scenario", "environment"], cutoff=0.85):
            return True
    return False


def find_definitions(paths: Iterable[str | Path]) -> Found:
    """The definition files of the paths given: files as they are, folders searched as the module says."""
    files: list[Path] = []
    skipped: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise LoadError.one("no such file or folder", str(path))
        if not path.is_dir():
            files.append(path)
            continue
        project = _project_files(path)
        if project is not None:
            files.extend(project)
            continue
        found = files_in(path, YAML_SUFFIXES, skip_dirs=_SKIP_DIRS)
        if path.name in DEFINITION_FOLDERS:
            files.extend(found)
            continue
        for file in found:
            (files if _looks_like_definition(file) else skipped).append(file)
    return Found(list(dict.fromkeys(files)), skipped)


class ProjectSettings:
    """Each project's config and environments, read once: a scenario is loaded with its project's `framework_tools`,
    the environments of its project and the config's default environment."""

    def __init__(self, validated: Iterable[Path] = ()) -> None:
        self._configs: dict[Path, ProjectConfig | None] = {}
        self._catalogs: dict[Path, Catalog] = {}
        #: The files being read in the same pass (`validate`'s), whose problems are said as their own, never again.
        self.validated = {path.resolve() for path in validated}

    def catalog(self, path: Path) -> Catalog:
        """The environments of the project `path` (a scenario or config file) is in."""
        config = self.config(path)
        root = config.root if config is not None else Catalog.for_file(path).root
        key = root.resolve()
        if key not in self._catalogs:
            self._catalogs[key] = Catalog(root)
        return self._catalogs[key]

    def default_environment(self, scenario: Path) -> Environment | None:
        """The config's `environment` of the project `scenario` is in; None without one, or when it cannot be used
        (reported as the config's own problem)."""
        config = self.config(scenario)
        if config is None or config.environment is None or config.environment_pos is None:
            return None
        return self.catalog(scenario).get(config.environment, Problems(), config.environment_pos, "`environment`")

    def framework_tools(self, scenario: Path) -> frozenset[str]:
        """The setting of the project `scenario` belongs to; `FRAMEWORK_TOOLS` outside a project, or when its config does not load.

        A config that does not load is reported as its own file's problem, not once per scenario of the project.
        """
        config = self.config(scenario)
        return FRAMEWORK_TOOLS if config is None else config.framework_tools

    def config(self, scenario: Path) -> ProjectConfig | None:
        """The config of the project `scenario` belongs to; None outside a project, or when its config does not load."""
        found = find_config(scenario)
        if found is None:
            return None
        key = found.resolve()
        if key not in self._configs:
            try:
                self._configs[key] = load_config(found)
            except LoadError:
                self._configs[key] = None
        return self._configs[key]


def load_definition(path: str | Path, settings: ProjectSettings | None = None) -> Definition:
    """Load one definition file of whichever kind it is; raises `LoadError`."""
    file = str(path)
    root = read_yaml(path)
    problems = Problems()
    settings = settings or ProjectSettings()
    if Path(path).name in CONFIG_NAMES:
        config = parse_config(root, problems, Path(path))
        if not problems and config.environment is not None and config.environment_pos is not None:
            settings.catalog(Path(path)).get(config.environment, problems, config.environment_pos, "`environment` in the config")
        if problems:
            raise LoadError(problems.items).in_file(file)
        return Definition("config", file, config)
    keys = tuple(root.values) if isinstance(root, YMap) else ()
    key = next((kind for kind in KINDS if kind in keys), next(iter(keys), None))
    if key is None and Path(path).parent.name == "environments":
        key = "environment"  # an empty file of eval/environments/ is an environment file lacking its key
    value: object
    if key == "environment":
        from .environment.load import parse_environment, project_of

        value = parse_environment(root, problems, file, project=project_of(Path(path)), safe_env=allowed_env() is not None)
        kind = "environment"
    elif key == "sop":
        from .sop.load import parse_sop

        value = parse_sop(root, problems, file)
        kind = "sop"
    elif key == "scenario" or key is None:
        scenario = Path(path)
        catalog, default = settings.catalog(scenario), settings.default_environment(scenario)
        value = parse_scenario(root, problems, file, settings.framework_tools(scenario), catalog, default)  # type: ignore[arg-type]  # reports what a scenario file lacks
        named = [p for p in catalog.take_file_problems() if Path(p.file).resolve() not in settings.validated]
        problems.items.extend(named)  # an environment file it names, not read on its own here: its problems said with it
        kind = "scenario"
    else:
        raise LoadError.one(
            f"not a scenario, SOP or environment file: expected a top-level `scenario:`, `sop:` or `environment:` key, got `{key}`",
            file,
            root.keys[key].line,  # type: ignore[union-attr]  # a key was found: the root is a mapping
            root.keys[key].column,  # type: ignore[union-attr]  # the same
        )
    if problems or value is None:
        raise LoadError(problems.items).in_file(file)
    return Definition(kind, file, value)
