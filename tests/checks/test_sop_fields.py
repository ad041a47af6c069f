"""SOP `tool_input_contains` and `tool_output_contains`: paths, ops and type rules."""

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.sop_fields import (
    INPUT_OPS,
    OUTPUT_OPS,
    Equals,
    Exists,
    NotIn,
    ToolInputContains,
    ToolOutputContains,
    parse_result,
    resolve_path,
)
from tests.conftest import conv, tool, user
from tests.sop.conftest import evaluator

ORDER = {
    "order_id": "#W123",
    "amount": 5,
    "express": True,
    "note": None,
    "address": {"zip": "10115", "city": "Berlin"},
    "address.zip": "literal",
    "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}],
    "tags": ["gift", "fragile"],
}


# --- paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "found", "value"),
    [
        ("order_id", True, "#W123"),
        ("address.city", True, "Berlin"),
        ("address.zip", True, "literal"),  # the literal key wins over the dotted path
        ("items.0.sku", True, "A1"),
        ("items.1.qty", True, 1),
        ("items.2.sku", False, None),
        ("items.x", False, None),
        ("items.-1.sku", False, None),
        ("note", True, None),
        ("note.x", False, None),
        ("missing", False, None),
        ("address.street", False, None),
        ("order_id.0", False, None),  # strings are not indexed
        ("$", True, ORDER),
    ],
)
def test_resolve_path(path, found, value):
    assert resolve_path(ORDER, path) == (found, value)


def test_a_literal_dotted_key_inside_a_nested_object():
    assert resolve_path({"a": {"b.c": 1}}, "a.b.c") == (True, 1)
    assert resolve_path({"a.b": {"c": 2}}, "a.b.c") == (True, 2)
    assert resolve_path([[1, 2], [3]], "0.1") == (True, 2)


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ('{"status": "ok"}', {"status": "ok"}),
        (' [1, 2]', [1, 2]),
        ("ok", "ok"),
        ("5", "5"),  # a JSON scalar in a string stays a string
        ('"quoted"', '"quoted"'),
        ("{not json", "{not json"),
        ({"a": 1}, {"a": 1}),
        (None, None),
    ],
)
def test_parse_result(raw, parsed):
    assert parse_result(raw) == parsed


# --- ops on the input ----------------------------------------------------------


def input_check(path, op, **kw):
    return ToolInputContains("get_order", assertions=(INPUT_OPS[op](path, **kw),))


def check_input(path, op, arguments=ORDER, **kw):
    return input_check(path, op, **kw).evaluate(conv(user("hi"), tool("get_order", arguments)))


@pytest.mark.parametrize(
    ("path", "op", "kw", "passed"),
    [
        ("order_id", "exists", {}, True),
        ("note", "exists", {}, True),  # present even though null
        ("missing", "exists", {}, False),
        ("items.0.sku", "exists", {}, True),
        ("amount", "equals", {"value": 5}, True),
        ("amount", "equals", {"value": 5.0}, True),
        ("amount", "equals", {"value": "5"}, False),  # "5" is not 5
        ("express", "equals", {"value": True}, True),
        ("express", "equals", {"value": 1}, False),  # true is not 1
        ("note", "equals", {"value": "null"}, False),
        ("missing", "equals", {"value": "x"}, False),
        ("address.city", "equals", {"value": "Berlin"}, True),
        ("order_id", "matches", {"pattern": r"^#W\d+$"}, True),
        ("order_id", "matches", {"pattern": r"^\d+$"}, False),
        ("amount", "matches", {"pattern": "5"}, False),  # non-string
        ("note", "matches", {"pattern": ".*"}, False),
        ("missing", "matches", {"pattern": ".*"}, False),
        ("amount", "gt", {"value": 4}, True),
        ("amount", "gt", {"value": 5}, False),
        ("amount", "lt", {"value": 5.5}, True),
        ("amount", "lt", {"value": 5}, False),
        ("express", "gt", {"value": 0}, False),  # a boolean is not a number
        ("express", "lt", {"value": 2}, False),
        ("order_id", "gt", {"value": 0}, False),
        ("missing", "lt", {"value": 10}, False),
        ("items.0.qty", "gt", {"value": 1}, True),
    ],
)
def test_input_ops(path, op, kw, passed):
    result = check_input(path, op, **kw)
    assert result.outcome is (Outcome.PASS if passed else Outcome.FAIL)


