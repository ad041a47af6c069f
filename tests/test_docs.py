"""Every example of README.md and of the pages under docs/ runs as written, and what a page shows is what it prints.

The blocks are read from the pages themselves, so an example that drifts from the tool fails here:

- `sh`: each command runs with bash in a temporary folder holding a copy of `examples/`, with
  `.venv` standing for this test's environment. The setup steps of the quick start (making the
  venv, `pip install`, running this test suite) are what CI itself does before it runs these
  tests, so they are left out, and so are comment lines. Each command's exit code is pinned in
  `EXIT_CODES`, and a command a page gains without an entry there fails the test.
- A block without a language right after an `sh` or `python` block is that example's output:
  its lines must appear in what the example printed, in order. A line `...` stands for any lines,
  and `...` within a line for any text.
- `python`: run from the same copy; `yaml`: loaded as the file its top-level key makes it (a
  scenario, an SOP, an environment, or `eval/conftest.yml`); `json`: parsed, and the sample of
  `check --format json` has the shape the command prints.

The pages in `OWN_TESTS` hold examples written against files of their own (`eval/environments/shop.yml`,
a server's `PORT`): the test named there checks them its own way, and these tests leave those pages to it, but for
pinning their commands, shown and not run, in `SHOWN_NOT_RUN`.
The static site builds from docs/ with MkDocs (`mkdocs.yml`), strictly: a broken link or anchor fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dialogcheck.config import CLIENT_KEYS, OUTPUT_BOUNDS, ROLE_PROMPTS, load_config
from dialogcheck.environment import load_environment
from dialogcheck.scenario.load import load_scenario
from dialogcheck.sop.load import load_sop
from tests.conftest import REPO
from tests.test_package import LAYERS

README = REPO / "README.md"
DOCS = REPO / "docs"
#: Pages whose examples a test of their own runs, against the files and servers it sets up.
OWN_TESTS = {
    "docs/environment-reference.md": "tests/environment/test_reference_doc.py",
    "docs/sop-reference.md": "tests/sop/test_reference_doc.py",
}
#: The pages whose examples run here: the README and every page under docs/ that has no test of its own.
PAGES = [page for page in [README, *sorted(DOCS.rglob("*.md"))] if page.relative_to(REPO).as_posix() not in OWN_TESTS]
BLOCK = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```", re.S | re.M)
#: Steps of the quick start that CI runs itself before these tests (and this suite must not run itself).
SETUP = re.compile(r"^(python3 -m venv |\.venv/bin/pip install |\.venv/bin/python -m pytest)")


def _page(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


#: Each command the pages show, and the exit code it must end with (see docs/concepts.md, "Exit codes").
EXIT_CODES = {
    ".venv/bin/dialogcheck run --no-judge examples/card_replace": 1,
    ".venv/bin/dialogcheck check --no-judge --scenario examples/card_replace/eval/scenarios/card_replace_damaged.yml"
    " examples/card_replace/conversations/": 1,
    ".venv/bin/dialogcheck check --no-judge --sop examples/card_replace/sops/replace_card.yml"
    " examples/card_replace/conversations/ --jobs 2 --format json > results.json": 1,
    ".venv/bin/dialogcheck check --no-judge --sop examples/card_replace/sops/replace_card.yml"
    " examples/card_replace/conversations/ --engine ray --output ray-results/": 1,
    ".venv/bin/dialogcheck import --from tau-bench tests/importers/data/tau_bench_airline_sample.json"
    " -o tau/runs.jsonl --derive-scenarios tau/scenarios": 0,
    ".venv/bin/dialogcheck check --no-judge --scenario tau/scenarios --pair 'task-(\\d+)' tau/runs.jsonl": 1,
    ".venv/bin/dialogcheck import --from tau2 tests/importers/data/tau2_airline_sample.json"
    " -o tau2/runs.jsonl --derive-scenarios tau2/scenarios": 0,
    ".venv/bin/dialogcheck check --no-judge --scenario tau2/scenarios --pair 'task-(\\d+)' tau2/runs.jsonl": 1,
    ".venv/bin/dialogcheck import --from tau-bench tests/importers/data/tau_bench_airline_sample.json"
    " -o review/runs.jsonl --derive-scenarios review/scenarios": 0,
    ".venv/bin/dialogcheck check --no-judge --review-user --scenario review/scenarios --pair 'task-(\\d+)' review/runs.jsonl": 1,
    ".venv/bin/dialogcheck import --from tau-bench tests/importers/data/tau_bench_airline_sample.json"
    " -o trials/runs.jsonl --derive-scenarios trials/scenarios": 0,
    ".venv/bin/dialogcheck check --sop tests/importers/data/weather_sop.yml --input-format otlp"
    " tests/importers/data/otlp_weather.jsonl --otlp-out verdicts.jsonl": 1,
    "grep trial-0 trials/runs.jsonl > trials/trial0.jsonl": 0,
    "grep trial-1 trials/runs.jsonl > trials/trial1.jsonl": 0,
    ".venv/bin/dialogcheck check --no-judge --scenario trials/scenarios --pair 'task-(\\d+)' trials/trial0.jsonl --format json > trials/base.json": 1,
    ".venv/bin/dialogcheck check --no-judge --scenario trials/scenarios --pair 'task-(\\d+)' trials/trial1.jsonl --format json > trials/new.json": 1,
    ".venv/bin/dialogcheck compare trials/base.json trials/new.json --match 'task-(\\d+)' --fail-on regression": 0,
    ".venv/bin/pytest examples/card_replace --no-judge -q": 1,
    ".venv/bin/dialogcheck run --no-judge examples/card_replace/eval/scenarios/run_order_timeout.yml --runs 4 --faults off"
    " --results world/baseline": 0,
    ".venv/bin/dialogcheck run --no-judge examples/card_replace/eval/scenarios/run_order_timeout.yml --runs 4 --results world/faulted": 1,
    ".venv/bin/dialogcheck compare world/baseline world/faulted": 0,
}
#: Commands that start a Ray instance: run with the `ray` marker's tests, deselected with -m "not ray".
RAY = {command for command in EXIT_CODES if "--engine ray" in command}


def _blocks(page: Path) -> list[tuple[str, str, int]]:
    text = page.read_text(encoding="utf-8")
    return [(m["lang"], m["body"], text.count("\n", 0, m.start()) + 1) for m in BLOCK.finditer(text)]


def _examples(lang: str, pages: list[Path] = PAGES) -> list[tuple[str, str | None, str]]:
    """Each block of `lang` on `pages`, the output block that follows it (if any), and where it is (`page:line`)."""
    found = []
    for page in pages:
        blocks = _blocks(page)
        for i, (kind, body, line) in enumerate(blocks):
            if kind == lang:
                shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "" else None
                found.append((body, shown, f"{_page(page)}:{line}"))
    return found


def _command_blocks(pages: list[Path] = PAGES) -> list[tuple[list[str], str | None, str]]:
    """The commands of each `sh` block, in order, with the block's shown output (that of its last command) and its place."""
    found = []
    for body, shown, where in _examples("sh", pages):
        lines = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        steps = [step for line in lines for step in line.split(" && ")]
        steps = [step for step in steps if not SETUP.match(step)]
        if steps:
            found.append((steps, shown, where))
    return found


