"""`commands.validate`: a file's summary or its problems, the warnings of what `run` would refuse, the exit code."""

from __future__ import annotations

import pytest

from dialogcheck.commands.answer import EXIT_BAD_INPUT, EXIT_OK
from dialogcheck.commands.validate import validate
from dialogcheck.errors import LoadError
from tests.conftest import EXAMPLE


def test_a_valid_project(monkeypatch):
    monkeypatch.chdir(EXAMPLE)
    said = validate(["sops"])
    assert said.document == {"files": [{"path": "sops/replace_card.yml", "ok": True, "kind": "sop"}], "valid": True}
    assert said.text.plain.startswith("ok    sops/replace_card.yml  SOP ")
    assert said.exit_code == EXIT_OK and not said.notes.pieces


def test_a_file_with_a_problem_is_exit_code_2_with_its_error(tmp_path):
    bad = tmp_path / "s.yml"
    bad.write_text("scenario:\n  name: s\n  simulation_context: c\n  type: happy\n")
    said = validate([str(bad)])
    assert said.exit_code == EXIT_BAD_INPUT and said.document["valid"] is False
    assert (said.document["error"]["file"], said.document["error"]["line"]) == (str(bad), 4)
    assert said.text.plain.startswith(f"{bad}:4:")


def test_a_project_scenario_run_would_refuse_is_warned_of(tmp_path):
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text("agent: {type: http, url: 'http://127.0.0.1:9/chat'}\n")
    (tmp_path / "eval" / "scenarios" / "s.yml").write_text("scenario:\n  name: s\n  simulation_context: c\n")
    said = validate([str(tmp_path)])
    assert said.exit_code == EXIT_OK
    assert "warning: `run` will refuse this scenario" in said.notes.plain
    assert said.document["warnings"][0]["file"].endswith("s.yml")


def test_nothing_to_validate_is_a_load_error(tmp_path):
    with pytest.raises(LoadError) as raised:
        validate([str(tmp_path)])
    assert raised.value.problems[0].message == "no YAML files found"
