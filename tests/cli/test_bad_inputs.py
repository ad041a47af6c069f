"""The bad-input corpus in tests/data/bad: each file gives exit 2, one `file:line:col: message` line, no traceback.

Scenario, SOP and config files go through `dialogcheck validate`; event files through
`dialogcheck check` against a valid example scenario. The expected lines are written here
by hand. Files too big to commit (50 MB lines, 100,000 levels of nesting) are made in a
temporary folder, and their subprocess is held to a wall-clock and a peak-memory bound.

Byte order marks: a UTF-8 BOM is accepted in YAML (YAML 1.2 allows it) and refused in
JSON with a clear message (RFC 8259 forbids writing one; the JSON reader says so);
UTF-16 and UTF-32 files are refused as such, whatever their kind. CRLF line ends load
like LF, with the same lines and columns in errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE, REPO, plain_env

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
        " (an agent that owns a tool of this name sets `framework_tools` in eval/conftest.yml)"
    ),
    "times_in_sequencing.yml": "7:68: `times` is not allowed inside `sequencing`: each entry there matches one run",
    "python_tag.yml": "2:9: unsupported YAML tag `tag:yaml.org,2002:python/object/apply:os.system`: only plain YAML data is read",
    "empty.yml": "1:1: a scenario file must be a mapping, got nothing",
    "not_a_scenario.yml": "1:1: not a scenario, SOP or environment file: expected a top-level `scenario:`, `sop:` or `environment:` key, got `name`",
    # Regular expressions that would take gigabytes, or Python's whole stack, to compile: refused, naming the limit.
    "regex_huge_repeat.yml": (
        "6:37: `text_matches` in `bot_uttered` is too large a regular expression: a repeat count of 1,000,000,000"
        " is more than the limit of 1,000"
    ),
    "regex_deep_nesting.yml": (
        "7:25: `text_matches` in `bot_did_not_utter` is too large a regular expression: groups nest more than 50 levels deep (the limit)"
    ),
    "regex_incompatible_flags.yml": (
        "6:37: `text_matches` in `bot_uttered` is not a valid regular expression:"
        " ASCII, LOCALE and UNICODE flags are mutually incompatible"
    ),
    "sop_regex_nested_repeats.yml": (
        "8:40: `pattern` in assertion `reason` of `tool_input_contains` in step 1 of `sop.steps` is too large a regular"
        " expression: its repeats copy it to 1,020,202 parts, more than the limit of 10,000 (counts of nested repeats multiply)"
    ),
    "sop_regex_too_long.yml": (
        "7:16: `pattern` in `confirmation_requested` in step 1 of `sop.steps` is too large a regular expression:"
        " the pattern is 1,053 characters long, more than the limit of 1,000"
    ),
    # Scalars their tag cannot read, a YAML version that does not exist, lone surrogates: errors, never tracebacks.
    "yaml_bad_int_tag.yml": "4:14: 'abc', tagged `!!int`, is not an integer",
    "yaml_bad_float_tag.yml": "4:10: '1.5.2', tagged `!!float`, is not a number",
    "yaml_bad_bool_tag.yml": "6:63: 'perhaps', tagged `!!bool`, is not true or false",
    "yaml_huge_integer.yml": "4:14: an integer of 5,000 digits is too long: at most 4,300 digits are read",
    "yaml_huge_hex_integer.yml": "4:14: an integer of about 6,021 digits is too long: at most 4,300 digits are read",
    "sop_weight_too_large.yml": "6:15: `weight` in step 1 of `sop.steps` must be a number, got an integer too large for one",
    "yaml_version_1_3.yml": "1:1: invalid YAML: unsupported YAML version 1.3 in the `%YAML` directive: YAML 1.1 and 1.2 are read",
    "lone_surrogate_key.yml": "6:7: `\\ud800` is half of a UTF-16 surrogate pair, not a character: write the character itself",
    "lone_surrogate_value.yml": "3:23: `\\udc9f` is half of a UTF-16 surrogate pair, not a character: write the character itself",
    # Bytes that are not YAML text at all.
    "binary_png.yml": "1:1: invalid UTF-8 byte 0x89: expected UTF-8 text",
    "binary_gzip.yml": "1:2: invalid UTF-8 byte 0x8b: expected UTF-8 text",
    "bom_utf16.yml": "1:1: the file is UTF-16 text (it starts with a UTF-16 byte order mark): save it as UTF-8",
    "nul_byte.yml": "2:11: invalid YAML: unacceptable character #x0000: special characters are not allowed",
    # Accepted encodings and line ends: the error is the wrong type, at its real line and column.
    "bom_utf8.yml": "4:14: `max_turns` in `scenario` must be an integer, got a string",
    "crlf.yml": "4:14: `max_turns` in `scenario` must be an integer, got a string",
    "cr_only.yml": "4:14: `max_turns` in `scenario` must be an integer, got a string",
    "crlf_unclosed_quote.yml": "4:1: invalid YAML: while scanning a quoted scalar found unexpected end of stream",
    "truncated.yml": "6:48: invalid YAML: while parsing a flow mapping expected ',' or '}', but got '<stream end>'",
    "alias_bomb.yml": "11:16: invalid YAML: aliases expand this document to more than 20,000 values (an alias bomb?)",
    "deep_nesting.yml": "6:109: invalid YAML: nested more than 100 levels deep",
    "goals_sop_path.yml": (
        "5:10: `goals.sop` must be a list of steps written here, got the string '../../outside.yml':"
        " it does not name an SOP file (apply an SOP file with `dialogcheck check --sop FILE`)"
    ),
    "wrong_type_every_field.yml": (
        "2:9: `name` in `scenario` must be a string, got a list",
        "3:23: `simulation_context` in `scenario` must be a string, got an integer",
        "4:9: `type` in `scenario` must be a string, got a number",
        "5:14: `max_turns` in `scenario` must be an integer, got a boolean",
        "6:11: `script` in `scenario` must be a list, got a mapping",
        "7:10: item 1 of `tags` in `scenario` must be a non-empty string, got an integer",
        "8:10: `setup` in `scenario` must be a mapping, got a list",
        "9:10: `goals` must be a mapping, got a string",
    ),
    # Several problems in one check: listed in the order the check's fields are read.
    "check_problems_in_order.yml": (
        "10:30: `allow_extra_calls` in `tools_within_one_turn` must be true or false, got a string",
        "8:42: `hangup` is a framework tool: it is never counted, so `tools_within_one_turn` could never match it"
        " (an agent that owns a tool of this name sets `framework_tools` in eval/conftest.yml)",
        "9:65: `times` is not allowed inside `tools_within_one_turn`: each entry there matches one run",
        "11:24: `tool_executed` with `source: mcp` needs `mcp_server` (it is not inferred from the tool name)",
        "11:67: `is_error` in `tool_executed` must be true or false, got an integer",
        "13:14: `memory_was_cleared` takes no `value`: a clear has no value",
        "13:13: entry 1 of `memory_was_cleared` is missing required field `name`",
        "14:26: `skill_activated` is missing required field `skill_id`",
        "14:27: `skill_activated` does not take `step_id`: only the cancelled, interrupted and resumed checks do",
        "16:9: `confirmation_requested` in step 1 of `goals.sop` is missing required field `beforeToolSlug`",
        "18:22: `catalogSlug` in `confirmation_requested` in step 1 of `goals.sop` must be a string, got an integer",
        "17:18: `pattern` in `confirmation_requested` in step 1 of `goals.sop` is not a valid regular expression: missing ) at position 1",
        "21:22: `catalogSlug` in `tool_input_contains` in step 2 of `goals.sop` must not be empty",
        "20:35: `op` in assertion `amount` of `tool_input_contains` in step 2 of `goals.sop` must be one of exists, equals,"
        " matches, gt, lt, got 'contains' (`contains` is an op of `tool_output_contains`)",
    ),
    # SOP files.
    "sop_truncated.yml": "6:22: invalid YAML: while parsing a flow sequence expected ',' or ']', but got '<stream end>'",
    "sop_wrong_types.yml": (
        "2:7: `id` in `sop` must be a string, got an integer",
        "4:14: `threshold` in `sop` must be a number, got a string",
        "7:15: `weight` in step 1 of `sop.steps` must be a number at least 0, got -1",
        "8:50: `sequence` in `tool_sequence` in the evaluator of step 1 of `sop.steps` must be a list, got a string",
        "8:70: `contiguous` in `tool_sequence` in the evaluator of step 1 of `sop.steps` must be true or false, got a string",
    ),
    "sop_unknown_evaluator.yml": "5:13: unknown evaluator type `tool_caled` (did you mean `tool_called`?)",
    "sop_duplicate_key.yml": "7:7: duplicate key `toolSlug` (first defined at line 6)",
    # Project configs (each in its own project, as validate knows a config by its name).
    "config_unknown_key/eval/conftest.yml": "1:1: unknown field `simulaton` in the config (did you mean `simulation`?)",
    "config_wrong_types/eval/conftest.yml": (
        "1:27: `max_concurrent_llm_calls` in the config must be an integer, got a string",
        "3:34: `model` in `evaluation.llm` must be a string, got an integer",
        "3:46: `timeout` in `evaluation.llm` must be a number, got a string",
        "3:65: `max_retries` in `evaluation.llm` must be an integer from 0 to 20, got -1",
        "4:8: `agent` of type http needs `url`",
    ),
    "config_prompt_escape/eval/conftest.yml": (
        f"2:26: `simulated_user_prompt` must stay inside the project folder {BAD / 'config_prompt_escape'}, got '../../outside.j2'",
        f"4:26: `criteria_judge_prompt` must stay inside the project folder {BAD / 'config_prompt_escape'}, got '/etc/hostname'",
    ),
    "config_bad_headers/eval/conftest.yml": (
        "6:7: `X-Token: evil` in `extra_headers` is not an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)",
        "7:15: header `X-List` in `extra_headers` must be a string, got a list",
        "8:16: header `X-Split` in `extra_headers` must be one line: a line break or NUL would start another header",
    ),
    "config_cache_escape/eval/conftest.yml": (
        f"1:14: `dir` in `cache` must stay inside the project folder {BAD / 'config_cache_escape'}, got '../../shared-cache'"
        " (--cache-dir names a folder elsewhere)"
    ),
}

#: A project config whose prompt templates reach for Python's internals or do not parse: the problems are
#: reported at the template's own file, line and column (template file -> its `line:col: message` lines).
REFUSED = (
    "is not allowed in a prompt template: a template may read the prompt's variables, not Python's internals"
    " (names starting with `_`, `mro`, frames, code)"
)
TEMPLATE_ERRORS: dict[str, dict[str, tuple[str, ...]]] = {
    "config_template_code/eval/conftest.yml": {
        "config_template_code/prompts/judge.j2": (f"2:11: `__init__` {REFUSED}", f"2:20: `__globals__` {REFUSED}"),
    },
    "config_template_variants/eval/conftest.yml": {
        "config_template_variants/prompts/user.j2": (
            f"2:17: `__class__` {REFUSED}",
            f"3:16: `__globals__` {REFUSED}",
            f"4:23: `__class__` {REFUSED}",
            f"4:33: `mro` {REFUSED}",
            "5:4: `{% include %}` is not allowed in a prompt template: a prompt is one file, it loads no other template",
        ),
        "config_template_variants/prompts/metrics.j2": ("3:1: invalid template: unexpected '}'",),
    },
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
    "events_empty_list.json": "1:1: the file holds no events: expected JSON or JSONL event objects",
    # What a tracker endpoint answers for an id it never saw: every "never" check would pass on it.
    "events_tracker_no_events.json": "3:3: `events` is empty: a conversation without events cannot be judged (expected at least one event object)",
    "events_mixed_containers.jsonl": "2:1: this line mixes containers: expected one event object as on the first line",
    "events_not_a_list.json": "3:3: `events` must be a list of event objects, got an object",
    "events_batch_bad_line.jsonl": "2:48: event 0: field `buttons` must be a list, got a string",
    "events_binary_png.jsonl": "1:1: invalid UTF-8 byte 0x89: expected UTF-8 text",
    "events_binary_gzip.jsonl": "1:2: invalid UTF-8 byte 0x8b: expected UTF-8 text",
    "events_nul.jsonl": "1:1: invalid JSON: unexpected character, expected a JSON value",
    "events_bom.jsonl": "1:1: invalid JSON: UTF-8 byte order mark (BOM) is not supported",
    "events_utf16.jsonl": "1:1: the file is UTF-16 text (it starts with a UTF-16 byte order mark): save it as UTF-8",
    "events_crlf.jsonl": "3:65: event 2: field `is_error` must be a boolean, got a string",
    "events_crlf_pretty.json": "5:5: event 1: field `skill_id` must be a string, got a number",
    "events_deep_nesting.json": "1:1026: invalid JSON: depth limit exceeded",
    # A value nested past orjson's 1,024 levels on a later line of a JSONL of conversations (the fast decoder's path).
    "events_deep_nesting_line2.jsonl": "2:1134: invalid JSON: depth limit exceeded",
    "events_truncated.json": "1:85: invalid JSON: unexpected end of data",
}

#: A results folder's plan.json, read by `run --resume FOLDER` (and by `report`) before anything is run or written.
PLAN_ERRORS: dict[str, str] = {
    "plan_runs_string/plan.json": "16:15: invalid plan: `scenarios[1].runs`: expected `int`, got `str`",
    "plan_runs_float/plan.json": "10:15: invalid plan: `scenarios[0].runs`: expected `int`, got `float`",
    "plan_runs_too_many/plan.json": "10:15: invalid plan: `scenarios[0].runs`: expected `int` <= 1000",
    "plan_truncated/plan.json": "15:1: not valid JSON: unexpected end of data",
    "plan_unknown_field/plan.json": "3:3: invalid plan: unknown field `stated` in the plan",
    "plan_total_mismatch/plan.json": "20:17: invalid plan: `total_runs` is 5, but the scenarios' `runs` add up to 4",
    "plan_duplicate_slug/plan.json": "14:15: invalid plan: the slug 'alpha' is planned twice",
    "plan_not_an_object/plan.json": "1:1: invalid plan: expected `object`, got `array`",
    "plan_no_hashes/plan.json": (
        "1:1: this batch was planned by an older dialogcheck, which kept no hash of its scenarios:"
        " a resume could not tell whether one changed since; start a new batch instead"
    ),
}


@pytest.fixture(autouse=True)
def _environment(monkeypatch, plain_output):
    monkeypatch.delenv(UNSET, raising=False)


def expected_lines(name: str, table: dict) -> list[str]:
    value = table[name]
    return [f"{BAD / name}:{line}" for line in ((value,) if isinstance(value, str) else value)]


def template_lines(name: str) -> list[str]:
    return [f"{BAD / template}:{line}" for template, lines in TEMPLATE_ERRORS[name].items() for line in lines]


def test_the_corpus_and_the_tables_agree():
    on_disk = {path.relative_to(BAD).as_posix() for path in BAD.rglob("*") if path.is_file()}
    templates = {template for found in TEMPLATE_ERRORS.values() for template in found}
    assert on_disk == set(SCENARIO_ERRORS) | set(EVENT_ERRORS) | set(PLAN_ERRORS) | set(TEMPLATE_ERRORS) | templates
    from tests.reliability.figures import record

    record("bad files in the corpus", {
        "definition files": len(SCENARIO_ERRORS) + len(TEMPLATE_ERRORS), "prompt templates": len(templates),
        "conversation files": len(EVENT_ERRORS), "results plans": len(PLAN_ERRORS),
    })


@pytest.mark.parametrize("name", sorted(SCENARIO_ERRORS))
def test_validate_bad_scenario(name):
    result = CliRunner().invoke(cli, ["validate", str(BAD / name)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stdout.splitlines()
    assert lines == [*expected_lines(name, SCENARIO_ERRORS), "1 file, 0 valid, 1 with problems"]


@pytest.mark.parametrize("name", sorted(TEMPLATE_ERRORS))
def test_validate_bad_prompt_templates(name):
    result = CliRunner().invoke(cli, ["validate", str(BAD / name)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout.splitlines() == [*template_lines(name), "1 file, 0 valid, 1 with problems"]


@pytest.mark.parametrize("name", sorted(EVENT_ERRORS))
def test_check_bad_events(name):
    result = CliRunner().invoke(cli, ["check", "--scenario", str(SCENARIO), str(BAD / name)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    assert result.stderr.splitlines() == expected_lines(name, EVENT_ERRORS)


@pytest.mark.parametrize("name", sorted(PLAN_ERRORS))
def test_resume_bad_plan(name):
    folder = (BAD / name).parent
    result = CliRunner().invoke(cli, ["run", "--resume", str(folder)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    assert result.stderr.splitlines() == expected_lines(name, PLAN_ERRORS)
    assert sorted(p.name for p in folder.iterdir()) == ["plan.json"]  # refused before anything was written


def _env() -> dict[str, str]:
    return plain_env(UNSET)


def test_installed_validate_on_the_whole_corpus():
    """Every file named: a folder is searched only for dialogcheck's files, and most of the corpus is no such file."""
    files = [str(BAD / name) for name in sorted({*SCENARIO_ERRORS, *TEMPLATE_ERRORS})]
    done = subprocess.run([str(DIALOGCHECK), "validate", *files], capture_output=True, text=True, env=_env(), check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    printed = done.stdout.splitlines()
    for name in SCENARIO_ERRORS:
        for line in expected_lines(name, SCENARIO_ERRORS):
            assert line in printed
    for name in TEMPLATE_ERRORS:
        for line in template_lines(name):
            assert line in printed
    count = len(SCENARIO_ERRORS) + len(TEMPLATE_ERRORS)
    assert printed[-1] == f"{count} files, 0 valid, {count} with problems"


@pytest.mark.parametrize("name", ["events_broken_line.jsonl", "events_non_utf8.jsonl"])
def test_installed_check_on_bad_events(name):
    done = subprocess.run(
        [str(DIALOGCHECK), "check", "--scenario", str(SCENARIO), str(BAD / name)], capture_output=True, text=True, env=_env(), check=False
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.splitlines() == expected_lines(name, EVENT_ERRORS)


# Inputs too big to commit: made here, run as a real subprocess, held to time and memory bounds.
BIG_LINE_BYTES = 50 * 2**20
#: CPU seconds a refused or judged big input may cost: the bound of "ends quickly" that a loaded machine does not
#: stretch (the wall clock is recorded, not bounded).
CPU_BOUND_S = 30.0
RSS_BOUND_MB = 1024.0


def _big(tmp_path: Path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


BIG_INPUTS = {
    # name: (file content, command after `dialogcheck`, exit code, the one stderr/stdout line, or None when it is judged)
    "yaml_50mb_line": (
        lambda: b"scenario:\n  name: Big\n  simulation_context: " + b"a" * BIG_LINE_BYTES + b"\n",
        "big.yml", ["validate"], 2, "1:1: the file is larger than 1 MB: scenario, SOP and config files must be smaller",
    ),
    "yaml_100k_levels": (
        lambda: b"scenario: " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "deep.yml", ["validate"], 2, "1:110: invalid YAML: nested more than 100 levels deep",
    ),
    "jsonl_50mb_line_valid": (
        lambda: b'{"event": "user", "text": "' + b"a" * BIG_LINE_BYTES + b'"}\n',
        "big.jsonl", ["check", "--no-judge", "--scenario", str(SCENARIO)], 1, None,
    ),
    "jsonl_50mb_line_broken": (
        lambda: b'{"event": "user", "text": "' + b"a" * BIG_LINE_BYTES + b"\n",
        "broken.jsonl", ["check", "--no-judge", "--scenario", str(SCENARIO)], 2,
        f"1:{BIG_LINE_BYTES + 28}: invalid JSON: unexpected control character in string",  # the line end, inside the string
    ),
    "json_100k_levels": (
        lambda: b"[" * 100_000 + b"]" * 100_000,
        "deep.json", ["check", "--no-judge", "--scenario", str(SCENARIO)], 2, "1:1026: invalid JSON: depth limit exceeded",
    ),
}


@pytest.mark.parametrize("case", sorted(BIG_INPUTS))
def test_big_inputs_end_quickly_in_bounded_memory(tmp_path, case):
    from tests.reliability.figures import measure, record

    content, name, command, code, line = BIG_INPUTS[case]
    path = _big(tmp_path, name, content())
    done = measure([str(DIALOGCHECK), *command, str(path)], tmp_path, env=_env())
    record(f"big input {case}", {"bytes": path.stat().st_size, "exit": done.returncode, "wall_s": round(done.wall_s, 2), "cpu_s": round(done.cpu_s, 2), "peak_rss_mb": round(done.peak_rss_mb)})
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == code, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.cpu_s < CPU_BOUND_S and done.peak_rss_mb < RSS_BOUND_MB, (done.cpu_s, done.peak_rss_mb)
    if line is None:
        assert "verdict: FAIL" in done.stdout  # judged like any conversation: it has none of the example's events
    else:
        printed = done.stdout if command[0] == "validate" else done.stderr
        assert printed.splitlines()[0] == f"{path}:{line}"


def test_check_refuses_a_scenario_holding_a_lone_surrogate_before_any_output():
    """Such a value once passed `validate` and then broke every output of `check` (no UTF-8 can hold it)."""
    conversation = EXAMPLE / "conversations" / "damaged_card_ok.jsonl"
    scenario = BAD / "lone_surrogate_value.yml"
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--scenario", str(scenario), str(conversation)])
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert (error["file"], error["line"], error["column"]) == (str(scenario), 3, 23)
    assert error["message"].startswith("`\\udc9f` is half of a UTF-16 surrogate pair")


# --- a file in another format, and the problems past the first 50 ---------------------------------------------

IMPORT_DATA = REPO / "tests" / "importers" / "data"
_OPENAI = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def _other_format_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """A file of each format `import` tells from its content, and the `line:col` of its first item."""
    from tests.importers.test_rasa_proto import STREAM

    made = {"openai-jsonl": ("openai", "".join(json.dumps(_OPENAI) + "\n" for _ in range(60))),
            "openai-list": ("openai", json.dumps(_OPENAI["messages"], indent=2)),
            "rasa-proto": ("rasa-proto", "".join(json.dumps(row) + "\n" for row in STREAM if "sequence" in row))}
    files = {"tau-bench": (IMPORT_DATA / "tau_bench_airline_sample.json", "tau-bench", "2:3"),
             "tau2": (IMPORT_DATA / "tau2_airline_sample.json", "tau2", "1:1"),
             "otlp": (IMPORT_DATA / "otlp_weather.jsonl", "otlp", "1:1")}
    for name, (fmt, text) in made.items():
        (folder / f"{name}.jsonl").write_text(text)
        files[name] = (folder / f"{name}.jsonl", fmt, "2:3" if name == "openai-list" else "1:1")
    return files


@pytest.mark.parametrize("name", ["tau-bench", "tau2", "otlp", "openai-jsonl", "openai-list", "rasa-proto"])
def test_check_of_another_format_without_input_format_says_once_which_format(tmp_path, name):
    """Not 50 lines of "field `event` is missing": one line naming the format, as `import` recognises it."""
    from dialogcheck.importers import FORMAT_NAMES

    path, fmt, at = _other_format_files(tmp_path)[name]
    result = CliRunner().invoke(cli, ["check", "--scenario", str(SCENARIO), str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{path}:{at}: this looks like {FORMAT_NAMES[fmt]}, not native events: add `--input-format {fmt}`"
        f" (or convert it with `dialogcheck import --from {fmt}`)"]


def test_a_native_event_with_a_mistake_is_never_taken_for_another_format(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps({"event": "user", "role": "user", "messages": [], "text": 5}) + "\n")
    result = CliRunner().invoke(cli, ["check", "--scenario", str(SCENARIO), str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"{path}:1:51: event 0: field `text` must be a string or null, got a number"]


_MISSING = "field `event` is missing: every event names its type"


@pytest.mark.parametrize("container", ["json", "jsonl"])
def test_problems_past_the_first_50_are_counted_at_the_first_left_out(tmp_path, container):
    """362 bad events: 50 lines, then one that says 312 more were left out and where they start."""
    events = [{"event": "user", "text": "hi"}] * 3 + [{"text": f"x{i}"} for i in range(362)]
    path = tmp_path / f"events.{container}"
    path.write_text(json.dumps(events) if container == "json" else "".join(json.dumps(e) + "\n" for e in events))
    result = CliRunner().invoke(cli, ["check", "--scenario", str(SCENARIO), str(path)])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 51 and all(_MISSING in line for line in lines[:50])
    text = path.read_text()
    first_left_out = text.index(json.dumps({"text": "x50"})) + 1
    at = f"1:{first_left_out}" if container == "json" else "54:1"
    assert lines[50] == f"{path}:{at}: ... and 312 more errors from here on (only the first 50 are shown)"
    document = json.loads(CliRunner().invoke(cli, ["check", "--scenario", str(SCENARIO), "--format", "json", str(path)]).stdout)
    assert len(document["error"]["problems"]) == 51 and document["error"]["problems"][-1]["message"].startswith("... and 312 more errors")


def test_an_imported_file_past_50_problems_says_how_many_more(tmp_path):
    """The same for the importers: every item of the file is read, 50 shown, the rest counted."""
    path = tmp_path / "messages.jsonl"
    path.write_text('{"messages": 5}\n' * 60)
    for args in (["check", "--scenario", str(SCENARIO), "--input-format", "openai", str(path)], ["import", "--from", "openai", str(path)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2
        lines = result.stderr.splitlines()
        assert len(lines) == 51 and lines[49] == f"{path}:50:14: `messages` must be a list, got a number", args
        assert lines[50] == f"{path}:51:14: ... and 10 more errors from here on (only the first 50 are shown)", args