def assert_shown(shown: str, printed: str) -> None:
    """Each shown line appears in `printed`, in order; a line `...` skips lines, `...` in a line any text."""
    lines = printed.splitlines()
    at, skipping = 0, False
    for want in shown.splitlines():
        if want == "...":
            skipping = True
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.split("...")))
        while at < len(lines) and not pattern.fullmatch(lines[at]):
            assert skipping, f"the page shows {want!r}, but the output has {lines[at]!r} there:\n{printed}"
            at += 1
        assert at < len(lines), f"the page shows {want!r}, which the output lacks:\n{printed}"
        at, skipping = at + 1, False


def test_output_matching_follows_the_pages_conventions() -> None:
    assert_shown("a\n...\nd ...\ne\nf: .../x/...", "a\nb\nc\nd and more\ne\nf: /tmp/x/1")
    for shown, printed in (("a\nc", "a\nb\nc"), ("b\na", "a\nb"), ("a ...", "b a"), ("x", ""), ("a.b", "axb")):
        with pytest.raises(AssertionError):
            assert_shown(shown, printed)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A folder like this repository's root: copies of the examples and the sample data, `.venv` being this environment.

    Commands run one after the other in it, as a reader would, so one may read what an earlier one wrote."""
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("results", "__pycache__"))
    shutil.copytree(REPO / "tests" / "importers" / "data", tmp_path / "tests" / "importers" / "data")
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return tmp_path


#: The commands of the pages in `OWN_TESTS`: templates with a server's PORT or options in brackets, shown and not run.
SHOWN_NOT_RUN = {
    "curl -s http://127.0.0.1:PORT/tools",
    "curl -s -X POST http://127.0.0.1:PORT/tools/get_order -d '{\"order_id\": \"O1\"}'",
    "dialogcheck environment serve eval/environments/shop.yml [--port N] [--host 127.0.0.1] [--seed N] [--faults on|off]",
}


def test_every_command_of_every_page_has_its_exit_code_pinned() -> None:
    commands = [command for steps, _, _ in _command_blocks() for command in steps]
    assert commands, "no page shows a command"
    assert sorted(set(commands)) == sorted(EXIT_CODES)
    templates = [command for page in OWN_TESTS for steps, _, _ in _command_blocks([REPO / page]) for command in steps]
    assert sorted(templates) == sorted(SHOWN_NOT_RUN)


def test_the_pages_left_to_their_own_tests_are_read_by_those_tests() -> None:
    for page, test in OWN_TESTS.items():
        assert (REPO / page).is_file(), page
        assert Path(page).name in (REPO / test).read_text(encoding="utf-8"), test


@pytest.mark.parametrize(
    "steps, shown",
    [
        pytest.param(steps, shown, marks=[pytest.mark.ray] if RAY & set(steps) else [], id=where)
        for steps, shown, where in _command_blocks()
    ],
)
def test_commands_run_as_written(steps: list[str], shown: str | None, workdir: Path) -> None:
    """The commands of one block run in order in one folder, as a reader runs them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DIALOGCHECK_", "FORCE_COLOR"))}
    for command in steps:
        done = subprocess.run(["bash", "-c", command], cwd=workdir, env=env | {"NO_COLOR": "1"}, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == EXIT_CODES[command], command + "\n" + done.stdout + done.stderr
    if shown is not None:
        assert_shown(shown, done.stdout)


@pytest.mark.parametrize("body, shown", [pytest.param(body, shown, id=where) for body, shown, where in _examples("python")])
def test_python_examples_run_and_print_what_is_shown(body: str, shown: str | None, workdir: Path) -> None:
    """Each example runs twice in the same folder, as a reader who runs it again does: what the first run
    wrote (a results folder) never stops the second."""
    script = workdir / "example.py"
    script.write_text(body + ("\nprint(respond('c-1', None))\n" if "def respond(" in body else ""), encoding="utf-8")
    for attempt in ("first", "second"):
        done = subprocess.run([sys.executable, script.name], cwd=workdir, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{attempt} run: {done.stderr}"
        if shown is not None:
            assert_shown(shown, done.stdout)


def test_the_pages_have_python_examples() -> None:
    assert len(_examples("python")) >= 4


@pytest.mark.parametrize("body", [pytest.param(body, id=where) for body, _, where in _examples("yaml")])
def test_yaml_examples_load(tmp_path: Path, body: str) -> None:
    project = tmp_path / "project"
    if body.startswith("scenario:"):
        path = project / "eval" / "scenarios" / "example.yml"
        loader = load_scenario
    elif body.startswith("sop:"):
        path, loader = project / "sops" / "example.yml", load_sop
    elif body.startswith("environment:"):
        path, loader = project / "eval" / "environments" / "example.yml", load_environment
    else:
        path, loader = project / "eval" / "conftest.yml", load_config
        for template in re.findall(r"_prompt: (\S+)", body):  # prompt overrides name files of the project
            (project / template).parent.mkdir(parents=True, exist_ok=True)
            (project / template).write_text("{{ transcript }}\n", encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    assert loader(path) is not None


def test_the_pages_have_yaml_examples_of_each_kind() -> None:
    heads = {body.split(":")[0] for body, _, _ in _examples("yaml")}
    assert {"scenario", "environment", "agent", "evaluation", "simulation"} <= heads


def _shape(sample, actual, where: str = "$") -> None:
    """`actual` has every key of `sample`, with values of the same JSON type (`"..."` stands for any string)."""
    if isinstance(sample, dict):
        assert isinstance(actual, dict), where
        for key, value in sample.items():
            assert key in actual, f"{where}.{key} is missing"
            _shape(value, actual[key], f"{where}.{key}")
    elif isinstance(sample, list):
        assert isinstance(actual, list), where
        if sample and actual:
            _shape(sample[0], actual[0], f"{where}[0]")
    else:
        assert type(sample) is type(actual) or (isinstance(sample, float | int) and isinstance(actual, float | int)), where


def test_json_examples_parse_and_the_output_sample_has_the_printed_shape(workdir: Path) -> None:
    examples = [json.loads(body) for body, _, _ in _examples("json")]
    assert examples
    sample = next(e for e in examples if "verdict" in e)
    command = [
        str(workdir / ".venv" / "bin" / "dialogcheck"), "check", "--no-judge", "--format", "json",
        "--scenario", "examples/card_replace/eval/scenarios/card_replace_damaged.yml",
        "examples/card_replace/conversations/damaged_card_ok.jsonl",
    ]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=120)
    _shape(sample, json.loads(done.stdout))
    with pytest.raises(AssertionError):
        _shape(sample, {"verdict": "pass"})


#: The command reference's claim about `--format`: every command but the ones it names in backquotes after "all but".
FORMAT_CLAIM = re.compile(r"Every command (?:that prints a result )?takes `--format text\|json`(?: \(all but (?P<but>[^)]*?),)?")
COMMANDS = DOCS / "commands-reference.md"


def test_the_commands_said_to_take_format_are_exactly_those_that_take_it() -> None:
    """The command table against `--help`: `--format` where the reference says so, and where it says not,
    a usage error (exit 2)."""
    text = COMMANDS.read_text(encoding="utf-8")
    claim = FORMAT_CLAIM.search(text)
    assert claim is not None
    excepted = set(re.findall(r"`(\w+)`", claim["but"] or ""))
    commands = sorted(set(re.findall(r"^\| `dialogcheck (\w+)", text, re.M)))
    assert len(commands) == 9 and excepted <= set(commands)
    dialogcheck = str(Path(sys.executable).parent / "dialogcheck")
    for command in commands:
        shown = subprocess.run([dialogcheck, command, "--help"], capture_output=True, text=True, check=False)
        assert ("--format" in shown.stdout) == (command not in excepted), command
    for command in excepted:
        refused = subprocess.run([dialogcheck, command, "--format", "json"], capture_output=True, text=True, check=False, timeout=120)
        assert refused.returncode == 2, command


def test_the_site_builds_strictly_with_every_page_in_it(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a link to a missing page or anchor, or a page left out of the nav, fails the build."""
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    for page in DOCS.rglob("*.md"):
        built = site / ("index.html" if page.name == "index.md" else page.relative_to(DOCS).with_suffix("") / "index.html")
        assert built.is_file(), page


def _anchors(page: Path) -> set[str]:
    """The anchors the site gives a page's headings (Python-Markdown's, which MkDocs uses)."""
    from markdown.extensions.toc import slugify

    text = BLOCK.sub("", page.read_text(encoding="utf-8"))
    return {slugify(re.sub(r"`([^`]*)`", r"\1", title), "-") for title in re.findall(r"^#+ (.*)$", text, re.M)}


def test_the_readme_links_lead_to_pages_and_their_headings() -> None:
    """The site checks the links between its pages; the README, outside it, is checked here."""
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", README.read_text(encoding="utf-8"))
    assert len(links) >= 10
    for target, anchor in links:
        assert (REPO / target).is_file(), target
        assert not anchor or anchor in _anchors(REPO / target), f"{target}#{anchor}"


def test_the_anchors_are_those_the_site_makes() -> None:
    assert {"the-folder-of-check-output", "llm-judge-criteria-llm_judge-steps-quality-metrics"} <= (
        _anchors(DOCS / "results-reference.md") | _anchors(DOCS / "llm-judge.md"))


def _table(page: Path, heading: str) -> list[list[str]]:
    """The rows of the first table under `heading` (header and rule left out), each a list of its cells."""
    text = page.read_text(encoding="utf-8")
    section = re.split(r"^#+ .*$", text.partition(f"\n{heading}\n")[2], flags=re.M)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert rows, f"no table under {heading!r} in {_page(page)}"
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip().strip("|"))] for row in rows[2:]]


def test_the_layer_table_is_the_list_the_layer_test_holds_the_package_to() -> None:
    rows = _table(DOCS / "architecture.md", "## Layers")
    assert [int(row[0]) for row in rows] == list(range(len(LAYERS)))
    assert [set(re.findall(r"`([^`]+)`", row[1])) for row in rows] == LAYERS


def test_the_scenario_table_names_every_field_of_a_scenario() -> None:
    from dialogcheck.scenario.load import GOALS_FIELDS, SCENARIO_FIELDS

    rows = _table(DOCS / "scenario-reference.md", "Every field of `scenario`:")
    documented = [name for row in rows for name in re.findall(r"`([a-z_]+)`", row[0])]
    assert sorted(documented) == sorted(SCENARIO_FIELDS)
    goals = next(row for row in rows if row[0] == "`goals`")
    assert set(re.findall(r"`([a-z_]+)`", goals[1])) == set(GOALS_FIELDS)


#: The config reference's tables of keys the loader refuses others beside: each heading, and the mapping its keys
#: are read in. (An `llm` block passes any other key to the provider.)
CONFIG_TABLES = {"## The keys": "", "## `agent`": "agent", "## `simulation`": "simulation", "## `evaluation`": "evaluation",
                 "## `cache`": "cache"}


def _config_keys(heading: str) -> list[str]:
    return [name for row in _table(DOCS / "config-reference.md", heading) for name in re.findall(r"^`([a-z_]+)`$", row[0])]


def _problems(tmp_path: Path, config: object) -> str:
    """What loading `config` as a project's eval/conftest.yml says is wrong with it ("" when nothing is)."""
    from dialogcheck.errors import LoadError

    path = tmp_path / "eval" / "conftest.yml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(config), encoding="utf-8")
    try:
        load_config(path)
    except LoadError as err:
        return str(err)
    return ""


@pytest.mark.parametrize("heading, where", CONFIG_TABLES.items())
def test_every_key_the_config_reference_names_is_one_the_loader_reads(tmp_path: Path, heading: str, where: str) -> None:
    """Each documented key, written where the table says, is never an `unknown field` (whatever else its
    placeholder value is wrong about)."""
    keys = _config_keys(heading)
    assert keys
    for key in keys:
        config: object = {key: "x"}
        for part in reversed(where.split(".") if where else []):
            config = {part: config}
        assert f"unknown field `{key}`" not in _problems(tmp_path, config), (heading, key)


def test_the_llm_block_table_names_the_keys_dialogcheck_itself_reads() -> None:
    assert sorted(_config_keys("## An `llm` block")) == sorted({*CLIENT_KEYS, *OUTPUT_BOUNDS})


def test_the_config_reference_names_the_prompt_templates_the_loader_reads() -> None:
    assert set(ROLE_PROMPTS["simulation"]) <= set(_config_keys("## `simulation`"))
    assert set(ROLE_PROMPTS["evaluation"]) <= set(_config_keys("## `evaluation`"))


def test_a_key_the_loader_does_not_read_is_reported_as_unknown(tmp_path: Path) -> None:
    """The check above can fail: a key no loader reads is an `unknown field`."""
    assert "unknown field `colour`" in _problems(tmp_path, {"cache": {"colour": "x"}})
    assert "unknown field `colour`" in _problems(tmp_path, {"colour": "x"})


def test_the_options_shown_are_what_each_command_s_help_prints() -> None:
    from tests.commands_help import COMMANDS, PAGE, with_help

    text = PAGE.read_text(encoding="utf-8")
    assert {command[0] for command in COMMANDS} == set(re.findall(r"^\| `dialogcheck (\w+)", text, re.M))
    assert text == with_help(text), "the help changed: run .venv/bin/python -m tests.commands_help"
