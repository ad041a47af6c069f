"""`commands.imports`: another tool's logs converted into native events, to a file or a stream, with the scenarios
derived from their tasks; bad input writes nothing."""

from __future__ import annotations

import io
import json

import pytest

from dialogcheck.commands.answer import EXIT_OK
from dialogcheck.commands.imports import import_logs
from dialogcheck.errors import LoadError
from tests.importers.test_import_cmd import SAMPLE


def test_to_a_file_with_the_scenarios_of_its_tasks(tmp_path):
    out, scenarios = tmp_path / "out.jsonl", tmp_path / "scenarios"
    said = import_logs(str(SAMPLE), "tau-bench", output=str(out), scenarios_dir=str(scenarios))
    lines = out.read_text().splitlines()
    assert said.document["output"] == str(out) and said.document["conversations"] == len(lines) > 0
    assert said.document["scenarios"] and all((scenarios / name).exists() for name in (p.rsplit("/", 1)[-1] for p in said.document["scenarios"]))
    assert said.text.plain.startswith(f"imported {len(lines)} conversations (") and said.text.plain.endswith(f"in {scenarios}\n")
    assert said.exit_code == EXIT_OK


def test_to_a_stream_as_one_json_document(tmp_path):
    stream = io.BytesIO()
    said = import_logs(str(SAMPLE), "tau-bench", stdout=stream, as_json_document=True)
    assert len(json.loads(stream.getvalue())["conversations"]) == said.document["conversations"]
    assert said.text.plain.endswith(" to stdout\n")


def test_a_missing_file_is_bad_input_and_nothing_is_written(tmp_path):
    with pytest.raises(LoadError) as raised:
        import_logs(str(tmp_path / "nope.json"), "tau2", output=str(tmp_path / "out.jsonl"))
    assert raised.value.problems[0].message == "no such file"
    assert not (tmp_path / "out.jsonl").exists()
