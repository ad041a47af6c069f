"""Scenario files (SPEC sections 4 and 10): every field, every rule, every error with its position."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dialogcheck import load_scenario
from dialogcheck.errors import LoadError
from dialogcheck.scenario.model import DEFAULT_MAX_TURNS, SCENARIO_TYPES

MINIMAL = """\
scenario:
  name: Replace a card
  simulation_context: You want a new card.
"""


def write(tmp_path: Path, text: str | bytes, name: str = "s.yml") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def load(tmp_path: Path, text: str, environ: dict[str, str] | None = None, name: str = "s.yml"):
    return load_scenario(write(tmp_path, text, name), environ={} if environ is None else environ)


def error(tmp_path: Path, text: str | bytes, environ: dict[str, str] | None = None) -> str:
    """The whole error text, with the file path replaced by `s.yml` for readability."""
    path = write(tmp_path, text)
    with pytest.raises(LoadError) as info:
        load_scenario(path, environ={} if environ is None else environ)
    return str(info.value).replace(str(path), "s.yml")


def with_fields(extra: str) -> str:
    """MINIMAL plus lines under `scenario:` (given at two-space indent)."""
    return MINIMAL + textwrap.indent(textwrap.dedent(extra), "  ")


# --- what loads --------------------------------------------------------------


def test_minimal_scenario_and_defaults(tmp_path):
    scenario = load(tmp_path, MINIMAL, name="card_replace_damaged.yml")
    assert scenario.slug == "card_replace_damaged"
    assert scenario.name == "Replace a card"
    assert scenario.simulation_context == "You want a new card."
    assert scenario.path == str(tmp_path / "card_replace_damaged.yml")
    assert scenario.type is None
    assert scenario.max_turns == DEFAULT_MAX_TURNS == 30
    assert scenario.script is None
    assert scenario.tags == ()
    assert dict(scenario.initial_slots) == {}
    assert scenario.goals.empty


def test_mantle_form_with_every_field(tmp_path):
    scenario = load(
        tmp_path,
        """\
        scenario:
          name: Customer replaces a damaged card
          type: happy_path
          simulation_context: >
            You are a calm customer
            whose card has a cracked chip.
          setup:
            initial_slots: {project.preferred_language: en, retries: 2, flags: {vip: true}}
          goals:
            criteria: [The agent does not claim the order is placed before submitting it]
            assertions:
              - skill_completed: {skill_id: card_replace}
              - memory_was_set:
                  - name: card_replace.replacement_reason
          max_turns: 12
          script:
            - My card is broken
            - "Yes please"
          tags: [card_replace, smoke]
        """,
    )
    assert scenario.type == "happy_path"
    assert scenario.simulation_context == "You are a calm customer whose card has a cracked chip.\n"
    assert dict(scenario.initial_slots) == {"project.preferred_language": "en", "retries": 2, "flags": {"vip": True}}
    assert scenario.goals.criteria == ("The agent does not claim the order is placed before submitting it",)
    assert [a.key for a in scenario.goals.assertions] == ["skill_completed", "memory_was_set"]
    assert scenario.goals.sop is None
    assert not scenario.goals.empty
    assert scenario.max_turns == 12
    assert scenario.script == ("My card is broken", "Yes please")
    assert scenario.tags == ("card_replace", "smoke")


@pytest.mark.parametrize("kind", SCENARIO_TYPES)
def test_every_scenario_type(tmp_path, kind):
    assert load(tmp_path, with_fields(f"type: {kind}\n")).type == kind


def test_the_seven_types():
    assert SCENARIO_TYPES == ("happy_path", "sad_path", "edge_case", "ambiguity", "out_of_scope", "escalation", "adversarial")


@pytest.mark.parametrize("turns", [1, 1000])
def test_max_turns_bounds_are_inclusive(tmp_path, turns):
    assert load(tmp_path, with_fields(f"max_turns: {turns}\n")).max_turns == turns


@pytest.mark.parametrize("goals", ["", "goals:\n", "goals: null\n", "goals: {}\n"])
def test_goals_absent_null_or_empty(tmp_path, goals):
    scenario = load(tmp_path, with_fields(goals))
    assert scenario.goals.empty
    assert scenario.goals.assertions == () and scenario.goals.criteria == ()


def test_yaml_1_2_yes_no_on_off_stay_strings(tmp_path):
    scenario = load(
        tmp_path,
        with_fields(
            """\
            script: [yes, no, on, off, y, n]
            tags: [Yes, OFF]
            setup:
              initial_slots: {confirmed: yes, real_bool: true, day: 2024-01-05, octal: 010}
            """
        ),
    )
    assert scenario.script == ("yes", "no", "on", "off", "y", "n")
    assert scenario.tags == ("Yes", "OFF")
    assert dict(scenario.initial_slots) == {"confirmed": "yes", "real_bool": True, "day": "2024-01-05", "octal": 10}


def test_yaml_1_2_reads_numbers_by_its_core_schema_and_1_1_forms_stay_strings(tmp_path):
    scenario = load(
        tmp_path,
        with_fields(
            """\
            setup:
              initial_slots: {a: 1_000, b: 0b101, c: 0o17, d: 0x1F, e: -12, f: 1_0.5, g: 1e3, h: .5, i: .inf, j: 0o1_7, k: 12:30}
            """
        ),
    )
    assert dict(scenario.initial_slots) == {
        "a": "1_000", "b": "0b101", "c": 15, "d": 31, "e": -12, "f": "1_0.5", "g": 1000.0, "h": 0.5, "i": float("inf"), "j": "0o1_7", "k": "12:30",
    }
    old = load(tmp_path, "%YAML 1.1\n---\n" + with_fields("setup:\n  initial_slots: {a: 1_000, b: 0b101}\n"))
    assert dict(old.initial_slots) == {"a": 1000, "b": 5}  # a file that says it is YAML 1.1 is read by 1.1's rules


def test_merge_keys(tmp_path):
    scenario = load(
        tmp_path,
        """\
        scenario:
          <<: {name: From the merge, simulation_context: merged, max_turns: 3}
          name: Written here
        """,
    )
    assert (scenario.name, scenario.simulation_context, scenario.max_turns) == ("Written here", "merged", 3)


# --- ${VAR} expansion --------------------------------------------------------


def test_variables_expand_inside_string_values(tmp_path):
    scenario = load(
        tmp_path,
        """\
        scenario:
          name: Transfer to ${PAYEE}
          simulation_context: "Send ${AMOUNT} euros to ${PAYEE}"
          tags: ["${TAG}"]
          setup:
            initial_slots: {payee: "${PAYEE}"}
        """,
        environ={"PAYEE": "Maria", "AMOUNT": "50", "TAG": "transfer"},
    )
    assert scenario.name == "Transfer to Maria"
    assert scenario.simulation_context == "Send 50 euros to Maria"
    assert scenario.tags == ("transfer",)
    assert dict(scenario.initial_slots) == {"payee": "Maria"}


def test_a_variable_never_adds_structure(tmp_path):
    scenario = load(tmp_path, with_fields("tags: ['${T}']\n"), environ={"T": "a, b: [c]"})
    assert scenario.tags == ("a, b: [c]",)


def test_a_variable_stays_a_string(tmp_path):
    # `${N}` is replaced after parsing, inside the string: it cannot make an integer.
    assert error(tmp_path, with_fields("max_turns: ${N}\n"), environ={"N": "5"}) == (
        "s.yml:4:14: `max_turns` in `scenario` must be an integer, got a string"
    )


def test_double_dollar_is_a_literal(tmp_path):
    scenario = load(tmp_path, with_fields("script: ['costs $${PRICE}', 'plain $ sign', '$$ twice']\n"))
    assert scenario.script == ("costs ${PRICE}", "plain $ sign", "$$ twice")


def test_variables_from_the_process_environment_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALOGCHECK_TEST_WHO", "Ana")
    path = write(tmp_path, with_fields("tags: ['${DIALOGCHECK_TEST_WHO}']\n"))
    assert load_scenario(path).tags == ("Ana",)


def test_unset_variable(tmp_path):
    assert error(tmp_path, with_fields("tags: [ok, 'for ${WHO}']\n"), environ={"OTHER": "x"}) == (
        "s.yml:4:14: environment variable `WHO` is not set (used as `${WHO}`)"
    )


def test_every_unset_variable_is_reported(tmp_path):
    text = "scenario:\n  name: ${A}\n  simulation_context: ${B}\n"
    assert error(tmp_path, text) == (
        "s.yml:2:9: environment variable `A` is not set (used as `${A}`)\n"
        "s.yml:3:23: environment variable `B` is not set (used as `${B}`)"
    )


def test_invalid_variable_name(tmp_path):
    assert error(tmp_path, with_fields("tags: ['${1X}']\n")) == (
        "s.yml:4:10: `${1X}` is not a valid variable name (write `$${...}` for a literal)"
    )


# --- errors ------------------------------------------------------------------


def test_missing_required_fields(tmp_path):
    assert error(tmp_path, "scenario:\n  type: sad_path\n") == (
        "s.yml:2:3: `scenario` is missing required field `name`\n"
        "s.yml:2:3: `scenario` is missing required field `simulation_context`"
    )


def test_missing_scenario_key(tmp_path):
    assert error(tmp_path, "{}\n") == "s.yml:1:1: the scenario file is missing required field `scenario`"


def test_scenario_must_be_a_mapping(tmp_path):
    assert error(tmp_path, "scenario: [a]\n") == "s.yml:1:11: `scenario` in the scenario file must be a mapping, got a list"


def test_scenario_key_without_a_value(tmp_path):
    assert error(tmp_path, "scenario:\n") == "s.yml:1:1: `scenario` in the scenario file must be a mapping, got null"


def test_file_must_be_a_mapping(tmp_path):
    assert error(tmp_path, "- a\n- b\n") == "s.yml:1:1: a scenario file must be a mapping, got a list"


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_empty_file(tmp_path, text):
    assert error(tmp_path, text) == "s.yml:1:1: a scenario file must be a mapping, got nothing"


def test_type_with_did_you_mean(tmp_path):
    assert error(tmp_path, with_fields("type: happy-path\n")) == (
        "s.yml:4:9: `type` in `scenario` must be one of happy_path, sad_path, edge_case, ambiguity, out_of_scope,"
        " escalation, adversarial, got 'happy-path' (did you mean `happy_path`?)"
    )


def test_type_with_nothing_close(tmp_path):
    assert error(tmp_path, with_fields("type: qqq\n")) == (
        "s.yml:4:9: `type` in `scenario` must be one of happy_path, sad_path, edge_case, ambiguity, out_of_scope,"
        " escalation, adversarial, got 'qqq'"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "must be an integer from 1 to 1000, got 0"),
        ("1001", "must be an integer from 1 to 1000, got 1001"),
        ("-3", "must be an integer from 1 to 1000, got -3"),
        ("2.5", "must be an integer, got a number"),
        ("'5'", "must be an integer, got a string"),
        ("true", "must be an integer, got a boolean"),
        ("[5]", "must be an integer, got a list"),
    ],
)
def test_max_turns_errors(tmp_path, value, message):
    assert error(tmp_path, with_fields(f"max_turns: {value}\n")) == f"s.yml:4:14: `max_turns` in `scenario` {message}"


def test_name_of_wrong_type(tmp_path):
    assert error(tmp_path, "scenario:\n  name: [a]\n  simulation_context: c\n") == (
        "s.yml:2:9: `name` in `scenario` must be a string, got a list"
    )


def test_name_without_a_value_points_at_its_key(tmp_path):
    assert error(tmp_path, "scenario:\n  name:\n  simulation_context: c\n") == (
        "s.yml:2:3: `name` in `scenario` must be a string, got null"
    )


def test_empty_name(tmp_path):
    assert error(tmp_path, "scenario:\n  name: '  '\n  simulation_context: c\n") == (
        "s.yml:2:9: `name` in `scenario` must not be empty"
    )


def test_script_and_tags_errors(tmp_path):
    assert error(tmp_path, with_fields("script: [hello, 3, '']\ntags: smoke\n")) == (
        "s.yml:4:19: item 2 of `script` in `scenario` must be a non-empty string, got an integer\n"
        "s.yml:4:22: item 3 of `script` in `scenario` must be a non-empty string, got a string\n"
        "s.yml:5:9: `tags` in `scenario` must be a list, got a string"
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("script: []\n", "s.yml:4:11: `script` in `scenario` must hold at least one item, got 0"),
        ("tags: []\n", "s.yml:4:9: `tags` in `scenario` must hold at least one item, got 0"),
        ("goals:\n  criteria: []\n", "s.yml:5:15: `criteria` in `goals` must hold at least one item, got 0"),
        ("goals:\n  assertions: []\n", "s.yml:5:17: `goals.assertions` must hold at least one item, got 0"),
    ],
)
def test_empty_lists(tmp_path, extra, expected):
    assert error(tmp_path, with_fields(extra)) == expected


def test_goals_of_wrong_shapes(tmp_path):
    assert error(tmp_path, with_fields("goals: [a]\n")) == "s.yml:4:10: `goals` must be a mapping, got a list"
    assert error(tmp_path, with_fields("goals:\n  criteria: one\n")) == "s.yml:5:15: `criteria` in `goals` must be a list, got a string"
    assert error(tmp_path, with_fields("goals:\n  assertions: {skill_completed: {skill_id: x}}\n")) == (
        "s.yml:5:17: `goals.assertions` must be a list, got a mapping"
    )
    assert error(tmp_path, with_fields("goals:\n  assertions:\n")) == "s.yml:5:5: `goals.assertions` must be a list, got null"


def test_setup_errors(tmp_path):
    assert error(tmp_path, with_fields("setup: {initial_slots: [a]}\n")) == (
        "s.yml:4:26: `initial_slots` in `setup` must be a mapping, got a list"
    )
    assert error(tmp_path, with_fields("setup: 3\n")) == "s.yml:4:10: `setup` in `scenario` must be a mapping, got an integer"


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("simulation_contxt: c\n", "s.yml:4:3: unknown field `simulation_contxt` in `scenario` (did you mean `simulation_context`?)"),
        ("max_turn: 3\n", "s.yml:4:3: unknown field `max_turn` in `scenario` (did you mean `max_turns`?)"),
        ("tag: [a]\n", "s.yml:4:3: unknown field `tag` in `scenario` (did you mean `tags`?)"),
        ("goal: {}\n", "s.yml:4:3: unknown field `goal` in `scenario` (did you mean `goals`?)"),
        ("colour: blue\n", "s.yml:4:3: unknown field `colour` in `scenario`"),
        ("goals:\n  criterias: [a]\n", "s.yml:5:5: unknown field `criterias` in `goals` (did you mean `criteria`?)"),
        ("setup:\n  initial_slot: {a: 1}\n", "s.yml:5:5: unknown field `initial_slot` in `setup` (did you mean `initial_slots`?)"),
    ],
)
def test_unknown_keys(tmp_path, extra, expected):
    assert error(tmp_path, with_fields(extra)) == expected


def test_misspelt_required_field_is_also_missing(tmp_path):
    assert error(tmp_path, "scenario:\n  name: N\n  simulation-context: c\n") == (
        "s.yml:3:3: unknown field `simulation-context` in `scenario` (did you mean `simulation_context`?)\n"
        "s.yml:2:3: `scenario` is missing required field `simulation_context`"
    )


def test_unknown_top_level_key(tmp_path):
    assert error(tmp_path, MINIMAL + "scenarios: {}\n") == (
        "s.yml:4:1: unknown field `scenarios` in the scenario file (did you mean `scenario`?)"
    )


def test_unknown_assertion_key(tmp_path):
    assert error(tmp_path, with_fields("goals:\n  assertions:\n    - skill_complete: {skill_id: x}\n")) == (
        "s.yml:6:9: unknown assertion `skill_complete` (did you mean `skill_completed`?)"
    )


def test_duplicate_keys(tmp_path):
    assert error(tmp_path, MINIMAL + "  name: Again\n") == "s.yml:4:3: duplicate key `name` (first defined at line 2)"


def test_duplicate_keys_deep_inside(tmp_path):
    text = with_fields("setup:\n  initial_slots:\n    a: 1\n    b: 2\n    a: 3\n")
    assert error(tmp_path, text) == "s.yml:8:7: duplicate key `a` (first defined at line 6)"


def test_every_duplicate_is_reported(tmp_path):
    text = "scenario:\n  name: A\n  name: B\n  simulation_context: c\n  simulation_context: d\n"
    assert error(tmp_path, text) == (
        "s.yml:3:3: duplicate key `name` (first defined at line 2)\n"
        "s.yml:5:3: duplicate key `simulation_context` (first defined at line 4)"
    )


def test_several_problems_reported_together(tmp_path):
    text = "scenario:\n  name: N\n  type: happy\n  max_turns: 0\n  colour: red\n"
    assert error(tmp_path, text) == (
        "s.yml:5:3: unknown field `colour` in `scenario`\n"
        "s.yml:2:3: `scenario` is missing required field `simulation_context`\n"
        "s.yml:3:9: `type` in `scenario` must be one of happy_path, sad_path, edge_case, ambiguity, out_of_scope,"
        " escalation, adversarial, got 'happy' (did you mean `happy_path`?)\n"
        "s.yml:4:14: `max_turns` in `scenario` must be an integer from 1 to 1000, got 0"
    )


def test_non_utf8_bytes(tmp_path):
    assert error(tmp_path, b"scenario:\n  name: caf\xe9\n  simulation_context: c\n") == (
        "s.yml:2:12: invalid UTF-8 byte 0xe9: expected UTF-8 text"
    )


def test_malformed_yaml(tmp_path):
    assert error(tmp_path, "scenario:\n  name: N\n   simulation_context: c\n") == (
        "s.yml:3:22: invalid YAML: mapping values are not allowed here"
    )


def test_unclosed_flow_list(tmp_path):
    assert error(tmp_path, with_fields("tags: [a, b\n")) == (
        "s.yml:5:1: invalid YAML: while parsing a flow sequence expected ',' or ']', but got '<stream end>'"
    )


def test_tab_indentation(tmp_path):
    assert error(tmp_path, "scenario:\n\tname: N\n") == (
        "s.yml:2:1: invalid YAML: while scanning for the next token found character '\\t' that cannot start any token"
    )


def test_two_documents(tmp_path):
    assert error(tmp_path, MINIMAL + "---\n" + MINIMAL) == (
        "s.yml:4:1: invalid YAML: expected a single document in the stream but found another document"
    )


def test_object_construction_tags_are_refused(tmp_path):
    assert error(tmp_path, "scenario:\n  name: !!python/object:os.system echo\n  simulation_context: c\n") == (
        "s.yml:2:9: unsupported YAML tag `tag:yaml.org,2002:python/object:os.system`: only plain YAML data is read"
    )


def test_tags_on_lists_and_mappings_are_refused(tmp_path):
    text = with_fields("tags: !!set {a: null}\nscript: !!python/object/apply:os.system [echo hi]\n")
    assert error(tmp_path, text) == (
        "s.yml:4:9: unsupported YAML tag `tag:yaml.org,2002:set`: only plain YAML data is read\n"
        "s.yml:5:11: unsupported YAML tag `tag:yaml.org,2002:python/object/apply:os.system`: only plain YAML data is read"
    )


def test_aliases_are_read_and_their_problems_reported_once(tmp_path):
    scenario = load(tmp_path, "scenario:\n  name: &n Same text\n  simulation_context: *n\n  tags: [*n]\n")
    assert scenario.name == scenario.simulation_context == "Same text"
    assert scenario.tags == ("Same text",)
    text = "scenario:\n  name: &n ${NOPE}\n  simulation_context: *n\n"
    assert error(tmp_path, text) == "s.yml:2:9: environment variable `NOPE` is not set (used as `${NOPE}`)"


def test_recursive_alias(tmp_path):
    text = "scenario: &a\n  name: N\n  simulation_context: c\n  tags: *a\n"
    assert error(tmp_path, text) == "s.yml:1:11: this alias refers to a node that contains it: recursive data cannot be read"


def test_alias_bomb_is_refused_at_the_alias_that_crosses_the_limit(tmp_path):
    levels = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]  # 10**9 strings if expanded
    text = "\n".join(levels) + "\n" + MINIMAL
    assert error(tmp_path, text) == "s.yml:5:10: invalid YAML: aliases expand this document to more than 20,000 values (an alias bomb?)"


def test_shared_anchors_well_under_the_limit_still_load(tmp_path):
    shared = "      s0: &slots {" + ", ".join(f"k{i}: {i}" for i in range(100)) + "}\n"
    uses = "".join(f"      s{i}: *slots\n" for i in range(1, 50))  # 50 copies of 201 values: 10,050 values
    scenario = load(tmp_path, "scenario:\n  name: N\n  simulation_context: c\n  setup:\n    initial_slots:\n" + shared + uses)
    assert len(scenario.initial_slots) == 50 and scenario.initial_slots["s49"]["k99"] == 99


def test_nesting_too_deep(tmp_path):
    text = "scenario:\n" + "".join(" " * i + "a:\n" for i in range(1, 300))
    assert error(tmp_path, text) == "s.yml:100:100: invalid YAML: nested more than 100 levels deep"


def test_nesting_too_deep_through_aliases(tmp_path):
    chain = "x0: &x0 [leaf]\n" + "".join(f"x{i}: &x{i} [*x{i - 1}]\n" for i in range(1, 120))
    assert error(tmp_path, chain + MINIMAL) == "s.yml:100:6: invalid YAML: nested more than 100 levels deep (through aliases)"


def test_keys_must_be_strings(tmp_path):
    assert error(tmp_path, MINIMAL + "  3: x\n") == "s.yml:4:3: mapping keys must be strings, got an integer `3`"


def test_file_that_does_not_exist(tmp_path):
    path = tmp_path / "missing.yml"
    with pytest.raises(LoadError) as info:
        load_scenario(path, environ={})
    assert str(info.value) == f"{path}:1:1: cannot read file: No such file or directory"


def test_load_error_carries_structured_problems(tmp_path):
    path = write(tmp_path, with_fields("max_turns: 0\n"))
    with pytest.raises(LoadError) as info:
        load_scenario(path, environ={})
    (problem,) = info.value.problems
    assert problem.to_dict() == {
        "message": "`max_turns` in `scenario` must be an integer from 1 to 1000, got 0",
        "file": str(path),
        "line": 4,
        "column": 14,
    }


# --- scalars a tag cannot read, YAML versions, lone surrogates (never a traceback) -----------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("!!int abc", "'abc', tagged `!!int`, is not an integer"),
        ("!!int ''", "'', tagged `!!int`, is not an integer"),
        ("!!float x1", "'x1', tagged `!!float`, is not a number"),
        ("!!float ''", "'', tagged `!!float`, is not a number"),
        ("!!bool perhaps", "'perhaps', tagged `!!bool`, is not true or false"),
        ("9" * 4301, "an integer of 4,301 digits is too long: at most 4,300 digits are read"),
        ("-" + "10" * 2200, "an integer of 4,400 digits is too long: at most 4,300 digits are read"),
    ],
)
def test_a_scalar_its_tag_cannot_read_is_an_error_at_its_place(tmp_path, value, message):
    assert error(tmp_path, with_fields(f"max_turns: {value}\n")) == f"s.yml:4:14: {message}"


def test_the_longest_integer_python_reads_is_still_read(tmp_path):
    assert error(tmp_path, with_fields(f"max_turns: {'9' * 4300}\n")).startswith("s.yml:4:14: `max_turns` in `scenario` must be an integer from 1 to 1000")


@pytest.mark.parametrize("version", ["1.3", "2.0", "1.0"])
def test_a_yaml_version_that_cannot_be_read_is_refused_at_the_directive(tmp_path, version):
    expected = f"s.yml:1:1: invalid YAML: unsupported YAML version {version} in the `%YAML` directive: YAML 1.1 and 1.2 are read"
    assert error(tmp_path, f"%YAML {version}\n---\n" + MINIMAL) == expected


def test_the_yaml_version_directive_1_2_is_read(tmp_path):
    assert load(tmp_path, "%YAML 1.2\n---\n" + MINIMAL).name == "Replace a card"


@pytest.mark.parametrize(
    ("line", "where", "escape"),
    [
        ('  name: "\\ud800"\n', "2:9", "\\ud800"),
        ('  name: "ok \\U0000dc00"\n', "2:9", "\\udc00"),
        ('  "\\ud800": 1\n', "2:3", "\\ud800"),
        ('  name: "\\udc00\\ud83d"\n', "2:9", "\\udc00"),  # a low half before a high half is no pair
    ],
)
def test_a_lone_surrogate_is_an_error_at_its_scalar(tmp_path, line, where, escape):
    text = "scenario:\n" + line + "  simulation_context: c\n"
    expected = f"s.yml:{where}: `{escape}` is half of a UTF-16 surrogate pair, not a character: write the character itself"
    assert error(tmp_path, text).splitlines()[0] == expected


def test_an_escaped_surrogate_pair_is_the_character_it_encodes(tmp_path):
    scenario = load(tmp_path, 'scenario:\n  name: "card \\ud83d\\udcb3"\n  simulation_context: c\n')
    assert scenario.name == "card \U0001f4b3"


def test_messages_about_a_key_with_a_lone_surrogate_stay_printable(tmp_path):
    text = error(tmp_path, 'scenario:\n  "\\ud800": 1\n  "\\ud800": 2\n')
    assert text.splitlines()[-1] == "s.yml:3:3: duplicate key `\\ud800` (first defined at line 2)"
    text.encode("utf-8")  # no lone surrogate reaches a message


def test_an_environment_variable_that_is_not_utf8_is_an_error(tmp_path):
    undecodable = b"card \xff".decode("utf-8", "surrogateescape")  # how Python reads such bytes from the environment
    text = "scenario:\n  name: ${WHO}\n  simulation_context: c\n"
    assert error(tmp_path, text, {"WHO": undecodable}) == (
        "s.yml:2:9: environment variable `WHO` holds bytes that are not UTF-8 text (used as `${WHO}`)"
    )


@pytest.mark.parametrize(
    ("version", "prefix", "digit", "count", "about"),
    [("", "0x", "f", 5000, "6,021"), ("", "0o", "7", 6000, "5,419"), ("%YAML 1.1\n---\n", "0b", "1", 20000, "6,021")],  # binary is YAML 1.1's
)
def test_an_integer_in_another_base_past_the_digit_limit_is_refused(tmp_path, version, prefix, digit, count, about):
    """Python reads hex, octal and binary of any length, but could print no message naming such a number."""
    text = version + with_fields(f"max_turns: {prefix}{digit * count}\n")
    line = 4 + version.count("\n")
    assert error(tmp_path, text) == f"s.yml:{line}:14: an integer of about {about} digits is too long: at most 4,300 digits are read"


def test_a_long_integer_in_a_message_is_cut(tmp_path):
    message = error(tmp_path, with_fields(f"max_turns: 0x{'f' * 3000}\n"))
    assert message.startswith("s.yml:4:14: `max_turns` in `scenario` must be an integer from 1 to 1000, got 22905932")
    assert message.endswith("…") and len(message) < 200
