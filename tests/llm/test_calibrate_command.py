"""`commands.calibrate`: the judge's figures against the labels, the file written, and its exit code, in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialogcheck.commands.answer import EXIT_OK
from dialogcheck.commands.calibrate import NO_JUDGE, calibrate
from dialogcheck.errors import LoadError
from tests.llm.test_calibrate import labelled  # noqa: F401 - a fixture


def test_the_answer_is_the_figures_and_the_file_written(labelled, monkeypatch):  # noqa: F811 - the fixture imported above
    monkeypatch.chdir(labelled)
    said = calibrate("eval/scenarios/asks.yml", "labels.jsonl")
    assert (said.document["pairs"], said.document["decided"], said.exit_code) == (7, 6, EXIT_OK)
    assert Path(said.document["calibration_file"]).is_file()
    assert said.text.plain.startswith("overall: 6/7 decided, agreement 67%, kappa 0.33")
    assert said.text.plain.endswith(f"calibration file: {said.document['calibration_file']}\n")


def test_no_judge_configured_is_bad_input(labelled, monkeypatch):  # noqa: F811 - the fixture imported above
    monkeypatch.chdir(labelled)
    (labelled / "eval" / "conftest.yml").write_text("{}\n")
    with pytest.raises(LoadError) as raised:
        calibrate("eval/scenarios/asks.yml", "labels.jsonl")
    assert raised.value.problems[0].message == NO_JUDGE
