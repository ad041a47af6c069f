"""`commands.compare`: the answer of two batches, drawn when asked for, and the exit code of a gate on regressions."""

from __future__ import annotations

import json

import pytest

from dialogcheck.commands.answer import EXIT_ERRORED, EXIT_OK
from dialogcheck.commands.compare import compare
from dialogcheck.errors import LoadError
from tests.compare.builders import simple, write_batch


def test_the_document_text_and_json_pieces_say_one_thing(folders):
    said = compare(str(folders["batch"]), str(folders["batch"]))
    assert said.document["verdict"] == "no significant change"
    assert json.loads("".join(said.json())) == said.document
    assert "no significant change" in said.text.plain
    assert (said.exit_code, said.notes.plain) == (EXIT_OK, "")


def test_a_gate_on_regressions_that_compared_nothing_is_exit_code_3_and_says_why(tmp_path):
    base = write_batch(tmp_path / "base.json", [simple("a", "error")])
    new = write_batch(tmp_path / "new.json", [simple("a", "pass")])
    said = compare(str(base), str(new), fail_on="regression")
    assert said.exit_code == EXIT_ERRORED
    assert said.notes.plain == "dialogcheck: nothing compared: every key both sides have errored on a side (a)\n"
    assert compare(str(base), str(new)).exit_code == EXIT_OK


def test_a_page_that_cannot_be_written_is_bad_input(folders, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(LoadError) as raised:
        compare(str(folders["batch"]), str(folders["batch"]), html=str(blocker / "c.html"))
    assert raised.value.problems[0].message.startswith("cannot write the report:")
