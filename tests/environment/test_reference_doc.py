"""docs/environment-reference.md stays true: its example files load, and every field the loaders take is documented."""

from __future__ import annotations

import re

import pytest

from dialogcheck.environment import load_environment
from dialogcheck.environment.faults import KINDS
from dialogcheck.environment.load import ENVIRONMENT_FIELDS
from dialogcheck.environment.load_faults import KIND_FIELDS, WHEN_FIELDS
from dialogcheck.environment.load_tools import CHANGE_OPS, TOOL_FIELDS
from tests.conftest import REPO

from .conftest import write_environment

TEXT = (REPO / "docs" / "environment-reference.md").read_text(encoding="utf-8")
ENVIRONMENT_BLOCKS = [block for block in re.findall(r"^```yaml\n(.*?)^```", TEXT, re.S | re.M) if block.startswith("environment:")]


def test_the_reference_has_an_example_file():
    assert ENVIRONMENT_BLOCKS


@pytest.mark.parametrize("block", ENVIRONMENT_BLOCKS)
def test_each_example_file_loads(tmp_path, block):
    environment = load_environment(write_environment(tmp_path, block))
    assert environment.tools


def test_every_field_and_kind_the_loaders_take_is_documented():
    documented = set(re.findall(r"`([a-z_]+)(?::[^`]*)?`", TEXT))
    fields = {*ENVIRONMENT_FIELDS, *TOOL_FIELDS, *WHEN_FIELDS, *KINDS, *CHANGE_OPS, "by", "values", "path", "not_found", "changes"}
    fields |= {name for names in KIND_FIELDS.values() for name in names}
    assert fields - documented == set()


def test_the_recorded_event_shown_is_what_the_example_records_and_it_parses(tmp_path):
    import orjson

    from dialogcheck.events.parse import conversation_from_dicts

    shown = re.findall(r"^```json\n(.*?)^```", TEXT, re.S | re.M)[0]
    run = load_environment(write_environment(tmp_path, ENVIRONMENT_BLOCKS[0])).start(seed=0, sleep=lambda seconds: None)
    run.call("cancel_order", {"order_id": "O1", "reason": "late"})
    assert run.events == [orjson.loads(shown)]
    assert conversation_from_dicts(run.events).tool_runs[0].metadata["fault"]["kind"] == "timeout"


def test_the_environment_of_a_run_file_shown_has_the_fields_a_run_file_holds():
    import orjson

    from dialogcheck.results.codec import environment_document
    from dialogcheck.results.model import EnvironmentInfo
    from dialogcheck.results.records import read_record

    (shown,) = [block for block in re.findall(r"^```json\n(.*?)^```", TEXT, re.S | re.M) if block.startswith('{"environment"')]
    document = orjson.loads(shown)["environment"]
    info = read_record(EnvironmentInfo, document)
    assert info is not None and info.faults[0].kind == "timeout"
    assert environment_document(info) == document
