"""`commands.report`: what `report` says of a `run` folder and of a `check --output` folder, and the files it writes."""

from __future__ import annotations

import pytest

from dialogcheck.commands.answer import EXIT_FAILED
from dialogcheck.commands.report import report, report_files
from dialogcheck.errors import LoadError


def test_a_run_folder_is_its_summary_and_its_batch_s_exit_code(folders):
    said = report(str(folders["batch"]))
    assert (said.document["passed"], said.document["failed"], said.document["errored"]) == (1, 1, 0)
    assert "2 runs: 1 passed, 1 failed, 0 errored" in said.text.plain
    assert said.exit_code == EXIT_FAILED
    assert not said.notes.pieces


def test_a_check_output_folder_is_what_check_printed_named_as_the_caller_named_it(folders):
    said = report(str(folders["output"]), named="out")
    assert (said.document["conversations"], said.document["passed"], said.document["failed"]) == (8, 4, 4)
    assert said.text.plain.endswith("8 conversations: 4 passed, 4 failed, 0 errored\nwhose fault: 4 agent\nresults: 8 shards in out\n")
    assert said.exit_code == EXIT_FAILED


def test_a_missing_folder_is_bad_input(tmp_path):
    with pytest.raises(LoadError) as raised:
        report(str(tmp_path / "none"))
    assert raised.value.problems[0].message.startswith("no results folder here")


def test_files_are_written_and_named(folders, tmp_path):
    html, junit = tmp_path / "r.html", tmp_path / "r.xml"
    said = report_files(str(folders["batch"]), html=str(html), junit=str(junit))
    assert said.document == {"results": str(folders["batch"]), "written": [str(junit), str(html)]}
    assert said.text.plain == f"wrote {junit}\nwrote {html}\n"
    assert html.read_text().startswith("<!DOCTYPE html>") and "<testsuites" in junit.read_text()
    assert said.exit_code == EXIT_FAILED


def test_a_report_that_cannot_be_written_is_bad_input(folders, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(LoadError) as raised:
        report_files(str(folders["output"]), html=str(blocker / "r.html"))
    assert raised.value.problems[0].message.startswith("cannot write the report:")
