"""A check's class is its schema: one class is all a new check needs, and the one loader reads it.

The check below exists only here. Its fields, their file names and bounds are declared once, on the class;
registering it is adding it to a `key -> class` mapping, and the loader that reads every scenario assertion
and SOP evaluator builds it and words every problem with its position.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest

from dialogcheck._fields import Problems
from dialogcheck._yaml import parse_yaml
from dialogcheck.checks import ASSERTIONS, SOP_EVALUATORS
from dialogcheck.checks.base import Check, CheckResult, framework_tools_field
from dialogcheck.checks.load import Context, read_tagged
from dialogcheck.checks.schema import file_keys, schema, spec
from dialogcheck.checks.sop_fields import INPUT_OPS, OUTPUT_OPS, FieldAssertion, GreaterThan, Matches, NotIn
from dialogcheck.errors import LoadError
from dialogcheck.events.model import FRAMEWORK_TOOLS, Conversation
from tests.conftest import conv, tool, user
from tests.sop.conftest import evaluator


@dataclass(frozen=True)
class ToolRanAtMost(Check):
    """A check that is not dialogcheck's: a tool ran at most `limit` times."""

    key = "tool_ran_at_most"

    tool_slug: str = spec(name="toolSlug", tool_slug=True)
    limit: int = spec(minimum=0, maximum=10)
    mode: str = spec("counted", choices=("counted", "all"))
    note: str | None = spec(None, regex=True)
    framework_tools: frozenset[str] = framework_tools_field()

    def evaluate(self, conversation: Conversation) -> CheckResult:
        runs = conversation.tool_log(self.framework_tools) if self.mode == "counted" else conversation.tool_runs
        count = sum(run.tool_name == self.tool_slug for run in runs)
        return self.result(count <= self.limit, f"{self.tool_slug} ran {count} times")


REGISTRY = {ToolRanAtMost.key: ToolRanAtMost}


def load(text: str, framework_tools: frozenset[str] = FRAMEWORK_TOOLS):
    problems = Problems()
    node = parse_yaml(textwrap.dedent(text), "t.yml")
    check = read_tagged(node, problems, "assertion 1", REGISTRY, "unknown assertion `{key}`{hint}", Context(framework_tools=framework_tools))
    if problems:
        raise LoadError(problems.items).in_file("t.yml")
    return check


def error(text: str) -> str:
    with pytest.raises(LoadError) as info:
        load(text)
    return str(info.value)


def test_a_new_check_is_one_class_and_the_loader_builds_it():
    check = load("tool_ran_at_most: {toolSlug: refund, limit: 1}")
    assert check == ToolRanAtMost("refund", 1)
    assert check.mode == "counted" and check.note is None
    assert check.evaluate(conv(user("hi"), tool("refund"))).passed
    assert not check.evaluate(conv(user("hi"), tool("refund"), tool("refund"))).passed


def test_the_file_names_are_the_fields_with_their_spec_names():
    assert file_keys(ToolRanAtMost) == ("toolSlug", "limit", "mode", "note")
    assert [field.required for field in schema(ToolRanAtMost)] == [True, True, False, False, False]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tool_ran_at_most: {limit: 1}", "t.yml:1:19: `tool_ran_at_most` is missing required field `toolSlug`"),
        ("tool_ran_at_most: {toolSlug: refund, limit: 11}", "t.yml:1:45: `limit` in `tool_ran_at_most` must be an integer from 0 to 10, got 11"),
        ("tool_ran_at_most: {toolSlug: refund, limit: x}", "t.yml:1:45: `limit` in `tool_ran_at_most` must be an integer, got a string"),
        (
            "tool_ran_at_most: {toolSlug: refund, limit: 1, mode: every}",
            "t.yml:1:54: `mode` in `tool_ran_at_most` must be one of counted, all, got 'every'",
        ),
        (
            "tool_ran_at_most: {toolSlug: refund, limit: 1, note: '('}",
            "t.yml:1:54: `note` in `tool_ran_at_most` is not a valid regular expression: missing ) at position 1",
        ),
        (
            "tool_ran_at_most: {toolSlug: hangup, limit: 1}",
            "t.yml:1:30: `toolSlug` in `tool_ran_at_most` names the framework tool `hangup`: the tool log leaves framework tools"
            " out, so it could never match (an agent that owns a tool of this name sets `framework_tools`)",
        ),
        (
            "tool_ran_at_most: {tool_slug: refund, limit: 1}",
            "t.yml:1:20: unknown field `tool_slug` in `tool_ran_at_most` (did you mean `toolSlug`?)\n"
            "t.yml:1:19: `tool_ran_at_most` is missing required field `toolSlug`",
        ),
        ("tool_ran_at_mots: {}", "t.yml:1:1: unknown assertion `tool_ran_at_mots` (did you mean `tool_ran_at_most`?)"),
    ],
)
def test_its_problems_are_worded_from_its_spec(text, message):
    assert error(text) == message


def test_the_framework_tools_setting_reaches_the_check_from_its_definition():
    assert load("tool_ran_at_most: {toolSlug: refund, limit: 1}").framework_tools == FRAMEWORK_TOOLS
    check = load("tool_ran_at_most: {toolSlug: hangup, limit: 0}", frozenset({"listen"}))
    assert check.framework_tools == frozenset({"listen"})
    assert not check.evaluate(conv(user("hi"), tool("hangup"))).passed  # hangup is counted for this agent


def test_every_registered_check_is_read_by_its_class_alone():
    """Every key of both registries is a class whose schema the loader reads: no parser of its own anywhere."""
    for registry in (ASSERTIONS, SOP_EVALUATORS):
        for key, cls in registry.items():
            assert cls.key == key
            assert schema(cls), key


# --- ops of the field evaluators are values -------------------------------------------------------------


def test_field_assertions_are_built_as_op_objects_at_load_time():
    check = evaluator(
        """
        type: tool_input_contains
        toolSlug: get_order
        assertions:
          order_id: {op: matches, pattern: '^#W'}
          qty: {op: gt, value: 1}
        """
    )
    assert check.assertions == (Matches("order_id", "^#W"), GreaterThan("qty", 1))
    qty = check.assertions[1]
    assert qty.holds(2) and not qty.holds(1) and not qty.holds(True) and not qty.holds("2")
    assert qty.failure({"qty": "2"}, "arguments") == "qty was '2' (not a number), expected a number greater than 1"


def test_each_evaluator_takes_its_own_ops():
    assert list(INPUT_OPS) == ["exists", "equals", "matches", "gt", "lt"]
    assert list(OUTPUT_OPS) == ["exists", "equals", "contains", "not_in"]
    assert all(issubclass(op, FieldAssertion) and op.op == name for name, op in {**INPUT_OPS, **OUTPUT_OPS}.items())
    assert NotIn("status", ("a", "b")).described == "status not_in ['a', 'b']"
