"""A copy of the example project, and one `run` of two of its scenarios and one `check --output` of its SOP, made
once for the tests of the commands that read results folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import dialogcheck
from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE

FAILING = "run_stolen_card"
PASSING = "run_cancel"


@pytest.fixture(scope="session")
def folders(tmp_path_factory) -> dict[str, Path]:
    """The project, a `run` results folder of one failing and one passing scenario, and a `check --output` folder."""
    root = tmp_path_factory.mktemp("commands")
    project = root / "card_replace"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".dialogcheck", "results"))
    scenarios = project / "eval" / "scenarios"
    batch = root / "batch"
    dialogcheck.run_scenarios([scenarios / f"{FAILING}.yml", scenarios / f"{PASSING}.yml"], no_judge=True, results=batch)
    output = root / "out"
    done = CliRunner().invoke(cli, ["check", "--no-judge", "--output", str(output), "--sop", str(project / "sops" / "replace_card.yml"), str(project / "conversations")])
    assert done.exit_code == 1, done.output
    return {"project": project, "batch": batch, "output": output}
