"""`dialogcheck validate PATH...`: files and folders, text and JSON, exit codes 0 and 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE

SCENARIOS = EXAMPLE / "eval" / "scenarios"
GOOD = "scenario:\n  name: Good\n  simulation_context: c\n"
BAD_TYPE = "scenario:\n  name: Bad\n  simulation_context: c\n  type: happy\n"
BAD_TYPE_MESSAGE = (
    "`type` in `scenario` must be one of happy_path, sad_path, edge_case, ambiguity, out_of_scope, escalation,"
    " adversarial, got 'happy' (did you mean `happy_path`?)"
)
DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"


@pytest.fixture(autouse=True)
def _plain_output(monkeypatch):
    """Output is judged as a pipe sees it, whatever the developer's shell forces."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)


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
    assert "ok    " + str(SCENARIOS / "card_replace_damaged.yml") + "  scenario 'Customer replaces a damaged card': 11 assertions, 1 criteria\n" in result.stdout
    count = len(list(EXAMPLE.rglob("*.yml")))
    assert result.stdout.endswith(f"{count} files, {count} valid, 0 with problems\n")
    assert "\x1b[" not in result.stdout


def test_one_good_file(tmp_path):
    path = write(tmp_path, "good.yml", GOOD)
    result = run(str(path))
    assert result.exit_code == 0
    assert result.stdout == f"ok    {path}  scenario 'Good': 0 assertions, 0 criteria\n1 files, 1 valid, 0 with problems\n"


def test_bad_file_exits_2_with_its_position(tmp_path):
    path = write(tmp_path, "bad.yml", BAD_TYPE)
    result = run(str(path))
    assert result.exit_code == 2
    assert result.stdout == f"{path}:4:9: {BAD_TYPE_MESSAGE}\n1 files, 0 valid, 1 with problems\n"


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
    assert result.stdout.endswith("1 files, 1 valid, 0 with problems\n")


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
    assert f"{path}:1:1: not a scenario or SOP file: expected a top-level `scenario:` or `sop:` key, got `name`\n" in result.stdout


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
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    ok = subprocess.run([str(DIALOGCHECK), "validate", str(SCENARIOS)], capture_output=True, text=True, env=env, check=False)
    assert ok.returncode == 0, ok.stderr
    count = len(list(SCENARIOS.glob("*.yml")))
    assert ok.stdout.endswith(f"{count} files, {count} valid, 0 with problems\n")
    failed = subprocess.run([str(DIALOGCHECK), "validate", str(bad)], capture_output=True, text=True, env=env, check=False)
    assert failed.returncode == 2
    assert f"{bad}:4:9: {BAD_TYPE_MESSAGE}\n" in failed.stdout
    assert "\x1b[" not in failed.stdout
    assert "Traceback" not in failed.stdout + failed.stderr
