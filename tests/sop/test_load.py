"""Loading SOP steps and SOP files: the parsed objects, and every load error with its position."""

import textwrap

import pytest

from dialogcheck.checks.sop import ConfirmationRequested, LlmJudge, NoToolCalled, ToolCalled, ToolInputContains, ToolSequence
from dialogcheck.checks.sop_fields import Equals, GreaterThan, Matches
from dialogcheck.errors import LoadError
from dialogcheck.scenario.load import load_scenario
from dialogcheck.sop import Sop, StepSet, load_sop
from tests.sop.conftest import sop_file_error, steps_error, steps_from_yaml


def test_every_evaluator_type_parses_with_the_seed_field_names():
    steps = steps_from_yaml(
        """
        - {type: tool_called, toolSlug: get_order, catalogSlug: shop}
        - {type: tool_sequence, sequence: [get_order, 'set_delivery_address|set_address'], contiguous: false}
        - type: tool_input_contains
          toolSlug: get_order
          assertions:
            order_id: {op: matches, pattern: '^#W\\d+$'}
            items.0.qty: {op: gt, value: 0}
            express: {op: equals, value: true}
        - {type: no_tool_called, toolSlugs: [complete_cart, refund]}
        - {type: confirmation_requested, beforeToolSlug: set_delivery_address, pattern: '(?i)confirm', withinLastNTurns: 3}
        - {type: llm_judge, criterion: Agent verifies identity, rubric: strict, model: judge-1}
        """
    )
    assert [step.evaluator for step in steps.steps] == [
        ToolCalled("get_order", "shop"),
        ToolSequence(("get_order", "set_delivery_address|set_address"), False),
        ToolInputContains(
            "get_order",
            assertions=(Matches("order_id", r"^#W\d+$"), GreaterThan("items.0.qty", 0), Equals("express", True)),
        ),
        NoToolCalled(("complete_cart", "refund")),
        ConfirmationRequested("set_delivery_address", pattern="(?i)confirm", within_last_n_turns=3),
        LlmJudge("Agent verifies identity", "strict", "judge-1"),
    ]
    assert [step.id for step in steps.steps] == [f"step-{n}" for n in range(1, 7)]


