"""The starting state: inline, or a JSON or YAML file of the project, of bounded size and shape."""

from __future__ import annotations

import os

import pytest

from dialogcheck.environment import bounds, load_environment
from dialogcheck.errors import LoadError

from .conftest import write_environment

TOOLS = """\
  tools:
    - name: ping
      description: Answers pong.
      parameters: {type: object}
      returns: pong
"""


def problems(path) -> list[str]:
    with pytest.raises(LoadError) as caught:
        load_environment(path)
    return [str(problem) for problem in caught.value.problems]


def test_a_json_state_file_of_the_project_is_read(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "shop.json").write_text('{"orders": {"O1": {"status": "placed"}}, "refunds": []}')
    environment = load_environment(write_environment(tmp_path, "environment:\n  state: data/shop.json\n" + TOOLS))
    assert environment.state == {"orders": {"O1": {"status": "placed"}}, "refunds": []}


def test_a_yaml_state_file_is_read_and_its_errors_name_its_own_lines(tmp_path):
    (tmp_path / "shop.yml").write_text("orders:\n  O1: {status: placed}\n")
    environment = load_environment(write_environment(tmp_path, "environment:\n  state: shop.yml\n" + TOOLS))
    assert environment.state == {"orders": {"O1": {"status": "placed"}}}
    (tmp_path / "shop.yml").write_text("orders:\n  O1: {status: placed}\n  O1: {}\n")
    assert problems(write_environment(tmp_path, "environment:\n  state: shop.yml\n" + TOOLS)) == [
        f"{tmp_path / 'shop.yml'}:3:3: duplicate key `O1` (first defined at line 2)"
    ]


def test_invalid_json_in_a_state_file_is_reported_at_its_line_and_column(tmp_path):
    (tmp_path / "shop.json").write_text('{"orders":\n  {"O1": }}')
    assert problems(write_environment(tmp_path, "environment:\n  state: shop.json\n" + TOOLS)) == [
        f"{tmp_path / 'shop.json'}:2:10: invalid JSON: unexpected character, expected a JSON value"
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"orders": {"O1": {"n": 1}, "O1": {"n": 2}}}', "the key 'O1' is given twice in one object"),
        ('{"orders": {"O1": {"n": 123456789012345678901234567890}}}', "the integer 123456789012345678901234567890 is past 64 bits"),
    ],
)
def test_a_json_state_file_with_a_key_twice_or_an_integer_past_64_bits_is_refused_as_yaml_is(tmp_path, text, why):
    (tmp_path / "shop.json").write_text(text)
    [problem] = problems(write_environment(tmp_path, "environment:\n  state: shop.json\n" + TOOLS))
    assert problem.startswith(f"{tmp_path / 'shop.json'}:1:1: invalid state file: {why}")


def test_a_state_that_is_no_mapping_of_tables_is_refused(tmp_path):
    path = write_environment(tmp_path, "environment:\n  state: {orders: 5}\n" + TOOLS)
    assert problems(path) == [
        f"{path}:2:10: table `orders` of `state` must be a mapping of records by key, or a list of records, got a number"
    ]
    (tmp_path / "list.json").write_text("[1, 2]")
    path = write_environment(tmp_path, "environment:\n  state: list.json\n" + TOOLS)
    assert problems(path) == [
        f"{path}:2:10: the state file 'list.json' must be a mapping of tables (like `orders: {{O1: {{...}}}}`), got a list"
    ]


def test_other_files_and_non_regular_files_are_refused(tmp_path):
    (tmp_path / "shop.csv").write_text("a,b\n")
    path = write_environment(tmp_path, "environment:\n  state: shop.csv\n" + TOOLS)
    assert problems(path) == [f"{path}:2:10: `state` names 'shop.csv': a state file is JSON (.json) or YAML (.yml, .yaml)"]
    os.mkfifo(tmp_path / "pipe.json")  # opened without waiting: never blocks the load
    path = write_environment(tmp_path, "environment:\n  state: pipe.json\n" + TOOLS)
    assert problems(path) == [f"{path}:2:10: `state` names 'pipe.json', which cannot be read: not a regular file (a named pipe)"]


def test_the_state_is_bounded_in_bytes_records_and_depth(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_STATE_BYTES", 100)
    monkeypatch.setattr("dialogcheck.environment.state.MAX_STATE_BYTES", 100)
    (tmp_path / "big.json").write_text('{"t": [' + ",".join(["1"] * 100) + "]}")
    path = write_environment(tmp_path, "environment:\n  state: big.json\n" + TOOLS)
    assert problems(path) == [f"{path}:2:10: `state` names 'big.json', which cannot be read: larger than 100 bytes"]
    monkeypatch.setattr("dialogcheck.environment.state.MAX_RECORDS", 3)
    path = write_environment(tmp_path, "environment:\n  state: {a: [1, 2], b: {x: 1, y: 2}}\n" + TOOLS)
    assert problems(path) == [f"{path}:2:10: `state` holds 4 records, more than the 3 an environment may start with"]
    monkeypatch.setattr("dialogcheck.environment.state.MAX_STATE_DEPTH", 3)
    path = write_environment(tmp_path, "environment:\n  state: {a: {x: {y: [1]}}}\n" + TOOLS)
    assert problems(path) == [f"{path}:2:10: `state` is nested more than 3 levels deep"]


def test_no_state_is_an_empty_one(tmp_path):
    assert load_environment(write_environment(tmp_path, "environment:\n" + TOOLS)).state == {}
