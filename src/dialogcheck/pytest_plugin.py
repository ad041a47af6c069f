"""The pytest plugin: each scenario of a dialogcheck project is a test, each run of it a test item.

`pytest PROJECT`, `pytest PROJECT/eval/scenarios`, a scenario file, or `--dialogcheck PROJECT`
collects the project's scenarios: one item per run (`slug`, or `slug[run-2]` with
`--dialogcheck-runs N`), its tags as markers (`marker_of`), so `-k`, `-m` and pytest-xdist
work as they do for any test. A failed run's report is dialogcheck's explanation, not a
traceback; a run that errored for a harness reason is a pytest error.

The scenarios collected are the files `dialogcheck run` of the same paths runs, found by the
same function (`scenario.files.scenario_files_of`): pytest's own walk, whose `norecursedirs` hides `build/`
and `.drafts/` and whose suffixes have one case, never looks inside `eval/scenarios/`.

Inert elsewhere: a YAML file is collected only inside a project's `eval/scenarios/`
and only when the project (or a path in it) was asked for, so a repository whose
tests hold example projects collects what it always did. Only pytest (and the few
lines that read the two variables below) is imported at start; dialogcheck's library
is imported when a scenario is collected or run.

`DIALOGCHECK_SAFE_ENV` and `DIALOGCHECK_ALLOW_ENV` set the `--safe-env` policy as they do for
`dialogcheck run`: every file the plugin loads is loaded under it.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .errors import LoadError
    from .results.model import RunResult

#: Marker names pytest, or a plugin in common use, gives a meaning (skip, expect a failure, parametrize, use
#: fixtures or warning filters, time out, rerun, order, group, run in an event loop, open a database or the
#: network), the keywords of `-m`, and dialogcheck's own: no tag is ever one of these markers.
RESERVED_MARKERS = frozenset({
    "skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings", "tryfirst", "trylast",  # pytest
    "and", "or", "not",  # the words of a `-m` expression
    "dialogcheck",  # every scenario's item
    "anyio", "asyncio", "trio", "timeout", "flaky", "repeat", "order", "run", "first", "last", "dependency",
    "xdist_group", "forked", "isolate", "no_cover", "benchmark", "hypothesis", "limit_memory", "limit_leaks",
    "django_db", "urls", "ignore_template_errors", "enable_socket", "disable_socket", "allow_hosts",
    "vcr", "block_network", "default_cassette", "httpx_mock", "freeze_time", "only_browser", "skip_browser",
    "browser_context_args", "datafiles", "remote_data", "mpl_image_compare",
})
#: A tag that is a marker of its own name: a letter or digit, then letters, digits, `_`, `-` and `.`.
_PLAIN_TAG = re.compile(r"[^\W_][\w.-]*")
#: The report attribute that carries a finished run (as JSON) from the process that ran it to the one writing results.
RUN_ATTRIBUTE = "dialogcheck_run"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dialogcheck", "dialogcheck scenarios as tests")
    group.addoption("--dialogcheck", action="append", default=[], metavar="PROJECT", help="Collect the scenarios of this dialogcheck project (repeatable).")
    group.addoption("--dialogcheck-runs", type=_positive, default=1, metavar="N", help="Runs of each scenario, one test item each (ids slug[run-N]).")
    group.addoption("--dialogcheck-agent", metavar="AGENT", help="The agent: rasa:URL, http:URL or python:MODULE:FUNC (as `dialogcheck run --agent`).")
    group.addoption("--dialogcheck-results", metavar="DIR", help="Write the results folder here, as `dialogcheck run --results DIR` does.")
    group.addoption("--no-judge", action="store_true", dest="dialogcheck_no_judge", help="Skip LLM-judged checks instead of reporting them as errors.")
    group.addoption("--replay", action="store_true", dest="dialogcheck_replay", help="Answer every LLM call from the cache (as `dialogcheck run --replay`).")


def _positive(value: str) -> int:
    import argparse

    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return number


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dialogcheck: a run of a dialogcheck scenario")
    projects = [str(Path(p)) for p in config.getoption("dialogcheck")]
    for project in projects:
        if not (Path(project) / "eval").is_dir():
            raise pytest.UsageError(f"--dialogcheck {project}: not a dialogcheck project (no eval/ folder)")
    if projects:
        given = config.args_source is pytest.Config.ArgsSource.ARGS
        config.args[:] = [*config.args, *projects] if given else projects
    agent = config.getoption("dialogcheck_agent")
    if agent:
        from .connectors.factory import parse_agent_flag

        try:
            parse_agent_flag(agent)
        except ValueError as err:
            raise pytest.UsageError(f"--dialogcheck-agent: {err}") from None
    from ._safe_env import policy_of_environment

    try:
        allowed_env = policy_of_environment(os.environ)
    except ValueError as err:
        raise pytest.UsageError(str(err)) from None
    state = config.stash[_STATE] = _State(config, allowed_env)
    config.pluginmanager.register(state, "dialogcheck-state")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()
        config.pluginmanager.unregister(state)


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A project's `eval/scenarios/`, when the project was asked for, is collected by dialogcheck, not by pytest's walk."""
    root = project_of_scenarios(path)
    if root is None or not parent.config.stash[_STATE].asked_for(root):
        return None
    return ScenarioFolder.from_parent(parent, path=path, root=root)


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Never hide (`norecursedirs`, `--ignore`) the way to the scenarios of a project that was asked for: False
    keeps `eval/` and `eval/scenarios/` collected; anything else is left to pytest."""
    if collection_path.name == "eval":
        root = collection_path.parent if project_of_scenarios(collection_path / "scenarios") else None
    else:
        root = project_of_scenarios(collection_path)
    return False if root is not None and config.stash[_STATE].asked_for(root) else None


def project_of_scenarios(folder: Path) -> Path | None:
    """The project whose scenario folder `folder` is: `eval/scenarios/` beside `eval/conftest.yml`."""
    if folder.name == "scenarios" and folder.parent.name == "eval" and (folder.parent / "conftest.yml").is_file():
        return folder.parent.parent
    return None


def marker_of(tag: str) -> str:
    """The marker a scenario tag is, so `-m` selects by it: the tag itself when it is a plain name (a letter or digit,
    then letters, digits, `_`, `-`, `.`) outside `RESERVED_MARKERS`; else `tag_` and the tag, each other character
    as `_` (`xfail` is `tag_xfail`). A tag selects: it never skips a run, expects its failure or asks for a fixture."""
    if _PLAIN_TAG.fullmatch(tag) and tag not in RESERVED_MARKERS:
        return tag
    return "tag_" + re.sub(r"[^\w.-]", "_", tag)


def outcome_of(run: RunResult) -> str:
    """How a run's verdict shows in pytest: `passed`, `failed` (a check failed), or `error` (the harness broke, a
    check could not be decided, or the simulated user was suspect: not the agent's failure, yet not a pass, as
    `run` exits 3 for both). The one place run verdicts become pytest outcomes."""
    from .checks.base import Outcome

    return {Outcome.PASS: "passed", Outcome.FAIL: "failed"}.get(run.verdict, "error")


def item_variants(scenario: Any, runs: int) -> list[tuple[str, int]]:
    """The items of `scenario`: (id suffix, run number) each, numbered as `run` numbers them. The one place a
    scenario becomes several items: one per run (`[run-2]`), and per persona trait when the scenario names
    several for its LLM user (`[impatient]`, `[impatient-run-2]`)."""
    from .runner.project import persona_matrix

    traits: list[str | None] = [*persona_matrix(scenario, (), "auto")] or [None]
    variants = []
    for repeat in range(1, runs + 1):
        for index, trait in enumerate(traits):
            parts = ([trait] if trait else []) + ([f"run-{repeat}"] if runs > 1 else [])
            variants.append((f"[{'-'.join(parts)}]" if parts else "", (repeat - 1) * len(traits) + index + 1))
    return variants


class ScenarioFolder(pytest.Directory):
    """A project's `eval/scenarios/`, or a folder in it: its scenario files are those `run` of the paths pytest was
    given runs (`_State.scenario_files`), in folders of their own, so pytest's `path::name` arguments find them."""

    def __init__(self, *, root: Path, files: tuple[Path, ...] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root
        self.files = files  # None for `eval/scenarios/` itself: the project's files, found when collected

    def collect(self):
        files = self.config.stash[_STATE].scenario_files(self.root) if self.files is None else self.files
        by_entry: dict[str, list[Path]] = {}
        for file in sorted(files):
            by_entry.setdefault(file.relative_to(self.path).parts[0], []).append(file)
        for entry, inside in by_entry.items():
            if inside == [self.path / entry]:
                yield ScenarioFile.from_parent(self, path=self.path / entry, root=self.root)
            else:
                yield ScenarioFolder.from_parent(self, path=self.path / entry, root=self.root, files=tuple(inside))


class ScenarioFile(pytest.File):
    """A scenario file: one item per planned run, its tags as markers (`marker_of`)."""

    def __init__(self, *, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root = root

    def collect(self):
        state = self.config.stash[_STATE]
        scenario = state.scenario(self.path, self.root)
        markers = ["dialogcheck", *dict.fromkeys(marker_of(tag) for tag in scenario.tags)]
        for marker in markers:
            state.register_marker(marker)
        for suffix, number in item_variants(scenario, state.runs):
            item = ScenarioItem.from_parent(self, name=f"{scenario.slug}{suffix}", slug=scenario.slug, number=number)
            for marker in markers:
                item.add_marker(marker)
            yield item


class ScenarioFailed(Exception):
    """A run judged and failed: its report is the run's explanation."""


class ScenarioItem(pytest.Item):
    """One run of one scenario: run while set up (a harness failure is then a pytest error), judged as the test."""

    def __init__(self, *, slug: str, number: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.slug, self.number = slug, number
        self.run: RunResult | None = None

    def setup(self) -> None:
        self.run = self.config.stash[_STATE].run(self)
        if outcome_of(self.run) == "error":
            pytest.fail(_explanation(self.run), pytrace=False)

    def runtest(self) -> None:
        if self.run is not None and outcome_of(self.run) == "failed":
            raise ScenarioFailed(_explanation(self.run))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"{self.slug} run {self.number}"


def _explanation(run: RunResult) -> str:
    """The run's report as pytest shows and writes it (terminal, `--junitxml`): pytest is no writer of ours, so it is masked here."""
    from ._redact import mask
    from .report.explain import render_run_explanation

    return mask(render_run_explanation(run).plain.rstrip("\n"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if isinstance(item, ScenarioItem) and item.run is not None and call.when == "setup":
        from ._redact import mask
        from .report.json import dumps
        from .results.codec import run_document

        # Masked where the run's credentials are held: under pytest-xdist the controller, which writes the
        # results folder and the JUnit properties from this, never read them.
        setattr(report, RUN_ATTRIBUTE, mask(dumps({"run": run_document(item.run), "events": list(item.run.events)})))
    return report


@pytest.fixture
def dialogcheck_run(tmp_path: Path):
    """Run scenarios against an agent of the test's own (`dialogcheck_run(path, agent=func)`), or judge recorded
    conversations (`dialogcheck_run.check(scenario, conversations)`); results go under the test's tmp_path."""
    from .testing import Dialogcheck

    return Dialogcheck(tmp_path)


class _State:
    """This pytest process's part: the scenarios collected, the batches that run them, and the runs finished.

    Registered as a plugin of its own, so it sees every report: under pytest-xdist, the controller's sees the
    runs of every worker, and it alone writes the results folder and the JUnit properties.
    """

    def __init__(self, config: pytest.Config, allowed_env: frozenset[str] | None = None) -> None:
        self.config = config
        self.allowed_env = allowed_env  # what `${VAR}` may read (None: any variable), from DIALOGCHECK_SAFE_ENV and _ALLOW_ENV
        self.runs: int = config.getoption("dialogcheck_runs")
        self.is_worker = hasattr(config, "workerinput")
        invocation = config.invocation_params.dir
        self.asked = [(invocation / arg.split("::")[0]).resolve() for arg in config.args]
        self._configs: dict[Path, Any] = {}
        from .definitions import ProjectSettings

        #: Each project's environments and default environment, read once, as `run` reads them.
        self._settings = ProjectSettings()
        self._files: dict[Path, Any] = {}  # by project root: its scenario files, or the LoadError finding them
        self._runner: Any = None
        self._finished: dict[str, str] = {}
        self.results: str | None = config.getoption("dialogcheck_results")
        self._lock: Any = None
        if self.results and not self.is_worker:
            from ._pytest_runs import claim_results

            self._lock = claim_results(self.results)

    def asked_for(self, root: Path) -> bool:
        """Whether the project at `root` was asked for: it, or a path inside it, is one of pytest's arguments."""
        project = root.resolve()
        return any(path == project or path.is_relative_to(project) for path in self.asked)

    def register_marker(self, marker: str) -> None:
        """A scenario tag's marker as one pytest knows, so `-m MARKER` selects and `--strict-markers` accepts it."""
        known = {line.split(":")[0].split("(")[0].strip() for line in self.config.getini("markers")}
        if marker not in known:
            self.config.addinivalue_line("markers", f"{marker}: dialogcheck scenario tag")

    def scenario_files(self, root: Path) -> list[Path]:
        """The scenario files of the project at `root` that `dialogcheck run` of pytest's paths in it would run: the
        project's for the project or its `eval/`, the folder's or the file's for one inside `eval/scenarios/`."""
        from .errors import LoadError
        from .scenario.files import scenario_files_of

        if root not in self._files:
            scenarios, project = root / "eval" / "scenarios", root.resolve()
            targets = []
            for path in self.asked:
                if path.is_relative_to(project):
                    inside = root / path.relative_to(project)
                    targets.append(inside if inside.is_relative_to(scenarios) else root)
            try:
                self._files[root] = scenario_files_of(targets)
            except LoadError as err:
                self._files[root] = err
        found = self._files[root]
        if isinstance(found, LoadError):
            raise ScenarioFolder.CollectError(_load_error(found)) from None
        return found

    def scenario(self, path: Path, root: Path):
        """The scenario of `path`, loaded with its project's settings; a collection error (file, line, column) when it cannot be."""
        from .config import load_config
        from .errors import LoadError
        from .scenario.load import load_scenario

        try:
            with self.env_policy():
                if root not in self._configs:
                    self._configs[root] = load_config(root / "eval" / "conftest.yml")
                config = self._configs[root]
                return load_scenario(
                    path, framework_tools=config.framework_tools, environments=self._settings.catalog(path),
                    default_environment=self._settings.default_environment(path),
                )
        except LoadError as err:
            raise ScenarioFile.CollectError(_load_error(err)) from None

    def run(self, item: ScenarioItem) -> RunResult:
        if self._runner is None:
            from ._pytest_runs import ProcessRuns

            self._runner = ProcessRuns(self.config)
        with self.env_policy():
            return self._runner.run(item)

    @contextmanager
    def env_policy(self):
        """Load files under the session's `--safe-env` policy, as `run` does."""
        from ._yaml import env_policy

        with env_policy(self.allowed_env):
            yield

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        carried = getattr(report, RUN_ATTRIBUTE, None)
        if carried is None or self.is_worker:
            return
        from ._pytest_runs import junit_properties

        self._finished[report.nodeid] = carried
        junit_properties(self.config, report.nodeid, carried)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self._lock is not None and self._finished:
            from ._pytest_runs import write_results

            with self.env_policy():
                write_results(self.results, list(self._finished.values()), self.runs)  # type: ignore[arg-type]  # a lock is held only with a results folder

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
        if self._lock is not None:
            self._lock.release()


def _load_error(err: LoadError) -> str:
    """A load error as a collection error shows it: `path:line:col: message` lines, masked (pytest is no writer of ours)."""
    from ._redact import mask
    from .report.check_text import render_load_error

    return mask(render_load_error(err).plain.rstrip("\n"))


_STATE = pytest.StashKey[_State]()