STEP_ERRORS = [
    ("- type: tool_caled\n  toolSlug: x\n", "t.yml:1:9: unknown evaluator type `tool_caled` (did you mean `tool_called`?)"),
    (
        "- type: frobnicate\n",
        "t.yml:1:9: unknown evaluator type `frobnicate` (one of tool_called, tool_sequence, tool_input_contains, "
        "tool_output_contains, no_tool_called, confirmation_requested, llm_judge)",
    ),
    ("- type: [a]\n", "t.yml:1:9: `type` in step 1 of `goals.sop` must be a string, got a list"),
    (
        "- toolSlug: x\n",
        "t.yml:1:3: step 1 of `goals.sop` must have an `evaluator` (a step) or a `type` (an evaluator itself)",
    ),
    ("- tool_called\n", "t.yml:1:3: step 1 of `goals.sop` must be a mapping, got a string"),
    ("[]\n", "t.yml:1:1: `goals.sop` (a list of steps) must hold at least one item, got 0"),
    ("{type: tool_called}\n", "t.yml:1:1: `goals.sop` (a list of steps) must be a list, got a mapping"),
    ("- id: a\n  evaluator: tool_called\n", "t.yml:2:14: the evaluator of step 1 of `goals.sop` must be a mapping, got a string"),
    # missing and mistyped fields
    ("- type: tool_called\n", "t.yml:1:3: `tool_called` in step 1 of `goals.sop` is missing required field `toolSlug`"),
    (
        "- id: a\n  evaluator: {type: tool_input_contains, assertions: {a: {op: exists}}}\n",
        "t.yml:2:14: `tool_input_contains` in the evaluator of step 1 of `goals.sop` is missing required field `toolSlug`",
    ),
    ("- type: tool_called\n  toolSlug: 5\n", "t.yml:2:13: `toolSlug` in `tool_called` in step 1 of `goals.sop` must be a string, got an integer"),
    (
        "- type: tool_called\n  toolSlug: x\n  catalogSlug: 3\n",
        "t.yml:3:16: `catalogSlug` in `tool_called` in step 1 of `goals.sop` must be a string, got an integer",
    ),
    (
        "- type: tool_called\n  toolSlug: x\n  catalog: y\n",
        "t.yml:3:3: unknown field `catalog` in `tool_called` in step 1 of `goals.sop` (did you mean `catalogSlug`?)",
    ),
    (
        "- type: tool_called\n  toolSlug: x\n  id: a\n",
        "t.yml:3:3: `id` in step 1 of `goals.sop` belongs to a step: write the step as "
        "`{id: ..., evaluator: {type: ...}}` to set it",
    ),
    ("- type: llm_judge\n  rubric: x\n", "t.yml:1:3: `llm_judge` in step 1 of `goals.sop` is missing required field `criterion`"),
    # slugs
    (
        "- type: tool_called\n  toolSlug: 'a|b'\n",
        "t.yml:2:13: `toolSlug` in `tool_called` in step 1 of `goals.sop` holds `|`: `a|b` alternatives exist only in `tool_sequence`",
    ),
    (
        "- type: no_tool_called\n  toolSlugs: [refund, hangup]\n",
        "t.yml:2:23: item 2 of `toolSlugs` in `no_tool_called` in step 1 of `goals.sop` names the framework tool `hangup`: "
        "the tool log leaves framework tools out, so it could never match (an agent that owns a tool of this name sets `framework_tools`)",
    ),
    (
        "- type: confirmation_requested\n  beforeToolSlug: hangup\n  pattern: ok\n",
        "t.yml:2:19: `beforeToolSlug` in `confirmation_requested` in step 1 of `goals.sop` names the framework tool "
        "`hangup`: the tool log leaves framework tools out, so it could never match"
        " (an agent that owns a tool of this name sets `framework_tools`)",
    ),
    (
        "- type: no_tool_called\n  toolSlugs: ['a|b', 7]\n",
        "t.yml:2:15: item 1 of `toolSlugs` in `no_tool_called` in step 1 of `goals.sop` holds `|`: "
        "`a|b` alternatives exist only in `tool_sequence`\n"
        "t.yml:2:22: item 2 of `toolSlugs` in `no_tool_called` in step 1 of `goals.sop` must be a non-empty string, got an integer",
    ),
    ("- type: no_tool_called\n  toolSlugs: refund\n", "t.yml:2:14: `toolSlugs` in `no_tool_called` in step 1 of `goals.sop` must be a list, got a string"),
    (
        "- type: tool_sequence\n  sequence: []\n  contiguous: true\n",
        "t.yml:2:13: `sequence` in `tool_sequence` in step 1 of `goals.sop` must hold at least one item, got 0",
    ),
    (
        "- type: tool_sequence\n  sequence: ['a|', b]\n  contiguous: true\n",
        "t.yml:2:14: item 1 of `sequence` in `tool_sequence` in step 1 of `goals.sop` has an empty alternative in 'a|'",
    ),
    (
        "- type: tool_sequence\n  sequence: ['a|activate']\n  contiguous: false\n",
        "t.yml:2:14: item 1 of `sequence` in `tool_sequence` in step 1 of `goals.sop` names the framework tool `activate`: "
        "the tool log leaves framework tools out, so it could never match (an agent that owns a tool of this name sets `framework_tools`)",
    ),
    ("- type: tool_sequence\n  sequence: [a, b]\n", "t.yml:1:3: `tool_sequence` in step 1 of `goals.sop` is missing required field `contiguous`"),
    (
        "- type: tool_sequence\n  sequence: [a, b]\n  contiguous: 'no'\n",
        "t.yml:3:15: `contiguous` in `tool_sequence` in step 1 of `goals.sop` must be true or false, got a string",
    ),
    # ops and their values
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: contains, value: b}\n",
        "t.yml:4:13: `op` in assertion `a` of `tool_input_contains` in step 1 of `goals.sop` must be one of "
        "exists, equals, matches, gt, lt, got 'contains' (`contains` is an op of `tool_output_contains`)",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions:\n    a: {op: matches, pattern: b}\n",
        "t.yml:4:13: `op` in assertion `a` of `tool_output_contains` in step 1 of `goals.sop` must be one of "
        "exists, equals, contains, not_in, got 'matches' (`matches` is an op of `tool_input_contains`)",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions:\n    a: {op: equal, value: b}\n",
        "t.yml:4:13: `op` in assertion `a` of `tool_output_contains` in step 1 of `goals.sop` must be one of "
        "exists, equals, contains, not_in, got 'equal' (did you mean `equals`?)",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions:\n    a: {value: b}\n",
        "t.yml:4:8: assertion `a` of `tool_output_contains` in step 1 of `goals.sop` is missing required field `op`",
    ),
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: matches, pattern: '(unclosed'}\n",
        "t.yml:4:31: `pattern` in assertion `a` of `tool_input_contains` in step 1 of `goals.sop` is not a valid "
        "regular expression: missing ) at position 9",
    ),
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: gt, value: '5'}\n",
        "t.yml:4:24: `value` in assertion `a` of `tool_input_contains` in step 1 of `goals.sop` must be a number, got a string",
    ),
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: lt, value: true}\n",
        "t.yml:4:24: `value` in assertion `a` of `tool_input_contains` in step 1 of `goals.sop` must be a number, got a boolean",
    ),
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: equals, value: [1]}\n",
        "t.yml:4:28: `value` in assertion `a` of `tool_input_contains` in step 1 of `goals.sop` must be a string, "
        "a number or a boolean, got a list",
    ),
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: equals, value: null}\n",
        "t.yml:4:28: `value` in assertion `a` of `tool_input_contains` in step 1 of `goals.sop` must be a string, "
        "a number or a boolean, got null",
    ),
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: equals}\n",
        "t.yml:4:8: assertion `a` of `tool_input_contains` in step 1 of `goals.sop` is missing required field `value`",
    ),
    (
        "- type: tool_input_contains\n  toolSlug: x\n  assertions:\n    a: {op: exists, value: 1}\n",
        "t.yml:4:21: unknown field `value` in assertion `a` of `tool_input_contains` in step 1 of `goals.sop`",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions:\n    a: {op: not_in, values: []}\n",
        "t.yml:4:29: `values` in assertion `a` of `tool_output_contains` in step 1 of `goals.sop` must hold at least one item, got 0",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions:\n    a: {op: not_in, values: [a, 5]}\n",
        "t.yml:4:33: item 2 of `values` in assertion `a` of `tool_output_contains` in step 1 of `goals.sop` must be a string, got an integer",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions:\n    a: {op: contains, value: 5}\n",
        "t.yml:4:30: `value` in assertion `a` of `tool_output_contains` in step 1 of `goals.sop` must be a string, got an integer",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions: {}\n",
        "t.yml:3:15: `assertions` in `tool_output_contains` in step 1 of `goals.sop` must hold at least one assertion",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions: [a]\n",
        "t.yml:3:15: `assertions` in `tool_output_contains` in step 1 of `goals.sop` must be a mapping, got a list",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n",
        "t.yml:1:3: `tool_output_contains` in step 1 of `goals.sop` is missing required field `assertions`",
    ),
    (
        "- type: tool_output_contains\n  toolSlug: x\n  assertions:\n    '': {op: exists}\n",
        "t.yml:4:5: an assertion path in `tool_output_contains` in step 1 of `goals.sop` must not be empty",
    ),
    # confirmation
    (
        "- type: confirmation_requested\n  beforeToolSlug: x\n  pattern: '[a-'\n",
        "t.yml:3:12: `pattern` in `confirmation_requested` in step 1 of `goals.sop` is not a valid regular expression: "
        "unterminated character set at position 3",
    ),
    (
        "- type: confirmation_requested\n  beforeToolSlug: x\n  pattern: ok\n  withinLastNTurns: 0\n",
        "t.yml:4:21: `withinLastNTurns` in `confirmation_requested` in step 1 of `goals.sop` must be an integer at least 1, got 0",
    ),
    (
        "- type: confirmation_requested\n  beforeToolSlug: x\n  pattern: ok\n  withinLastNTurns: 2.5\n",
        "t.yml:4:21: `withinLastNTurns` in `confirmation_requested` in step 1 of `goals.sop` must be an integer, got a number",
    ),
    (
        "- type: confirmation_requested\n  pattern: ok\n",
        "t.yml:1:3: `confirmation_requested` in step 1 of `goals.sop` is missing required field `beforeToolSlug`",
    ),
    # step fields
    (
        "- id: a\n  weight: heavy\n  evaluator: {type: tool_called, toolSlug: x}\n",
        "t.yml:2:11: `weight` in step 1 of `goals.sop` must be a number, got a string",
    ),
    (
        "- id: a\n  weight: -1\n  evaluator: {type: tool_called, toolSlug: x}\n",
        "t.yml:2:11: `weight` in step 1 of `goals.sop` must be a number at least 0, got -1",
    ),
    (
        "- id: a\n  weight: true\n  evaluator: {type: tool_called, toolSlug: x}\n",
        "t.yml:2:11: `weight` in step 1 of `goals.sop` must be a number, got a boolean",
    ),
    (
        "- id: a\n  weight: .inf\n  evaluator: {type: tool_called, toolSlug: x}\n",
        "t.yml:2:11: `weight` in step 1 of `goals.sop` must be a finite number, got inf",
    ),
    (
        "- id: a\n  required: 'yes'\n  evaluator: {type: tool_called, toolSlug: x}\n",
        "t.yml:2:13: `required` in step 1 of `goals.sop` must be true or false, got a string",
    ),
    ("- id: 3\n  evaluator: {type: tool_called, toolSlug: x}\n", "t.yml:1:7: `id` in step 1 of `goals.sop` must be a string, got an integer"),
    (
        "- id: a\n  labl: x\n  evaluator: {type: tool_called, toolSlug: x}\n",
        "t.yml:2:3: unknown field `labl` in step 1 of `goals.sop` (did you mean `label`?)",
    ),
    (
        "- id: a\n  evaluator: {type: tool_called, toolSlug: x}\n- id: a\n  evaluator: {type: tool_called, toolSlug: y}\n",
        "t.yml:3:7: duplicate step id `a` in `goals.sop`: step 1 at line 1 already uses it",
    ),
    (
        "- id: step-2\n  evaluator: {type: tool_called, toolSlug: x}\n- type: tool_called\n  toolSlug: y\n",
        "t.yml:3:3: duplicate step id `step-2` in `goals.sop`: step 1 at line 1 already uses it "
        "(step 2 has no `id`, so it gets `step-2` by position)",
    ),
]