def test_matches_failure_names_the_call_field_and_value():
    result = check_input("order_id", "matches", {"order_id": "123"}, pattern=r"^#W\d+$")
    assert result.detail == (
        "no call of `get_order` satisfied every assertion (1 call looked at): "
        "get_order at event 1 (turn 1): order_id was '123', expected to match /^#W\\d+$/"
    )
    assert result.evidence == (1,)


@pytest.mark.parametrize(
    ("path", "op", "kw", "message"),
    [
        ("missing", "exists", {}, "missing was missing, expected it to be present"),
        ("amount", "equals", {"value": "5"}, "amount was 5, expected '5'"),
        ("express", "gt", {"value": 0}, "express was true (not a number), expected a number greater than 0"),
        ("amount", "lt", {"value": 2}, "amount was 5, expected a number less than 2"),
        ("amount", "matches", {"pattern": "5"}, "amount was 5 (not a string), expected to match /5/"),
        ("address.zip.x", "exists", {}, "address.zip.x was missing, expected it to be present"),
    ],
)
def test_input_failure_messages(path, op, kw, message):
    assert check_input(path, op, **kw).detail.endswith(f"get_order at event 1 (turn 1): {message}")


def test_pass_detail_lists_the_assertions_that_held():
    check = evaluator(
        """
        type: tool_input_contains
        toolSlug: get_order
        assertions:
          order_id: {op: matches, pattern: '^#W'}
          amount: {op: gt, value: 1}
        """
    )
    result = check.evaluate(conv(user("hi"), tool("get_order", {"order_id": "x"}), tool("get_order", ORDER)))
    assert result.outcome is Outcome.PASS
    assert result.detail == "get_order at event 2 (turn 1): order_id matches /^#W/, amount gt 1"
    assert result.evidence == (2,)


def test_one_call_must_satisfy_every_assertion():
    check = ToolInputContains("get_order", assertions=(Equals("a", 1), Equals("b", 2)))
    c = conv(user("hi"), tool("get_order", {"a": 1, "b": 0}), tool("get_order", {"a": 0, "b": 2}))
    result = check.evaluate(c)
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "no call of `get_order` satisfied every assertion (2 calls looked at): "
        "get_order at event 1 (turn 1): b was 0, expected 2; get_order at event 2 (turn 1): a was 0, expected 1"
    )
    assert result.evidence == (1, 2)


def test_a_tool_never_called_fails_saying_so():
    result = input_check("order_id", "exists").evaluate(conv(user("hi"), tool("other"), tool("activate")))
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "`get_order` was never called, so its arguments cannot be checked; tool log (1 call): other at event 1 (turn 1)"
    )


def test_whole_arguments():
    assert check_input("$", "exists").passed
    assert check_input("$", "equals", {"a": 1}, value=1).outcome is Outcome.FAIL


def test_input_with_catalog():
    check = ToolInputContains("get_order", "shop", assertions=(Equals("id", 1),))
    c = conv(user("hi"), tool("get_order", {"id": 1}, source="mcp", mcp_server="other"), tool("shop_get_order", {"id": 1}))
    result = check.evaluate(c)
    assert result.passed
    assert result.detail == "shop_get_order at event 2 (turn 1): id equals 1"


# --- ops on the output -----------------------------------------------------------


def check_output(path, op, result, **kw):
    check = ToolOutputContains("get_order", assertions=(OUTPUT_OPS[op](path, **kw),))
    return check.evaluate(conv(user("hi"), tool("get_order", result=result)))


