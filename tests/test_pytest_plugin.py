"""The pytest plugin, driven by pytest's own `pytester`: the example project as test items, selection, xdist,
the results folder, JUnit, errors, and inertness where no project is asked for."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from tests.conftest import EXAMPLE, REPO

pytest_plugins = ["pytester"]

XSD = REPO / "tests" / "data" / "junit" / "junit-10.xsd"
DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
#: Every scenario of the example project; run_stolen_card is the one that fails (the bundled agent's bug).
EXAMPLE_SLUGS = sorted(p.stem for p in (EXAMPLE / "eval" / "scenarios").glob("*.yml"))


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    """A copy of the example project in pytester's folder (its agent module found there)."""
    target = pytester.path / "card_replace"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".dialogcheck", "results"))
    return target


@pytest.fixture
def echoing(project, monkeypatch):
    """The example's card_replace_damaged played by an LLM user (its script taken out) whose loopback model
    echoes its system prompt, so every run's user is suspect; `echoing(conftest_extra, scenario_extra)` sets it up
    and gives (the scenario file, the server)."""
    from tests.llm.test_suspect_runs import EchoServer

    server = EchoServer()
    server.thread.start()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def set_up(conftest_extra: str = "", scenario_extra: str = "") -> tuple[Path, object]:
        with (project / "eval" / "conftest.yml").open("a") as conftest:
            conftest.write(f"simulation:\n{conftest_extra}  llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: echo}}\n")
        scenario = project / "eval" / "scenarios" / "card_replace_damaged.yml"
        text = scenario.read_text()
        scenario.write_text(text.replace(text[text.index("  script:"):text.index("  goals:")], scenario_extra))
        return scenario, server

    try:
        yield set_up
    finally:
        server.stop()


def outcomes(result: pytest.RunResult) -> dict[str, str]:
    """Each test's outcome by its name, from `-rA`'s short summary (`PASSED path::name`)."""
    found = {}
    for line in result.outlines:
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and "::" in rest:
            found[rest.split(" - ")[0].split("::")[-1]] = word
    return found


def test_the_example_project_is_fourteen_items_and_the_two_bugs_fail_with_their_explanation(pytester, project):
    result = pytester.runpytest(str(project), "--no-judge", "-p", "no:randomly", "-rA")
    result.assert_outcomes(passed=12, failed=2)
    assert len(EXAMPLE_SLUGS) == 14
    failing = ("run_stolen_card", "run_order_timeout")
    assert outcomes(result) == {slug: "FAILED" if slug in failing else "PASSED" for slug in EXAMPLE_SLUGS}
    text = result.stdout.str()
    failure = text[text.index("_ run_stolen_card run 1 _"):text.index("short test summary")]
    assert "run_stolen_card run 1: FAIL (4 passed, 2 failed)" in failure
    # each failed check with its closest miss, and the transcript: dialogcheck's explanation, not a traceback
    assert "FAIL  sequencing bot_uttered utter_confirm_replacement" in failure
    assert "closest: bot message utter_greet" in failure
    assert "FAIL  SOP confirm_before_ordering Ask the customer to confirm before ordering" in failure
    assert "USER  My card was stolen yesterday, I need a replacement." in failure
    assert "AGENT Done: your replacement card has been ordered" in failure
    assert "Traceback" not in failure and "pytest_plugin.py" not in failure and "raise " not in failure
    # the checks that passed are not in the explanation
    assert "skill_completed card_replace" not in failure
    timeout = text[text.index("_ run_order_timeout run 1 _"):text.index("_ run_stolen_card run 1 _")]
    assert "FAIL  state_equals orders.card_4417.status: orders.card_4417.status: no such path in the final state" in timeout
    assert "environment bank: 2 calls answered" in timeout and "1 fault: timeout on order_replacement" in timeout