@pytest.mark.parametrize(("text", "message"), STEP_ERRORS)
def test_step_load_errors(text, message):
    assert steps_error(text) == message


@pytest.mark.parametrize("broken", ["toolSlug: 3", "toolSlug: x, catalogSlug: 3"])
def test_a_step_whose_evaluator_does_not_load_is_not_compared_for_its_id(broken):
    """Whatever field of its evaluator is wrong: the step is not built, so it holds no id a later step could repeat."""
    text = f"- id: a\n  evaluator: {{type: tool_called, {broken}}}\n- id: a\n  evaluator: {{type: tool_called, toolSlug: y}}\n"
    assert "duplicate step id" not in steps_error(text)


def test_all_problems_of_a_list_are_reported_in_order():
    message = steps_error(
        """\
        - {type: tool_caled, toolSlug: a}
        - {type: tool_called}
        - id: w
          weight: lots
          evaluator: {type: confirmation_requested, beforeToolSlug: b, pattern: '('}
        """
    )
    assert message.splitlines() == [
        "t.yml:1:10: unknown evaluator type `tool_caled` (did you mean `tool_called`?)",
        "t.yml:2:3: `tool_called` in step 2 of `goals.sop` is missing required field `toolSlug`",
        "t.yml:4:11: `weight` in step 3 of `goals.sop` must be a number, got a string",
        "t.yml:5:73: `pattern` in `confirmation_requested` in the evaluator of step 3 of `goals.sop` is not a valid "
        "regular expression: missing ) at position 1",
    ]