@pytest.mark.parametrize(
    ("result", "path", "op", "kw", "passed"),
    [
        ({"status": "pending"}, "status", "exists", {}, True),
        ({"status": None}, "status", "exists", {}, True),
        ({"status": "x"}, "state", "exists", {}, False),
        (None, "status", "exists", {}, False),  # no result at all
        (None, "$", "exists", {}, True),
        ('{"status": "pending"}', "status", "equals", {"value": "pending"}, True),  # JSON string parsed on read
        ('{"order": {"items": [{"sku": "A1"}]}}', "order.items.0.sku", "equals", {"value": "A1"}, True),
        ('[{"id": 7}]', "0.id", "equals", {"value": 7}, True),
        ({"count": 5}, "count", "equals", {"value": "5"}, False),
        ({"ok": True}, "ok", "equals", {"value": True}, True),
        ({"ok": 1}, "ok", "equals", {"value": True}, False),
        ("Order shipped on Monday", "$", "contains", {"value": "shipped"}, True),
        ("Order shipped on Monday", "$", "contains", {"value": "pending"}, False),
        ("Order shipped", "status", "exists", {}, False),  # a plain-text result has no fields
        ("5", "$", "equals", {"value": "5"}, True),  # stays a string
        ("5", "$", "equals", {"value": 5}, False),
        ({"tags": ["gift", "fragile"]}, "tags", "contains", {"value": "gift"}, True),
        ({"tags": ["gift card"]}, "tags", "contains", {"value": "gift"}, False),  # an element, not a substring
        ({"note": "see gift"}, "note", "contains", {"value": "gift"}, True),
        ({"count": 5}, "count", "contains", {"value": "5"}, False),  # neither string nor list
        ({"note": None}, "note", "contains", {"value": "x"}, False),
        ({"status": "pending"}, "status", "not_in", {"values": ("shipped", "delivered")}, True),
        ({"status": "shipped"}, "status", "not_in", {"values": ("shipped", "delivered")}, False),
        ({"status": None}, "status", "not_in", {"values": ("shipped",)}, True),  # present and not listed
        ({}, "status", "not_in", {"values": ("shipped",)}, False),  # missing fails every op
        ({"status": 5}, "status", "not_in", {"values": ("5",)}, True),
    ],
)
def test_output_ops(result, path, op, kw, passed):
    assert check_output(path, op, result, **kw).outcome is (Outcome.PASS if passed else Outcome.FAIL)


@pytest.mark.parametrize(
    ("result", "path", "op", "kw", "message"),
    [
        ({"status": "shipped"}, "status", "not_in", {"values": ("shipped", "delivered")}, "status was 'shipped', expected none of 'shipped', 'delivered'"),
        ({"n": 5}, "n", "contains", {"value": "5"}, "n was 5 (neither a string nor a list), expected to contain '5'"),
        ("Card blocked", "$", "contains", {"value": "ok"}, "the whole result was 'Card blocked', expected to contain 'ok'"),
        ({}, "status", "not_in", {"values": ("x",)}, "status was missing, expected none of 'x'"),
    ],
)
def test_output_failure_messages(result, path, op, kw, message):
    assert check_output(path, op, result, **kw).detail.endswith(f"get_order at event 1 (turn 1): {message}")


def test_output_never_called():
    check = ToolOutputContains("get_order", assertions=(Exists("status"),))
    result = check.evaluate(conv(user("hi")))
    assert result.detail == (
        "`get_order` was never called, so its result cannot be checked; the tool log is empty (no counted tool calls)"
    )


def test_output_of_a_failed_run_is_still_read():
    check = ToolOutputContains("get_order", assertions=(Equals("error", "not found"),))
    assert check.evaluate(conv(user("hi"), tool("get_order", result={"error": "not found"}, is_error=True))).passed


def test_output_from_yaml():
    check = evaluator(
        """
        type: tool_output_contains
        toolSlug: get_order
        catalogSlug: shop
        assertions:
          status: {op: not_in, values: [shipped, delivered]}
          $: {op: exists}
        """
    )
    assert check == ToolOutputContains("get_order", "shop", assertions=(NotIn("status", ("shipped", "delivered")), Exists("$")))
