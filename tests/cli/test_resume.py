"""`dialogcheck run --resume`: from any working folder, never across an edited scenario, never silently ignoring options.

A batch's unfinished runs are made here by deleting finished ones' files (what
a killed batch leaves: a run without `run_N.json` is not finished); the kill
itself is covered in test_run.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests import inprocess
from tests.cli.test_run import make_project
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"


def dialogcheck(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], text=True, cwd=cwd, env=clean_env(), timeout=300)


@pytest.fixture
def interrupted(tmp_path):
    """A batch of alpha and beta, 2 runs each, started with relative paths from tmp_path, with alpha run 2 and beta run 1 unfinished."""
    make_project(tmp_path / "p")
    started = dialogcheck("run", "p", "--runs", "2", "--results", "r", cwd=tmp_path)
    assert started.returncode == 1, started.stderr
    results = tmp_path / "r"
    for name in ("alpha/run_2.json", "beta/run_1.json"):
        (results / name).unlink()
    return results


def test_the_plan_keeps_absolute_paths_hashes_and_the_config(interrupted):
    plan = json.loads((interrupted / "plan.json").read_text())
    project = interrupted.parent / "p"
    assert plan["version"] == 2
    assert plan["project"] == str(project) and plan["config"] == str(project / "eval" / "conftest.yml")
    assert [(s["slug"], s["path"], s["runs"], len(s["sha256"])) for s in plan["scenarios"]] == [
        ("alpha", str(project / "eval" / "scenarios" / "alpha.yml"), 2, 64),
        ("beta", str(project / "eval" / "scenarios" / "beta.yml"), 2, 64),
    ]


def test_resume_works_from_another_working_folder(interrupted, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kept = (interrupted / "alpha" / "run_1.json").read_bytes()
    done = dialogcheck("run", "--resume", str(interrupted), cwd=elsewhere)
    assert done.returncode == 1, done.stderr  # beta fails on purpose
    summary = json.loads((interrupted / "summary.json").read_text())
    assert summary["completed_runs"] == summary["planned_runs"] == 4
    assert (interrupted / "alpha" / "run_1.json").read_bytes() == kept
    assert json.loads((interrupted / "alpha" / "run_2.json").read_text())["verdict"] == "pass"


def test_an_edited_scenario_is_refused_and_named(interrupted):
    scenario = interrupted.parent / "p" / "eval" / "scenarios" / "beta.yml"
    original = scenario.read_text()
    scenario.write_text(original.replace("q: card", "q: balance"))
    assert scenario.read_text() != original
    before = sorted(p.name for p in interrupted.rglob("*"))
    done = dialogcheck("run", "--resume", str(interrupted), cwd=interrupted.parent)
    assert done.returncode == 2
    assert done.stderr == (
        f"{scenario}:1:1: scenario `beta` changed since the batch started ({interrupted / 'plan.json'} holds the hash of the file"
        " it started with): its finished runs were judged under the old definition; start a new batch, or put the file back as it was\n"
    )
    assert sorted(p.name for p in interrupted.rglob("*")) == before  # nothing ran, nothing was written
    scenario.write_text(original)
    assert dialogcheck("run", "--resume", str(interrupted), cwd=interrupted.parent).returncode == 1


def test_a_missing_scenario_is_refused_and_named(interrupted):
    scenario = interrupted.parent / "p" / "eval" / "scenarios" / "alpha.yml"
    scenario.unlink()
    done = dialogcheck("run", "--resume", str(interrupted), "--format", "json", cwd=interrupted.parent)
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert (error["file"], error["line"], error["column"]) == (str(scenario), 1, 1)
    assert error["message"] == "scenario `alpha` of this batch cannot be read: No such file or directory; the batch cannot be finished without it"


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--runs", "5"], "--runs"),
        (["--runs", "1"], "--runs"),
        (["p"], "PATHS"),
        (["--results", "other"], "--results"),
        (["--config", "p/eval/conftest.yml"], "--config"),
        (["p", "--runs", "3"], "PATHS, --runs"),
        (["--persona", "terse"], "--persona"),
        (["--seed", "0"], "--seed"),
    ],
)
def test_options_that_would_plan_another_batch_are_a_usage_error(interrupted, extra, named, monkeypatch):
    monkeypatch.chdir(interrupted.parent)
    result = CliRunner().invoke(cli, ["run", "--resume", str(interrupted), *extra])
    assert result.exit_code == 2
    assert (
        f"Error: --resume finishes the batch its plan.json describes (its scenarios, runs and config): {named}"
        " cannot be given with it (start a new batch for other scenarios or runs)"
    ) in result.stderr
    assert not (interrupted / "alpha" / "run_2.json").exists()


def test_a_plan_from_before_hashes_is_refused_with_a_clear_message_and_still_reported(interrupted):
    plan = json.loads((interrupted / "plan.json").read_text())
    old = {
        "started": plan["started"],
        "project": plan["project"],
        "scenarios": [{"slug": s["slug"], "path": f"p/eval/scenarios/{s['slug']}.yml", "runs": s["runs"]} for s in plan["scenarios"]],
        "total_runs": plan["total_runs"],
    }
    (interrupted / "plan.json").write_text(json.dumps(old, indent=2))
    done = dialogcheck("run", "--resume", str(interrupted), cwd=interrupted.parent)
    assert done.returncode == 2
    assert done.stderr == (
        f"{interrupted / 'plan.json'}:1:1: this batch was planned by an older dialogcheck, which kept no hash of its scenarios:"
        " a resume could not tell whether one changed since; start a new batch instead\n"
    )
    assert dialogcheck("report", str(interrupted), cwd=interrupted.parent).returncode == 1  # its results still read


def test_a_hand_edited_huge_runs_is_refused_at_once_by_resume_and_report(interrupted):
    path = interrupted / "plan.json"
    text = path.read_text()
    edited = text.replace('"runs": 2,', '"runs": 100000000,', 1)
    path.write_text(edited)
    line = next(n for n, row in enumerate(edited.splitlines(), 1) if "100000000" in row)
    column = edited.splitlines()[line - 1].index("100000000") + 1
    for command in (["run", "--resume"], ["report"]):
        started = time.monotonic()
        done = dialogcheck(*command, str(interrupted), cwd=interrupted.parent)
        assert time.monotonic() - started < 60  # a plan of 100,000,000 runs would take many minutes; this is a start-up
        assert done.returncode == 2
        assert done.stderr == f"{path}:{line}:{column}: invalid plan: `scenarios[0].runs`: expected `int` <= 1000\n"


def test_a_folder_without_a_plan_is_not_a_batch_to_resume(tmp_path):
    (tmp_path / "r").mkdir()
    result = CliRunner().invoke(cli, ["run", "--resume", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'r' / 'plan.json'}:1:1: not a dialogcheck results folder: plan.json is missing\n"
    assert list((tmp_path / "r").iterdir()) == []


def test_a_hand_renamed_slug_in_the_plan_is_refused(interrupted):
    path = interrupted / "plan.json"
    path.write_text(path.read_text().replace('"slug": "beta"', '"slug": "gamma"'))
    done = dialogcheck("run", "--resume", str(interrupted), cwd=interrupted.parent)
    assert done.returncode == 2
    scenario = interrupted.parent / "p" / "eval" / "scenarios" / "beta.yml"
    assert done.stderr == f"{path}:1:1: `scenarios[1].slug` is `gamma`, but {scenario} has the slug `beta` (its file name)\n"


def test_an_endless_plan_is_refused_before_a_byte_is_read(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "plan.json").symlink_to("/dev/zero")
    result = CliRunner().invoke(cli, ["run", "--resume", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'r' / 'plan.json'}:1:1: cannot read: not a regular file (a character device)\n"


def test_a_plan_past_its_size_bound_is_refused_after_reading_the_bound(tmp_path):
    (tmp_path / "r").mkdir()
    with open(tmp_path / "r" / "plan.json", "wb") as plan:
        plan.truncate((16 << 20) + 1)
    result = CliRunner().invoke(cli, ["run", "--resume", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'r' / 'plan.json'}:1:1: larger than 16 MB: not a plan dialogcheck wrote\n"