def test_runs_make_one_item_each_with_run_ids(pytester, project):
    result = pytester.runpytest(str(project), "--no-judge", "--dialogcheck-runs", "3", "--collect-only", "-q")
    ids = [line.split("::")[-1] for line in result.outlines if "::" in line]
    assert len(ids) == 42
    assert {f"run_stolen_card[run-{n}]" for n in (1, 2, 3)} <= set(ids)
    ran = pytester.runpytest(str(project), "--no-judge", "--dialogcheck-runs", "3", "-k", "run_stolen_card", "-rA")
    ran.assert_outcomes(failed=3)
    assert set(outcomes(ran)) == {"run_stolen_card[run-1]", "run_stolen_card[run-2]", "run_stolen_card[run-3]"}


def test_a_runs_count_below_one_is_a_usage_error(pytester, project):
    result = pytester.runpytest(str(project), "--dialogcheck-runs", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "'0' is not a whole number of at least 1" in result.stderr.str()


def test_k_and_markers_select_and_strict_markers_accepts_the_tags(pytester, project):
    by_k = pytester.runpytest(str(project / "eval" / "scenarios"), "--no-judge", "-k", "transfer", "-rA")
    assert set(outcomes(by_k)) == {"run_transfer_limit", "transfer_daily_limit"}
    by_tag = pytester.runpytest(str(project), "--no-judge", "--strict-markers", "-m", "policy and not expected_failure", "-rA")
    assert outcomes(by_tag) == {"card_replace_confirms_first": "PASSED"}
    smoke = pytester.runpytest(str(project), "--no-judge", "--strict-markers", "-m", "smoke", "-rA")
    assert set(outcomes(smoke)) == {"card_replace_damaged", "run_damaged_card"}
    every = pytester.runpytest(str(project), "--no-judge", "--strict-markers", "-m", "dialogcheck", "--collect-only", "-q")
    assert "14 tests collected" in every.stdout.str()
    unknown = pytester.runpytest(str(project), "--no-judge", "--strict-markers", "-m", "no_such_tag", "-rA")
    assert outcomes(unknown) == {}


def test_xdist_with_two_workers_gives_the_same_outcomes(pytester, project):
    alone = pytester.runpytest_subprocess(str(project), "--no-judge", "-p", "no:randomly", "-rA")
    workers = pytester.runpytest_subprocess(str(project), "--no-judge", "-p", "no:randomly", "-n", "2", "-rA")
    workers.assert_outcomes(passed=12, failed=2)
    assert "2 workers" in workers.stdout.str()
    assert outcomes(workers) == outcomes(alone)
    assert "closest: bot message utter_greet" in workers.stdout.str()


def junit_of(pytester, project, *args) -> Path:
    path = pytester.path / "junit.xml"
    pytester.runpytest_subprocess(str(project), "--no-judge", "-p", "no:randomly", f"--junitxml={path}", *args)
    return path


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_the_junit_file_carries_the_failure_and_properties_and_validates(pytester, project, workers):
    path = junit_of(pytester, project, *workers)
    xmlschema.XMLSchema(XSD).validate(path)
    root = ET.parse(path).getroot()
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert sorted(cases) == EXAMPLE_SLUGS
    failure = cases["run_stolen_card"].find("failure")
    assert failure is not None and "closest: bot message utter_greet" in failure.text
    assert "SOP confirm_before_ordering" in failure.text
    assert all(case.find("failure") is None for name, case in cases.items() if name not in ("run_stolen_card", "run_order_timeout"))
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert properties["run_stolen_card scenario"] == "run_stolen_card"
    assert properties["run_stolen_card run"] == "1"
    assert properties["run_stolen_card verdict"] == "fail"
    assert properties["run_stolen_card check SOP confirm_before_ordering"] == "fail"
    assert properties["run_stolen_card check 3 skill_completed card_replace"] == "pass"
    assert properties["run_damaged_card verdict"] == "pass"
    assert properties["card_replace_damaged check 1 criterion 'The agent does not claim the order is placed before submitting it'"] == "skip"


def test_the_results_folder_is_written_as_run_writes_it(pytester, project, tmp_path):
    folder = tmp_path / "from-pytest"
    result = pytester.runpytest_subprocess(str(project), "--no-judge", "-n", "2", "--dialogcheck-results", str(folder))
    result.assert_outcomes(passed=12, failed=2)
    by_run = tmp_path / "from-run"
    subprocess.run([str(DIALOGCHECK), "run", str(project), "--no-judge", "--results", str(by_run)], capture_output=True, check=False)

    def files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != ".lock")

    assert files(folder) == files(by_run)
    summary = json.loads((folder / "summary.json").read_text())
    assert (summary["passed"], summary["failed"], summary["errored"]) == (12, 2, 0)
    report = subprocess.run([str(DIALOGCHECK), "report", str(folder)], capture_output=True, text=True, check=False)
    assert report.returncode == 1
    assert "14 runs: 12 passed, 2 failed, 0 errored" in report.stdout
    assert _untimed(folder / "run_stolen_card" / "run_1.txt") == _untimed(by_run / "run_stolen_card" / "run_1.txt")


