"""The bad-input corpus in tests/data/bad: each file gives exit 2, one `file:line:col: message` line, no traceback.

Scenario files go through `dialogcheck validate`; event files through `dialogcheck check`
against a valid example scenario. The expected lines are written here by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE, REPO

BAD = REPO / "tests" / "data" / "bad"
SCENARIO = EXAMPLE / "eval" / "scenarios" / "card_replace_cancel.yml"
DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
UNSET = "DIALOGCHECK_TEST_UNSET_VARIABLE"

#: file -> the `line:col: message` each must print (after `path:`); a tuple when a file has several problems.
SCENARIO_ERRORS: dict[str, str | tuple[str, ...]] = {
    "malformed_indent.yml": "3:22: invalid YAML: mapping values are not allowed here",
    "unclosed_flow_list.yml": "5:1: invalid YAML: while parsing a flow sequence expected ',' or ']', but got '<stream end>'",
    "tab_indent.yml": "2:1: invalid YAML: while scanning for the next token found character '\\t' that cannot start any token",
    "duplicate_key.yml": "4:3: duplicate key `name` (first defined at line 2)",
    "duplicate_key_in_assertion.yml": "9:11: duplicate key `tool_name` (first defined at line 7)",
    "unknown_top_level_key.yml": "4:1: unknown field `scenarios` in the scenario file (did you mean `scenario`?)",
    "unknown_scenario_field.yml": "4:3: unknown field `max_turn` in `scenario` (did you mean `max_turns`?)",
    "unknown_assertion.yml": "6:9: unknown assertion `skill_complete` (did you mean `skill_completed`?)",
    "unknown_assertion_field.yml": (
        "7:11: unknown field `skil_id` in `skill_completed` (did you mean `skill_id`?)",
        "7:11: `skill_completed` is missing required field `skill_id`",
    ),
    "missing_required.yml": "2:3: `scenario` is missing required field `simulation_context`",
    "wrong_type_max_turns.yml": "4:14: `max_turns` in `scenario` must be an integer, got a string",
    "max_turns_out_of_range.yml": "4:14: `max_turns` in `scenario` must be an integer from 1 to 1000, got 5000",
    "wrong_type_tags.yml": "4:9: `tags` in `scenario` must be a list, got a string",
    "wrong_type_allow_extra_calls.yml": "7:30: `allow_extra_calls` in `tools_within_one_turn` must be true or false, got a string",
    "bad_scenario_type.yml": (
        "3:9: `type` in `scenario` must be one of happy_path, sad_path, edge_case, ambiguity, out_of_scope,"
        " escalation, adversarial, got 'sadpath' (did you mean `sad_path`?)"
    ),
    "invalid_regex.yml": (
        "7:25: `text_matches` in `bot_uttered` is not a valid regular expression: missing ) at position 9"
    ),
    "non_utf8.yml": "2:12: invalid UTF-8 byte 0xe9: expected UTF-8 text",
    "unset_variable.yml": f"3:23: environment variable `{UNSET}` is not set (used as `${{{UNSET}}}`)",
    "empty_assertions.yml": "5:17: `goals.assertions` must hold at least one item, got 0",
    "step_id_on_skill_activated.yml": (
        "8:11: `skill_activated` does not take `step_id`: only the cancelled, interrupted and resumed checks do"
    ),
    "session_prefix.yml": (
        "7:19: memory name `session.card_replace.reason` starts with `session.`: tracker keys carry no session prefix,"
        " so this check would never match (write `card_replace.reason`)"
    ),
    "null_memory_value.yml": "8:20: `value` in entry 1 of `memory_was_set` must not be null: null is not accepted as a value",
    "mcp_server_with_local.yml": "9:11: `tool_executed` with `source: local` must not set `mcp_server`",
    "framework_tool_in_calls.yml": (
        "9:42: `activate` is a framework tool: it is never counted, so `tools_within_one_turn` could never match it"
    ),
    "times_in_sequencing.yml": "7:68: `times` is not allowed inside `sequencing`: each entry there matches one run",
    "python_tag.yml": "2:9: unsupported YAML tag `tag:yaml.org,2002:python/object/apply:os.system`: only plain YAML data is read",
    "empty.yml": "1:1: a scenario file must be a mapping, got nothing",
    "not_a_scenario.yml": "1:1: not a scenario or SOP file: expected a top-level `scenario:` or `sop:` key, got `name`",
}

EVENT_ERRORS: dict[str, str] = {
    "events_broken_line.jsonl": "2:17: invalid JSON: unexpected character, expected ',' or '}'",
    "events_truncated_line.jsonl": "2:36: invalid JSON: unexpected end of data",
    "events_wrong_type.jsonl": "2:30: event 1: field `skill_id` must be a string, got a number",
    "events_wrong_type_pretty.json": "10:5: event 1: field `is_error` must be a boolean, got a string",
    "events_missing_event.jsonl": "2:1: event 1: field `event` is missing: every event names its type",
    "events_bad_source.jsonl": "1:56: event 0: field `source` must be 'local' or 'mcp', got 'remote'",
    "events_non_utf8.jsonl": "2:31: invalid UTF-8 byte 0xe9: expected UTF-8 text",
    "events_empty.jsonl": "1:1: the file holds no events: expected JSON or JSONL event objects",
    "events_mixed_containers.jsonl": "2:1: this line mixes containers: expected one event object as on the first line",
    "events_not_a_list.json": "3:3: `events` must be a list of event objects, got an object",
    "events_batch_bad_line.jsonl": "2:48: event 0: field `buttons` must be a list, got a string",
}


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.delenv(UNSET, raising=False)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)


def expected_lines(name: str, table: dict) -> list[str]:
    value = table[name]
    return [f"{BAD / name}:{line}" for line in ((value,) if isinstance(value, str) else value)]


def test_the_corpus_and_the_tables_agree():
    on_disk = {path.name for path in BAD.iterdir()}
    assert on_disk == set(SCENARIO_ERRORS) | set(EVENT_ERRORS)


@pytest.mark.parametrize("name", sorted(SCENARIO_ERRORS))
def test_validate_bad_scenario(name):
    result = CliRunner().invoke(cli, ["validate", str(BAD / name)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stdout.splitlines()
    assert lines == [*expected_lines(name, SCENARIO_ERRORS), "1 files, 0 valid, 1 with problems"]


@pytest.mark.parametrize("name", sorted(EVENT_ERRORS))
def test_check_bad_events(name):
    result = CliRunner().invoke(cli, ["check", "--scenario", str(SCENARIO), str(BAD / name)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    assert result.stderr.splitlines() == expected_lines(name, EVENT_ERRORS)


def _env() -> dict[str, str]:
    drop = {UNSET, "FORCE_COLOR", "TTY_COMPATIBLE"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def test_installed_validate_on_the_whole_corpus():
    done = subprocess.run([str(DIALOGCHECK), "validate", str(BAD)], capture_output=True, text=True, env=_env(), check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    printed = done.stdout.splitlines()
    for name in SCENARIO_ERRORS:
        for line in expected_lines(name, SCENARIO_ERRORS):
            assert line in printed
    count = len(SCENARIO_ERRORS)
    assert printed[-1] == f"{count} files, 0 valid, {count} with problems"


@pytest.mark.parametrize("name", ["events_broken_line.jsonl", "events_non_utf8.jsonl"])
def test_installed_check_on_bad_events(name):
    done = subprocess.run(
        [str(DIALOGCHECK), "check", "--scenario", str(SCENARIO), str(BAD / name)], capture_output=True, text=True, env=_env(), check=False
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.splitlines() == expected_lines(name, EVENT_ERRORS)
