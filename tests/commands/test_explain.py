"""`commands.explain`: one run of a results folder, by each of its names; a run it lacks is a `CommandError`."""

from __future__ import annotations

import pytest

from dialogcheck.commands.answer import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, CommandError
from dialogcheck.commands.explain import explain
from tests.commands.conftest import FAILING, PASSING


def test_a_failed_run_s_failing_checks_with_their_evidence(folders):
    said = explain(str(folders["batch"]), f"{FAILING}/run_1")
    assert (said.document["slug"], said.document["run"], said.document["verdict"]) == (FAILING, 1, "fail")
    assert said.document["failing_checks"] and all(c["outcome"] in ("fail", "error") for c in said.document["failing_checks"])
    assert said.text.plain.startswith(f"{FAILING} run 1: ")
    assert said.exit_code == EXIT_FAILED
    assert explain(str(folders["batch"]), f"{FAILING}[run-1]").document == said.document
    assert explain(str(folders["batch"]), FAILING).document == said.document


def test_a_passed_run_has_no_failing_checks(folders):
    said = explain(str(folders["batch"]), PASSING)
    assert (said.document["verdict"], said.document["failing_checks"], said.exit_code) == ("pass", [], EXIT_OK)


def test_a_run_the_folder_lacks_is_named_with_the_runs_it_has(folders):
    with pytest.raises(CommandError) as raised:
        explain(str(folders["batch"]), f"{FAILING}/run_2", named="batch")
    assert str(raised.value) == f"no run '{FAILING}/run_2' in batch: its runs are {FAILING}/run_1, {PASSING}/run_1"
    assert raised.value.exit_code == EXIT_BAD_INPUT
