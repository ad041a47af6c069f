"""Find what `dialogcheck run` runs: the project, its config, and its scenario files.

A project is a folder holding `eval/conftest.yml` and `eval/scenarios/`.
`run` takes projects, scenario files, or folders of scenario files; every
scenario is loaded (and every problem reported) before anything runs. A
resumed batch loads the same files again from its plan, and only when each
is still the file the batch started with.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .._fields import Problems
from .._paths import open_regular, path_problem, read_regular
from .._shown import clip, visible
from .._yaml import MAX_FILE_BYTES
from ..config import ProjectConfig, find_config, load_config, searched
from ..environment.catalog import Catalog
from ..environment.model import Environment
from ..errors import LoadError, Problem, os_reason
from ..results.plan import PLAN_VERSION, Plan, PlannedScenario, named, plan_error
from ..scenario.files import scenario_files_of
from ..scenario.load import load_scenario
from ..scenario.model import Scenario


@dataclass(frozen=True)
class Project:
    root: Path
    config: ProjectConfig
    scenarios: tuple[Scenario, ...]
    #: The sha256 of each scenario file as loaded, by the scenario's `path`.
    digests: Mapping[str, str] = field(default_factory=dict)

    def environment_digests(self) -> dict[str, str]:
        """The sha256 of each scenario's environment (its file, and the state the scenario gives), by the scenario's
        slug: what a resume must find unchanged."""
        return {s.slug: s.environment.digest for s in self.scenarios if s.environment is not None}

    def planned(self, runs: int, personas: Sequence[str] = (), simulate: str = "auto", seed: int | None = None) -> list[PlannedScenario]:
        """Each scenario as a batch's plan keeps it: by absolute path, with its hash, so a resume works from any
        folder; for an LLM user, the persona traits it runs under (`persona_matrix`) and its seed (`seed`, else
        the config's `simulation.seed`)."""
        seed = self.config.simulation.seed if seed is None else seed
        return [
            PlannedScenario(
                slug=s.slug, path=os.path.abspath(s.path), runs=runs, sha256=self.digests[s.path],
                personas=persona_matrix(s, personas, simulate), seed=None if _scripted(s, simulate) else seed,
            )
            for s in self.scenarios
        ]


def persona_matrix(scenario: Scenario, personas: Sequence[str], simulate: str) -> list[str]:
    """The traits a scenario runs under, one run each per repeat: `--persona`'s, else its own `personas`.

    None for a run that follows the scenario's `script`: a script says the same whoever plays it.
    """
    return [] if _scripted(scenario, simulate) else list(personas or scenario.personas)


def _scripted(scenario: Scenario, simulate: str) -> bool:
    """Whether the scenario's runs follow its `script` (`simulate` is `run --simulate`: auto or llm)."""
    return scenario.script is not None and simulate != "llm"


def load_project(paths: Sequence[str | Path], config_path: str | Path | None = None) -> Project:
    """Load the config and every scenario; raises one `LoadError` with every problem found."""
    targets = [Path(p) for p in paths] or [Path(".")]
    files = scenario_files_of(targets)
    found = Path(config_path) if config_path else find_config(targets[0])
    config = load_config(found) if found else ProjectConfig.empty(_guess_root(targets[0]))
    if not files:
        raise LoadError.one("no scenario files found (eval/scenarios/*.yml)", str(targets[0]))
    return _project(config, files)


def load_planned(plan: Plan, plan_file: str) -> Project:
    """The project of a batch being resumed, by its plan's absolute paths, whatever the working folder.

    Refuses (one problem per scenario) a scenario file that is gone or not
    the one the batch started with: its finished runs were judged under the
    old definition, and a batch mixing two definitions has no meaning. A plan
    of an older dialogcheck keeps no hashes, so it cannot be checked and is refused.
    Every path of the plan must name a regular file (a named pipe or a device is
    never opened to wait or read), and each scenario's persona traits must be
    those its file or the batch's `--persona` declares.
    """
    if plan.version < PLAN_VERSION or plan.project is None or any(item.sha256 is None for item in plan.scenarios):
        message = (
            "this batch was planned by an older dialogcheck, which kept no hash of its scenarios:"
            " a resume could not tell whether one changed since; start a new batch instead"
        )
        raise LoadError.one(message, plan_file)
    problems = [problem for item in plan.scenarios if (problem := _changed(item, plan_file)) is not None]
    if problems:
        raise LoadError(problems)
    if plan.config:
        _refuse_unreadable_config(plan.config)
    config = load_config(plan.config) if plan.config else ProjectConfig.empty(Path(plan.project))
    project = _project(config, [Path(item.path) for item in plan.scenarios])
    renamed = [
        Problem(f"`scenarios[{i}].slug` is `{item.slug}`, but {item.path} has the slug `{scenario.slug}` (its file name)", plan_file)
        for i, (item, scenario) in enumerate(zip(plan.scenarios, project.scenarios, strict=True))
        if item.slug != scenario.slug
    ]
    if renamed:
        raise LoadError(renamed)
    _refuse_changed_environments(plan, project, plan_file)
    for i, (item, scenario) in enumerate(zip(plan.scenarios, project.scenarios, strict=True)):
        declared = list(plan.personas or scenario.personas)
        allowed = ([], declared) if scenario.script is not None else (declared,)  # a script runs as it is, unless --simulate llm
        if item.personas not in allowed:
            where: list[str | int] = ["scenarios", i, "personas"]
            runs_under = declared or "no persona traits"
            message = (
                f"invalid plan: {named(where)} is {item.personas}, but scenario `{scenario.slug}` ({scenario.path}) runs under"
                f" {runs_under} (its `personas`, or the batch's --persona)"
            )
            raise plan_error(Path(plan_file), message, where)
    return project


def _refuse_changed_environments(plan: Plan, project: Project, plan_file: str) -> None:
    """A `LoadError` for each scenario whose environment is not the one the batch started with (its file, or the
    state the scenario gives from a file of its own)."""
    now = project.environment_digests()
    by_slug = {scenario.slug: scenario for scenario in project.scenarios}
    problems = []
    for slug in sorted(set(now) | set(plan.environments)):
        if now.get(slug) == plan.environments.get(slug):
            continue
        environment = by_slug[slug].environment if slug in by_slug else None
        where = str(project.root / "eval" / "environments" / f"{environment.name}.yml") if environment is not None else plan_file
        named = f"environment `{environment.name}`" if environment is not None else "the environment"
        problems.append(Problem(
            f"{named} of scenario `{slug}` changed since the batch started ({plan_file} holds the hash of the one it started with,"
            " its file and the state the scenario gives): its finished runs ran in the old one; start a new batch, or put it back as it was",
            where,
        ))
    if problems:
        raise LoadError(problems)


def _changed(item: PlannedScenario, plan_file: str) -> Problem | None:
    """Why a planned scenario file can no longer be resumed, or None when it is the same file."""
    cannot = f"scenario `{item.slug}` of this batch cannot be read"
    if (why := path_problem(item.path)) is not None:
        return Problem(f"{cannot}: {why}; the batch cannot be finished without it", clip(visible(item.path), 120))
    try:
        digest = _digest(Path(item.path))
    except OSError as err:
        return Problem(f"{cannot}: {os_reason(err)}; the batch cannot be finished without it", item.path)
    if digest != item.sha256:
        return Problem(
            f"scenario `{item.slug}` changed since the batch started ({plan_file} holds the hash of the file it started with):"
            " its finished runs were judged under the old definition; start a new batch, or put the file back as it was",
            item.path,
        )
    return None


def _refuse_unreadable_config(path: str) -> None:
    """A `LoadError` when the plan's config path is no regular file: it would be opened to wait, or read without end."""
    if (why := path_problem(path)) is not None:
        raise LoadError.one(f"the config of this batch cannot be read: {why}", clip(visible(path), 120))
    try:
        os.close(open_regular(path))
    except OSError as err:
        raise LoadError.of_os("the config of this batch cannot be read", err, path) from None


def _digest(path: Path) -> str:
    """The sha256 of a scenario file: a regular one, no larger than a scenario file may be."""
    return hashlib.sha256(read_regular(path, MAX_FILE_BYTES)).hexdigest()


def _project(config: ProjectConfig, files: Sequence[Path]) -> Project:
    """Every scenario of `files` with its hash, or one `LoadError` with every problem found."""
    problems: list[Problem] = []
    scenarios: list[Scenario] = []
    digests: dict[str, str] = {}
    catalog = Catalog(config.root)
    default = _default_environment(config, catalog, problems)
    for file in files:
        try:
            scenario = load_scenario(file, framework_tools=config.framework_tools, environments=catalog, default_environment=default)
            digests[scenario.path] = _digest(file)
        except LoadError as err:
            problems.extend(err.problems)
            continue
        except OSError as err:  # gone between loading and hashing
            problems.append(Problem(f"cannot read file: {os_reason(err)}", str(file)))
            continue
        scenarios.append(scenario)
    slugs: dict[str, Scenario] = {}
    for scenario in scenarios:
        if scenario.slug in slugs:
            problems.append(Problem(f"two scenarios have the slug {scenario.slug!r} (also {slugs[scenario.slug].path})", scenario.path))
        slugs[scenario.slug] = scenario
    if problems:
        raise LoadError(problems)
    return Project(config.root, config, tuple(scenarios), digests)


def _default_environment(config: ProjectConfig, catalog: Catalog, problems: list[Problem]) -> Environment | None:
    """The config's `environment`, every scenario's that names none; its problems added to `problems`."""
    if config.environment is None or config.environment_pos is None:
        return None
    found = Problems()
    environment = catalog.get(config.environment, found, config.environment_pos, "`environment` in the config")
    where = str(config.path or config.root)
    problems.extend(replace(problem, file=where) for problem in found.items)
    problems.extend(catalog.take_file_problems())
    return environment


def _guess_root(target: Path) -> Path:
    here = target.resolve()
    folder = here if here.is_dir() else here.parent
    for candidate in searched((folder, *folder.parents)):
        if candidate.name == "eval":
            return candidate.parent
    return folder