# --- SOP files ---------------------------------------------------------------------


def test_load_sop_file(tmp_path):
    path = tmp_path / "returns.yml"
    path.write_text(
        textwrap.dedent(
            """\
            sop:
              id: returns
              name: Process a return
              threshold: 0.8
              steps:
                - {id: lookup, evaluator: {type: tool_called, toolSlug: get_order}}
                - {type: no_tool_called, toolSlugs: [refund]}
            """
        )
    )
    sop = load_sop(path)
    assert isinstance(sop, Sop)
    assert (sop.id, sop.name, sop.path) == ("returns", "Process a return", str(path))
    assert isinstance(sop.steps, StepSet)
    assert sop.steps.threshold == 0.8
    assert [s.id for s in sop.steps.steps] == ["lookup", "step-2"]


@pytest.mark.parametrize(
    ("text", "messages"),
    [
        (
            "sop:\n  id: x\n  name: X\n  threshold: 1.5\n  steps:\n    - {type: tool_called, toolSlug: a}\n",
            ["4:14: `threshold` in `sop` must be a number from 0 to 1, got 1.5"],
        ),
        (
            "sop:\n  id: x\n  name: X\n  threshold: -0.1\n  steps:\n    - {type: tool_called, toolSlug: a}\n",
            ["4:14: `threshold` in `sop` must be a number from 0 to 1, got -0.1"],
        ),
        (
            "sop:\n  id: x\n  name: X\n  threshold: high\n  steps:\n    - {type: tool_called, toolSlug: a}\n",
            ["4:14: `threshold` in `sop` must be a number, got a string"],
        ),
        (
            "sop:\n  description: x\n",
            [
                "2:3: unknown field `description` in `sop`",
                "2:3: `sop` is missing required field `id`",
                "2:3: `sop` is missing required field `name`",
                "2:3: `sop` is missing required field `steps`",
            ],
        ),
        (
            "steps: []\n",
            ["1:1: unknown field `steps` in the SOP file", "1:1: the SOP file is missing required field `sop`"],
        ),
        ("", ["1:1: an SOP file must be a mapping, got nothing"]),
        (
            "sop:\n  id: x\n  name: X\n  steps:\n    - {type: tool_called, toolSlug: a}\n    - {type: tool_callled, toolSlug: b}\n",
            ["6:14: unknown evaluator type `tool_callled` (did you mean `tool_called`?)"],
        ),
        (
            "sop:\n  id: x\n  name: X\n  steps:\n    - id: w\n      weight: -2\n      evaluator: {type: tool_called, toolSlug: a}\n",
            ["6:15: `weight` in step 1 of `sop.steps` must be a number at least 0, got -2"],
        ),
        (
            "sop:\n  id: x\n  name: X\n  steps:\n    - type: tool_input_contains\n      toolSlug: a\n"
            "      assertions: {a: {op: not_in, values: [x]}}\n",
            [
                "7:28: `op` in assertion `a` of `tool_input_contains` in step 1 of `sop.steps` must be one of "
                "exists, equals, matches, gt, lt, got 'not_in' (`not_in` is an op of `tool_output_contains`)"
            ],
        ),
    ],
)
def test_sop_file_errors_name_file_line_and_column(tmp_path, text, messages):
    path, message = sop_file_error(tmp_path, text)
    assert message.splitlines() == [f"{path}:{m}" for m in messages]