def _untimed(path: Path) -> str:
    """A run's text without its durations and latencies, the only part that differs between two runs."""
    return re.sub(r"\(?\d+\.\d\d s", "(T s", path.read_text())


def test_a_results_folder_that_is_not_empty_is_a_usage_error_before_anything_runs(pytester, project, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    result = pytester.runpytest(str(project), "--no-judge", "--dialogcheck-results", str(tmp_path / "taken"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--results must name a new or empty folder, and this one is not empty" in result.stderr.str()
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["notes.txt"]


def test_an_undecided_check_is_a_pytest_error_not_a_failure(pytester, project):
    """No judge configured and no --no-judge: the two scenarios with criteria error, as `run` says (exit 3)."""
    result = pytester.runpytest(str(project), "-rA")
    result.assert_outcomes(passed=10, failed=2, errors=2)
    assert outcomes(result)["card_replace_damaged"] == "ERROR"
    assert "no judge configured: set `evaluation.llm` in eval/conftest.yml, or pass --no-judge" in result.stdout.str()


def test_an_agent_that_is_down_errors_every_item_with_runs_message(pytester, project):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = pytester.runpytest(str(project), "--no-judge", "--dialogcheck-agent", f"http://127.0.0.1:{port}/chat", "-rA")
    result.assert_outcomes(errors=14)
    assert "the agent is not reachable, so no run was started" in result.stdout.str()


def test_the_agent_option_picks_the_agent(pytester, project):
    (project / "other_agent.py").write_text(
        "def respond(conversation_id, text, initial_slots=None):\n    return {'messages': [{'text': 'nothing here'}], 'events': []}\n"
    )
    result = pytester.runpytest(str(project), "--no-judge", "--dialogcheck-agent", "python:other_agent:respond", "-k", "run_damaged_card", "-rA")
    result.assert_outcomes(failed=1)
    assert "AGENT nothing here" in result.stdout.str()


def test_a_malformed_agent_option_is_a_usage_error(pytester, project):
    result = pytester.runpytest(str(project), "--dialogcheck-agent", "ftp:nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--dialogcheck-agent:" in result.stderr.str()


def test_replay_answers_every_simulator_call_from_the_cache_and_sends_none(pytester, echoing):
    """--replay maps to `run --replay`: a second session of the same items sends nothing and gives the same outcomes."""
    scenario, server = echoing()
    first = pytester.runpytest(str(scenario), "--no-judge", "-p", "no:randomly", "-rA")
    asked = server.count
    replayed = pytester.runpytest(str(scenario), "--no-judge", "--replay", "-p", "no:randomly", "-rA")
    assert asked == 2  # the first attempt and its retry (the echoing user is suspect)
    assert server.count == asked  # the replay sent nothing
    assert outcomes(first) == outcomes(replayed) == {"card_replace_damaged": "ERROR"}
    assert "simulated user: suspect (2 suspect attempts)" in replayed.stdout.str()


def test_a_broken_scenario_is_a_collection_error_naming_file_line_and_column(pytester, project):
    broken = project / "eval" / "scenarios" / "run_cancel.yml"
    broken.write_text(broken.read_text().replace("skill_cancelled:", "skill_canceled:", 1))
    result = pytester.runpytest(str(project), "--no-judge", "-rA")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = result.stdout.str()
    assert "run_cancel.yml:" in text and "did you mean `skill_cancelled`?" in text
    assert "Traceback" not in text


def test_the_dialogcheck_option_names_the_project(pytester, project):
    result = pytester.runpytest("--dialogcheck", str(project), "--no-judge", "--collect-only", "-q")
    assert "14 tests collected" in result.stdout.str()
    bad = pytester.runpytest("--dialogcheck", str(pytester.path))
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "not a dialogcheck project (no eval/ folder)" in bad.stderr.str()


def test_a_scenario_file_alone_collects_its_runs(pytester, project):
    result = pytester.runpytest(str(project / "eval" / "scenarios" / "run_cancel.yml"), "--no-judge", "--dialogcheck-runs", "2", "-rA")
    assert set(outcomes(result)) == {"run_cancel[run-1]", "run_cancel[run-2]"}
    result.assert_outcomes(passed=2)


def test_inert_where_no_project_is_asked_for(pytester, project):
    """A folder holding a project and ordinary tests: pytest of the folder collects the tests only."""
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest(str(pytester.path), "--collect-only", "-q")
    assert "test_plain.py::test_plain" in result.stdout.str()
    assert "1 test collected" in result.stdout.str()
    assert ".yml" not in result.stdout.str()


def test_importing_the_plugin_imports_no_part_of_the_library():
    code = (
        "import sys, dialogcheck.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('dialogcheck.') and m != 'dialogcheck.pytest_plugin'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_scenario_naming_personas_is_an_item_per_trait_and_run_and_a_suspect_user_is_an_error(pytester, echoing):
    """Every run's user is suspect: a pytest error explained by the review (not the agent's failure); the items are
    the persona matrix `run` plans."""
    scenario, server = echoing("  seed: 11\n", "  personas: [terse, impatient]\n")
    result = pytester.runpytest(str(scenario), "--no-judge", "--dialogcheck-runs", "2", "-p", "no:randomly", "-rA")
    assert sorted(outcomes(result)) == sorted(f"card_replace_damaged[{trait}-run-{n}]" for trait in ("terse", "impatient") for n in (1, 2))
    assert set(outcomes(result).values()) == {"ERROR"}
    text = result.stdout.str()
    assert "simulated user: suspect" in text and "prompt_wording" in text
    assert server.count == 8  # four runs, each retried once (--retry-suspect's default), each its own request
    assert sorted(body["seed"] for body in server.bodies) == [11, 11, 12, 12, 12, 12, 13, 13]  # a retry samples with seed + 1


def test_item_variants_number_runs_as_run_numbers_them():
    from dialogcheck.pytest_plugin import item_variants
    from dialogcheck.scenario.model import Scenario

    plain = Scenario(slug="s", name="S", simulation_context="c")
    assert item_variants(plain, 1) == [("", 1)]
    assert item_variants(plain, 2) == [("[run-1]", 1), ("[run-2]", 2)]
    matrix = Scenario(slug="s", name="S", simulation_context="c", personas=("terse", "verbose"))
    assert item_variants(matrix, 1) == [("[terse]", 1), ("[verbose]", 2)]
    assert item_variants(matrix, 2) == [("[terse-run-1]", 1), ("[verbose-run-1]", 2), ("[terse-run-2]", 3), ("[verbose-run-2]", 4)]
    scripted = Scenario(slug="s", name="S", simulation_context="c", personas=("terse",), script=("hi",))
    assert item_variants(scripted, 1) == [("", 1)]  # a script says the same whoever plays it


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_a_held_key_is_masked_on_the_terminal_in_junit_and_in_the_results_folder(pytester, monkeypatch, tmp_path, workers):
    """The judge's key, which the agent says: masked as `dialogcheck run` masks it. Under xdist the controller, which
    writes the results folder and the JUnit properties, never read the key: the workers' runs come to it masked."""
    key = f"judge-key-{uuid.uuid4().hex}"
    monkeypatch.setenv("JUDGE_KEY", key)
    project = pytester.path / "keyed"
    (project / "eval" / "scenarios").mkdir(parents=True)
    (project / "eval" / "conftest.yml").write_text(
        "agent: {type: python, callable: 'agent:respond'}\n"
        "evaluation:\n  llm: {provider: openai_compatible, model: m, base_url: 'http://127.0.0.1:9/v1', api_key_env: JUDGE_KEY}\n"
    )
    (project / "agent.py").write_text(
        "import os\n\n\ndef respond(conversation_id, text, initial_slots=None):\n"
        "    return {'messages': [{'text': 'hello' if text is None else 'the token is ' + os.environ['JUDGE_KEY']}], 'events': []}\n"
    )
    (project / "eval" / "scenarios" / "s.yml").write_text(
        "scenario:\n  name: s\n  simulation_context: x\n  script: [what is the token?]\n  goals:\n    assertions:\n"
        "      - bot_did_not_utter: {text_matches: token}\n"
    )
    junit, results = tmp_path / "junit.xml", tmp_path / "results"
    result = pytester.runpytest_subprocess(str(project), "-p", "no:randomly", f"--junitxml={junit}", "--dialogcheck-results", str(results), *workers)
    result.assert_outcomes(failed=1)
    assert "FAIL  bot_did_not_utter /token/: bot message 'the token is [redacted]' at event 2 (turn 1) matched" in result.stdout.str()
    written = {str(p): p.read_text() for p in [junit, *results.rglob("*")] if p.is_file()}
    assert [where for where, text in {"stdout": result.stdout.str(), "stderr": result.stderr.str(), **written}.items() if key in text] == []
    assert "the token is [redacted]" in written[str(junit)] and "the token is [redacted]" in written[str(results / "s" / "run_1.json")]


def safe_env_project(pytester) -> tuple[Path, Path]:
    """A project whose scenario has its Python agent told `${MY_SECRET}`; the agent notes what it was told in a file."""
    project = pytester.path / "guarded"
    heard = pytester.path / "heard.txt"
    (project / "eval" / "scenarios").mkdir(parents=True)
    (project / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (project / "agent.py").write_text(
        "def respond(conversation_id, text, initial_slots=None):\n"
        f"    if text is not None:\n        open({str(heard)!r}, 'a').write(text)\n"
        "    return {'messages': [{'text': 'ok'}], 'events': []}\n"
    )
    (project / "eval" / "scenarios" / "s.yml").write_text("scenario:\n  name: s\n  simulation_context: x\n  script: ['say ${MY_SECRET}']\n")
    return project, heard


def test_dialogcheck_safe_env_keeps_environment_values_from_the_agent_as_run_does(pytester, monkeypatch):
    """`DIALOGCHECK_SAFE_ENV=1` (which `run` honours): `${MY_SECRET}` is a collection error at its line and column, and
    the agent is told nothing; `DIALOGCHECK_ALLOW_ENV` lets the named variable through, as `--allow-env` does."""
    project, heard = safe_env_project(pytester)
    monkeypatch.setenv("MY_SECRET", "planted-env-value")
    monkeypatch.setenv("DIALOGCHECK_SAFE_ENV", "1")
    refused = pytester.runpytest_subprocess(str(project), "-p", "no:randomly")
    assert refused.ret == pytest.ExitCode.INTERRUPTED
    refused.stdout.fnmatch_lines([
        f"*{project / 'eval' / 'scenarios' / 's.yml'}:4:12: environment variable `MY_SECRET` may not be read with --safe-env"
        " (used as `${MY_SECRET}`): allow it with --allow-env MY_SECRET",
    ])
    assert not heard.exists() and "planted-env-value" not in refused.stdout.str() + refused.stderr.str()
    assert subprocess.run([str(DIALOGCHECK), "run", str(project)], capture_output=True, check=False).returncode == 2  # as `run` refuses it

    monkeypatch.setenv("DIALOGCHECK_ALLOW_ENV", "OTHER MY_SECRET")
    pytester.runpytest_subprocess(str(project), "-p", "no:randomly").assert_outcomes(passed=1)
    assert heard.read_text() == "say planted-env-value"


def test_a_safe_env_variable_that_is_neither_yes_nor_no_is_a_usage_error(pytester, monkeypatch):
    project, heard = safe_env_project(pytester)
    monkeypatch.setenv("MY_SECRET", "planted-env-value")
    monkeypatch.setenv("DIALOGCHECK_SAFE_ENV", "maybe")
    result = pytester.runpytest_subprocess(str(project), "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "DIALOGCHECK_SAFE_ENV='maybe' is neither yes nor no" in result.stderr.str()
    assert not heard.exists()


def small_project(pytester, failing: dict[str, list[str]]) -> Path:
    """The example's settings and agent with its passing `run_damaged_card`, and a copy of its failing
    `run_stolen_card` at each path of `failing` (under eval/scenarios/), tagged with that path's tags."""
    project = pytester.path / "small"
    scenarios = project / "eval" / "scenarios"
    scenarios.mkdir(parents=True)
    shutil.copy(EXAMPLE / "agent.py", project / "agent.py")
    shutil.copy(EXAMPLE / "eval" / "conftest.yml", project / "eval" / "conftest.yml")
    shutil.copy(EXAMPLE / "eval" / "scenarios" / "run_damaged_card.yml", scenarios / "run_damaged_card.yml")
    stolen = (EXAMPLE / "eval" / "scenarios" / "run_stolen_card.yml").read_text()
    tags_line = "  tags: [bundled_agent, card_replace, policy, expected_failure]\n"
    assert tags_line in stolen
    for place, tags in failing.items():
        (scenarios / place).parent.mkdir(parents=True, exist_ok=True)
        (scenarios / place).write_text(stolen.replace(tags_line, f"  tags: {json.dumps(tags)}\n"))
    return project


def run_of(target: Path, tmp_path: Path) -> tuple[int, dict[str, str]]:
    """What `dialogcheck run TARGET` does: its exit code, and each scenario it ran with the outcome pytest should give it."""
    done = subprocess.run(
        [str(DIALOGCHECK), "run", str(target), "--no-judge", "--format", "json", "--results", str(tmp_path / f"run-{uuid.uuid4().hex}")],
        capture_output=True, text=True, check=False,
    )
    summary = json.loads(done.stdout)
    return done.returncode, {s["slug"]: "FAILED" if s["failed"] else "PASSED" for s in summary["scenarios"]}


#: Places under eval/scenarios/ that `run` walks and pytest's own collection would not: a suffix in another
#: case, and the folders of pytest's default `norecursedirs` (and a virtualenv, which pytest skips too).
UNWALKED_PLACES = [
    "b.YML", "c.Yaml", "build/in_build.yml", "dist/in_dist.yml", ".drafts/drafted.yml", "node_modules/vendored.yml",
    "venv/in_venv.yml", "CVS/in_cvs.yml", "pkg.egg/in_egg.yml", "__pycache__/cached.yml", "deep/build/nested.yml",
]


@pytest.mark.parametrize("place", UNWALKED_PLACES)
def test_pytest_collects_and_judges_exactly_the_scenarios_run_runs(pytester, tmp_path, place):
    """The one failing scenario sits where pytest's walk would not look: pytest fails (exit 1) as `run` does."""
    project = small_project(pytester, {place: ["policy"]})
    if place.startswith("venv/"):
        (project / "eval" / "scenarios" / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    run_exit, by_run = run_of(project, tmp_path)
    assert run_exit == 1 and len(by_run) == 2
    result = pytester.runpytest_subprocess(str(project), "--no-judge", "-p", "no:randomly", "-rA")
    assert outcomes(result) == by_run
    assert result.ret == run_exit


def test_pytest_of_a_folder_or_file_inside_the_scenarios_collects_what_run_of_it_runs(pytester, tmp_path):
    project = small_project(pytester, {"build/in_build.yml": ["policy"], "build/other.YAML": ["policy"], "top.yml": ["policy"]})
    scenarios = project / "eval" / "scenarios"
    for target in (scenarios, scenarios / "build", scenarios / "build" / "other.YAML", project / "eval", "--dialogcheck"):
        args = ["--dialogcheck", str(project)] if target == "--dialogcheck" else [str(target)]
        run_exit, by_run = run_of(project if target in ("--dialogcheck", project / "eval") else target, tmp_path)
        result = pytester.runpytest_subprocess(*args, "--no-judge", "-p", "no:randomly", "-rA")
        assert (target, outcomes(result), result.ret) == (target, by_run, run_exit)


#: Marker names pytest or a common plugin acts on: a scenario tagged with one must still fail as `run` says.
OUTCOME_TAGS = ["xfail", "skip", "skipif", "parametrize", "usefixtures", "filterwarnings", "timeout", "flaky", "asyncio", "xdist_group"]


def test_a_tag_never_changes_an_outcome_and_a_reserved_one_is_selected_by_its_tag_marker(pytester, tmp_path):
    odd = {"_private": "tag__private", "needs review": "tag_needs_review", "a:b": "tag_a_b", "not": "tag_not"}
    project = small_project(pytester, {
        **{f"tagged_{name}.yml": [name, "policy"] for name in OUTCOME_TAGS},
        **{f"odd_{marker}.yml": [tag] for tag, marker in odd.items()},
    })
    pytester.makeconftest(
        "def pytest_collection_finish(session):\n"
        "    for item in session.items:\n"
        "        print('MARKERS', item.name, ' '.join(sorted(mark.name for mark in item.iter_markers())))\n"
    )
    run_exit, by_run = run_of(project, tmp_path)
    assert run_exit == 1 and len(by_run) == 1 + len(OUTCOME_TAGS) + len(odd)
    result = pytester.runpytest_subprocess(str(project), "--no-judge", "--strict-markers", "-p", "no:randomly", "-rA", "-s")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert outcomes(result) == by_run
    result.assert_outcomes(passed=1, failed=len(OUTCOME_TAGS) + len(odd))
    assert result.ret == run_exit
    markers = {line.split()[1]: line.split()[2:] for line in result.outlines if line.startswith("MARKERS ")}
    assert markers == {
        "run_damaged_card": ["bundled_agent", "card_replace", "dialogcheck", "smoke"],
        **{f"tagged_{name}": ["dialogcheck", "policy", f"tag_{name}"] for name in OUTCOME_TAGS},
        **{f"odd_{marker}": ["dialogcheck", marker] for marker in odd.values()},
    }
    selected = pytester.runpytest_subprocess(str(project), "--no-judge", "--strict-markers", "-p", "no:randomly", "-rA", "-m", "tag_xfail or tag_needs_review")
    assert outcomes(selected) == {"tagged_xfail": "FAILED", "odd_tag_needs_review": "FAILED"}
    assert selected.ret == 1


def test_marker_of_keeps_a_plain_tag_and_prefixes_every_other():
    from dialogcheck.pytest_plugin import marker_of

    assert [marker_of(tag) for tag in ("smoke", "expected_failure", "p1-critical", "v2.1", "Skip")] == ["smoke", "expected_failure", "p1-critical", "v2.1", "Skip"]
    assert [marker_of(tag) for tag in ("xfail", "skipif", "usefixtures", "and", "_x", "a b", "x(y)", "é:1")] == [
        "tag_xfail", "tag_skipif", "tag_usefixtures", "tag_and", "tag__x", "tag_a_b", "tag_x_y_", "tag_é_1",
    ]


def test_a_scenario_linked_from_outside_the_project_is_refused_as_run_refuses_it(pytester, tmp_path):
    """`run` refuses a file found in eval/scenarios/ that links out of the project (exit 2); so does pytest's collection."""
    project = small_project(pytester, {})
    outside = tmp_path / "elsewhere.yml"
    shutil.copy(EXAMPLE / "eval" / "scenarios" / "run_stolen_card.yml", outside)
    (project / "eval" / "scenarios" / "linked.yml").symlink_to(outside)
    refused = subprocess.run([str(DIALOGCHECK), "run", str(project), "--no-judge"], capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    message = f"this file is a link to {outside}, outside {project}: files found in a folder must stay inside it"
    assert message in refused.stdout + refused.stderr
    result = pytester.runpytest_subprocess(str(project), "--no-judge", "-p", "no:randomly", "-rA")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert message in result.stdout.str()
    assert outcomes(result) == {}
