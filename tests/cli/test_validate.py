"""`dialogcheck validate PATH...`: files and folders, text and JSON, exit codes 0 and 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests import inprocess
from tests.conftest import EXAMPLE, plain_env

SCENARIOS = EXAMPLE / "eval" / "scenarios"
GOOD = "scenario:\n  name: Good\n  simulation_context: c\n"
BAD_TYPE = "scenario:\n  name: Bad\n  simulation_context: c\n  type: happy\n"
BAD_TYPE_MESSAGE = (
    "`type` in `scenario` must be one of happy_path, sad_path, edge_case, ambiguity, out_of_scope, escalation,"
    " adversarial, got 'happy' (did you mean `happy_path`?)"
)
DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"


pytestmark = pytest.mark.usefixtures("plain_output")


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, ["validate", *args], env=env)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_example_project_is_valid():
    result = run(str(EXAMPLE))
    assert result.exit_code == 0, result.output
    for scenario in sorted(SCENARIOS.glob("*.yml")):
        assert f"ok    {scenario}  scenario " in result.stdout
    assert "ok    " + str(SCENARIOS / "card_replace_damaged.yml") + "  scenario 'Customer replaces a damaged card': 11 assertions, 1 criterion\n" in result.stdout
    count = len(list(EXAMPLE.rglob("*.yml")))
    assert result.stdout.endswith(f"{count} files, {count} valid, 0 with problems\n")
    assert "\x1b[" not in result.stdout


def test_one_good_file(tmp_path):
    path = write(tmp_path, "good.yml", GOOD)
    result = run(str(path))
    assert result.exit_code == 0
    assert result.stdout == f"ok    {path}  scenario 'Good': 0 assertions, 0 criteria\n1 file, 1 valid, 0 with problems\n"


def test_bad_file_exits_2_with_its_position(tmp_path):
    path = write(tmp_path, "bad.yml", BAD_TYPE)
    result = run(str(path))
    assert result.exit_code == 2
    assert result.stdout == f"{path}:4:9: {BAD_TYPE_MESSAGE}\n1 file, 0 valid, 1 with problems\n"


def test_folder_with_good_and_bad_files_reports_every_problem(tmp_path):
    write(tmp_path, "a_good.yml", GOOD)
    bad = write(tmp_path, "b_bad.yml", BAD_TYPE)
    worse = write(tmp_path, "nested/c_worse.yaml", "scenario:\n  name: N\n  name: M\n  simulation_context: c\n")
    result = run(str(tmp_path))
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"ok    {tmp_path / 'a_good.yml'}")
    assert lines[1:] == [
        f"{bad}:4:9: {BAD_TYPE_MESSAGE}",
        f"{worse}:3:3: duplicate key `name` (first defined at line 2)",
        "3 files, 1 valid, 2 with problems",
    ]


def test_folders_skip_results_and_non_yaml_files(tmp_path):
    write(tmp_path, "eval/scenarios/s.yml", GOOD)
    write(tmp_path, "eval/results/2024/s.yml", "broken: [")
    write(tmp_path, "notes.txt", "broken: [")
    result = run(str(tmp_path))
    assert result.exit_code == 0
    assert result.stdout.endswith("1 file, 1 valid, 0 with problems\n")


def test_several_paths(tmp_path):
    a = write(tmp_path, "one/a.yml", GOOD)
    b = write(tmp_path, "two/b.yml", GOOD)
    result = run(str(a), str(tmp_path / "two"))
    assert result.exit_code == 0
    assert f"ok    {a}" in result.stdout and f"ok    {b}" in result.stdout


def test_config_file(tmp_path):
    write(tmp_path, "eval/conftest.yml", "evaluation:\n  llm: {provider: openai, model: m}\n")
    assert run(str(tmp_path)).exit_code == 0
    bad = write(tmp_path, "eval/conftest.yml", "- a list\n")
    result = run(str(bad))
    assert result.exit_code == 2
    assert f"{bad}:1:1: the config must be a mapping, got a list\n" in result.stdout


def test_not_a_scenario_file(tmp_path):
    path = write(tmp_path, "other.yml", "name: x\n")
    result = run(str(path))
    assert result.exit_code == 2
    assert f"{path}:1:1: not a scenario, SOP or environment file: expected a top-level `scenario:`, `sop:` or `environment:` key, got `name`\n" in result.stdout


def test_unknown_key_before_scenario_is_an_unknown_field(tmp_path):
    path = write(tmp_path, "s.yml", "extra: 1\n" + GOOD)
    result = run(str(path))
    assert result.exit_code == 2
    assert f"{path}:1:1: unknown field `extra` in the scenario file\n" in result.stdout


def test_environment_variables_come_from_the_environment(tmp_path):
    path = write(tmp_path, "s.yml", GOOD.replace("Good", "For ${DIALOGCHECK_WHO}"))
    assert run(str(path), env={"DIALOGCHECK_WHO": "Ana"}).exit_code == 0
    result = run(str(path), env={"DIALOGCHECK_WHO": None})
    assert result.exit_code == 2
    assert f"{path}:2:9: environment variable `DIALOGCHECK_WHO` is not set (used as `${{DIALOGCHECK_WHO}}`)\n" in result.stdout


def test_missing_path(tmp_path):
    missing = tmp_path / "nope.yml"
    result = run(str(missing))
    assert result.exit_code == 2
    assert result.stderr == f"{missing}:1:1: no such file or folder\n"
    assert result.stdout == ""


def test_folder_without_yaml(tmp_path):
    result = run(str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path}:1:1: no YAML files found\n"


def test_no_path_is_a_usage_error():
    result = run()
    assert result.exit_code == 2
    assert "Missing argument 'PATHS...'" in result.stderr


# --- --format json ---------------------------------------------------------------


def test_json_valid(tmp_path):
    path = write(tmp_path, "good.yml", GOOD)
    result = run("--format", "json", str(path))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"files": [{"path": str(path), "ok": True, "kind": "scenario"}], "valid": True}


def test_json_bad_file(tmp_path):
    good = write(tmp_path, "a.yml", GOOD)
    bad = write(tmp_path, "b.yml", BAD_TYPE)
    result = run("--format", "json", str(tmp_path))
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    problem = {"message": BAD_TYPE_MESSAGE, "file": str(bad), "line": 4, "column": 9}
    assert document["error"] == problem
    assert document["valid"] is False
    assert document["files"] == [
        {"path": str(good), "ok": True, "kind": "scenario"},
        {"path": str(bad), "ok": False, "problems": [problem]},
    ]


def test_json_missing_path(tmp_path):
    missing = tmp_path / "nope"
    result = run("--format", "json", str(missing))
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert {key: error[key] for key in ("message", "file", "line", "column")} == {
        "message": "no such file or folder",
        "file": str(missing),
        "line": 1,
        "column": 1,
    }


# --- the installed entry point -----------------------------------------------


def test_installed_command(tmp_path):
    bad = write(tmp_path, "bad.yml", BAD_TYPE)
    env = plain_env()
    ok = subprocess.run([str(DIALOGCHECK), "validate", str(SCENARIOS)], capture_output=True, text=True, env=env, check=False)
    assert ok.returncode == 0, ok.stderr
    count = len(list(SCENARIOS.glob("*.yml")))
    assert ok.stdout.endswith(f"{count} files, {count} valid, 0 with problems\n")
    failed = subprocess.run([str(DIALOGCHECK), "validate", str(bad)], capture_output=True, text=True, env=env, check=False)
    assert failed.returncode == 2
    assert f"{bad}:4:9: {BAD_TYPE_MESSAGE}\n" in failed.stdout
    assert "\x1b[" not in failed.stdout
    assert "Traceback" not in failed.stdout + failed.stderr


# --- folders: dialogcheck's own files, not every YAML file ------------------------------------

RASA_FILES = {
    "domain.yml": 'version: "3.1"\nintents: [greet, affirm]\nresponses:\n  utter_greet:\n    - text: "Hi!"\n',
    "config.yml": "recipe: default.v1\nlanguage: en\npipeline: []\npolicies: []\n",
    "data/nlu.yml": 'version: "3.1"\nnlu:\n- intent: greet\n  examples: |\n    - hi\n    - hello\n',
    "data/rules.yml": 'version: "3.1"\nrules:\n- rule: greet\n  steps:\n  - intent: greet\n  - action: utter_greet\n',
    "endpoints.yml": "action_endpoint:\n  url: http://localhost:5055/webhook\n",
    "credentials.yml": "rest:\nsocketio:\n  user_message_evt: user_uttered\n",
}
SOP = "sop:\n  id: s\n  name: S\n  steps:\n    - {type: tool_called, toolSlug: lookup}\n"


def rasa_project(root: Path) -> Path:
    for name, text in RASA_FILES.items():
        write(root, name, text)
    return root


def test_validate_dot_in_a_rasa_project_root_reads_only_dialogcheck_files(tmp_path):
    """`domain.yml` and `data/nlu.yml` once failed `validate .` as scenarios without a `scenario:` key."""
    root = rasa_project(tmp_path / "bot")
    write(root, "eval/conftest.yml", "evaluation:\n  llm: {provider: openai, model: m}\n")
    write(root, "eval/scenarios/greet.yml", GOOD)
    write(root, "sops/lookup.yml", SOP)
    done = inprocess.run([DIALOGCHECK, "validate", "."], cwd=root, text=True, env=plain_env())
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split("  ")[0] + " " + line.split()[1] if line.startswith("ok") else line for line in lines] == [
        "ok eval/conftest.yml",
        "ok eval/scenarios/greet.yml",
        "ok sops/lookup.yml",
        "3 files, 3 valid, 0 with problems",
    ]


def test_the_eval_folder_of_a_project_is_a_project_too(tmp_path):
    root = rasa_project(tmp_path)
    config = write(root, "eval/conftest.yml", "agent: {type: http, url: http://localhost:1}\n")
    scenario = write(root, "eval/scenarios/a.yml", GOOD)
    result = run(str(root / "eval"))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith(f"ok    {config}") and f"ok    {scenario}" in result.stdout
    assert result.stdout.endswith("2 files, 2 valid, 0 with problems\n")


def test_a_folder_without_a_project_reads_the_files_whose_top_level_key_is_dialogcheck(tmp_path):
    root = rasa_project(tmp_path)
    scenario = write(root, "checks/greet.yml", GOOD)
    sop = write(root, "checks/lookup.yml", SOP)
    result = run(str(root))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"ok    {scenario}  ") and lines[1].startswith(f"ok    {sop}  ")
    skipped = sorted(str(root / name) for name in RASA_FILES)
    assert lines[2] == (
        f"skipped 6 YAML files without a top-level `scenario:` or `sop:` key: {', '.join(skipped[:5])} and 1 more"
    )
    assert lines[3:] == ["2 files, 2 valid, 0 with problems"]


def test_skipped_files_are_listed_in_json(tmp_path):
    write(tmp_path, "domain.yml", RASA_FILES["domain.yml"])
    good = write(tmp_path, "s.yml", GOOD)
    document = json.loads(run("--format", "json", str(tmp_path)).stdout)
    assert document == {
        "files": [{"path": str(good), "ok": True, "kind": "scenario"}],
        "valid": True,
        "skipped": [str(tmp_path / "domain.yml")],
    }


def test_a_misspelt_top_level_key_is_reported_not_skipped(tmp_path):
    bad = write(tmp_path, "typo.yml", GOOD.replace("scenario:", "senario:"))
    write(tmp_path, "domain.yml", RASA_FILES["domain.yml"])
    result = run(str(tmp_path))
    assert result.exit_code == 2
    assert result.stdout.splitlines()[0] == (
        f"{bad}:1:1: not a scenario, SOP or environment file: expected a top-level `scenario:`, `sop:` or `environment:` key, got `senario`"
    )


@pytest.mark.parametrize("ends", ["\r\n", "\r"])
def test_the_top_level_key_is_found_whatever_the_line_ends(tmp_path, ends):
    write(tmp_path, "s.yml", GOOD.replace("\n", ends))
    assert run(str(tmp_path)).stdout.endswith("1 file, 1 valid, 0 with problems\n")


def test_every_yaml_file_of_a_scenarios_or_sops_folder_must_be_a_definition(tmp_path):
    for folder in ("scenarios", "sops"):
        stray = write(tmp_path, f"{folder}/notes.yml", "name: x\n")
        result = run(str(tmp_path / folder))
        assert result.exit_code == 2
        assert f"{stray}:1:1: not a scenario, SOP or environment file" in result.stdout


def test_a_folder_of_other_yaml_only_is_bad_input_naming_what_was_skipped(tmp_path):
    write(tmp_path, "domain.yml", RASA_FILES["domain.yml"])
    result = run(str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == (
        f"{tmp_path}:1:1: no scenario, SOP or config files found: 1 YAML file without a top-level `scenario:` or `sop:` key"
        f" ({tmp_path / 'domain.yml'})\n"
    )


def test_a_file_named_on_the_command_line_is_always_read(tmp_path):
    domain = write(tmp_path, "domain.yml", RASA_FILES["domain.yml"])
    result = run(str(domain))
    assert result.exit_code == 2
    assert f"{domain}:1:1: not a scenario, SOP or environment file: expected a top-level `scenario:`, `sop:` or `environment:` key, got `version`" in result.stdout


def test_names_from_a_file_cannot_forge_a_line(tmp_path):
    """An SOP id holding a carriage return (a file's own text) is shown escaped, never as a line of its own."""
    sop = tmp_path / "s.yml"
    sop.write_text('sop:\n  id: "a\\rPASS  everything\\n"\n  name: n\n  steps:\n    - {type: tool_called, toolSlug: x}\n')
    result = CliRunner().invoke(cli, ["validate", str(sop)])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == f"ok    {sop}  SOP a\\rPASS  everything\\n 'n': 1 step"
    assert "\r" not in result.stdout


def project(tmp_path: Path, config: str, scenario: str) -> Path:
    write(tmp_path, "eval/conftest.yml", "agent: {type: python, callable: 'agent:respond'}\n" + config)
    write(tmp_path, "eval/scenarios/s.yml", scenario)
    return tmp_path


UNSCRIPTED = "scenario:\n  name: s\n  simulation_context: c\n  goals:\n    criteria:\n      - The agent is polite\n"
LLM = "  llm: {provider: openai_compatible, model: m, base_url: 'http://127.0.0.1:9/v1'}\n"


def test_a_scenario_run_would_refuse_or_leave_unjudged_is_warned_of_at_its_key_and_still_valid(tmp_path, monkeypatch):
    monkeypatch.chdir(project(tmp_path, "", UNSCRIPTED))
    result = run(".")
    assert result.exit_code == 0, result.output
    config = tmp_path / "eval" / "conftest.yml"
    assert result.stderr == (
        f"eval/scenarios/s.yml:1:1: warning: `run` will refuse this scenario: it has no `script`, and no simulation model is"
        f" configured (simulation.llm in {config})\n"
        f"eval/scenarios/s.yml:5:5: warning: its criteria will not be judged: no judge is configured (evaluation.llm in {config});"
        " `run` and `check` count them errored (exit code 3), or skipped with --no-judge\n"
    )
    assert result.stdout.endswith("2 files, 2 valid, 0 with problems\n")
    document = json.loads(run(".", "--format", "json").stdout)
    assert document["valid"] is True
    assert [(w["file"], w["line"], w["column"]) for w in document["warnings"]] == [("eval/scenarios/s.yml", 1, 1), ("eval/scenarios/s.yml", 5, 5)]


@pytest.mark.parametrize(
    "config, scenario, warned",
    [
        ("simulation:\n" + LLM, UNSCRIPTED, ["criteria"]),
        ("evaluation:\n" + LLM, UNSCRIPTED, ["script"]),
        ("", UNSCRIPTED.replace("  goals:", "  script: [hello]\n  goals:"), ["criteria"]),
        ("simulation:\n" + LLM + "evaluation:\n" + LLM, UNSCRIPTED, []),
        ("", "scenario:\n  name: s\n  simulation_context: c\n  script: [hi]\n", []),
    ],
)
def test_each_warning_goes_only_with_what_is_missing(tmp_path, monkeypatch, config, scenario, warned):
    monkeypatch.chdir(project(tmp_path, config, scenario))
    warnings = json.loads(run(".", "--format", "json").stdout).get("warnings", [])
    assert [("script" if "`script`" in w["message"] else "criteria") for w in warnings] == warned


def test_a_scenario_outside_a_project_gets_no_warning(tmp_path):
    path = write(tmp_path, "s.yml", UNSCRIPTED)
    result = run(str(path))
    assert result.exit_code == 0 and result.stderr == ""