def test_sop_file_yaml_errors_carry_the_file(tmp_path):
    path, message = sop_file_error(tmp_path, "sop:\n  id: x\n  id: y\n")
    assert message == f"{path}:3:3: duplicate key `id` (first defined at line 2)"


# --- goals.sop in scenario files -------------------------------------------------------


def test_goals_sop_in_a_scenario(tmp_path):
    path = tmp_path / "s.yml"
    path.write_text(
        "scenario:\n  name: n\n  simulation_context: c\n  goals:\n    sop:\n"
        "      - {type: tool_called, toolSlug: lookup_card}\n"
        "      - {id: ask, required: false, evaluator: {type: llm_judge, criterion: polite}}\n"
    )
    sop = load_scenario(path).goals.sop
    assert isinstance(sop, StepSet)
    assert [(s.id, s.required, s.type) for s in sop.steps] == [("step-1", True, "tool_called"), ("ask", False, "llm_judge")]


def test_goals_sop_errors_in_a_scenario(tmp_path):
    path = tmp_path / "s.yml"
    path.write_text(
        "scenario:\n  name: n\n  simulation_context: c\n  goals:\n    sop:\n"
        "      - {type: tool_called, toolSlug: lookup_card}\n"
        "      - {type: tool_calld, toolSlug: x}\n"
    )
    with pytest.raises(LoadError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}:7:16: unknown evaluator type `tool_calld` (did you mean `tool_called`?)"


def test_a_number_too_large_for_a_float_is_a_load_error_not_an_overflow():
    text = f"- id: a\n  weight: 0x{'f' * 300}\n  evaluator: {{type: tool_called, toolSlug: x}}\n"
    assert steps_error(text) == "t.yml:2:11: `weight` in step 1 of `goals.sop` must be a number, got an integer too large for one"
