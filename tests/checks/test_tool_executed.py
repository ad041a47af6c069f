"""`tool_executed`: every field, the mcp_server rules, `times`, and closest-miss explanations."""

import pytest

from tests.conftest import assertion_error, check_from_yaml, conv, tool, user

SEED_LOCAL = """
- tool_executed:
    tool_name: order_replacement
    source: local
    skill_id: card_replace
    arguments:
      shipping: standard
"""
SEED_MCP = """
- tool_executed:
    tool_name: submit_transfer
    source: mcp
    mcp_server: banking
"""


def order(shipping="standard", **extra):
    return tool("order_replacement", {"card_id": "c1", "shipping": shipping}, metadata={"skill_id": "card_replace"}, **extra)


def test_seed_local_example_passes():
    result = check_from_yaml(SEED_LOCAL).evaluate(conv(user("hi"), order()))
    assert result.passed
    assert result.detail == "matched tool_executed order_replacement (local) at event 1 (turn 1)"


def test_seed_local_example_fails_on_argument_with_the_issue_wording():
    result = check_from_yaml(SEED_LOCAL).evaluate(conv(user("hi"), user("go"), order("express")))
    assert not result.passed
    assert result.detail == (
        "1 tool_executed event recorded, none matched; closest: tool_executed order_replacement (local) "
        "at event 2 (turn 2) but arguments.shipping was 'express', expected 'standard'"
    )
    assert result.evidence == (2,)


def test_unlisted_arguments_are_ignored_and_missing_ones_fail():
    check = check_from_yaml(SEED_LOCAL)
    assert check.evaluate(conv(order(extra_field=1))).passed
    result = check.evaluate(conv(tool("order_replacement", {"card_id": "c1"}, skill_id="card_replace")))
    assert "arguments.shipping was missing, expected 'standard'" in result.detail


def test_skill_id_shorthand_and_metadata_both_read():
    check = check_from_yaml(SEED_LOCAL)
    assert check.evaluate(conv(tool("order_replacement", {"shipping": "standard"}, skill_id="card_replace"))).passed
    result = check.evaluate(conv(tool("order_replacement", {"shipping": "standard"})))
    assert "skill_id was null, expected 'card_replace'" in result.detail


def test_skill_id_omitted_matches_runs_of_any_skill_or_none():
    check = check_from_yaml("tool_executed: {tool_name: t, source: local}")
    assert check.evaluate(conv(tool("t"))).passed
    assert check.evaluate(conv(tool("t", skill_id="x"))).passed


def test_seed_mcp_example():
    check = check_from_yaml(SEED_MCP)
    assert check.evaluate(conv(tool("submit_transfer", source="mcp", mcp_server="banking"))).passed
    result = check.evaluate(conv(tool("submit_transfer", source="mcp", mcp_server="payments")))
    assert "mcp_server was 'payments', expected 'banking'" in result.detail


def test_local_run_does_not_match_mcp_check_of_same_name():
    result = check_from_yaml(SEED_MCP).evaluate(conv(tool("submit_transfer", source="local")))
    assert not result.passed
    assert "source was 'local', expected 'mcp'" in result.detail


def test_mcp_server_not_inferred_from_name():
    check = check_from_yaml(SEED_MCP)
    assert not check.evaluate(conv(tool("banking_submit_transfer", source="mcp"))).passed


@pytest.mark.parametrize("is_error, recorded, passes", [("true", True, True), ("true", False, False), ("false", False, True), ("false", True, False)])
def test_is_error(is_error, recorded, passes):
    check = check_from_yaml(f"tool_executed: {{tool_name: t, source: local, is_error: {is_error}}}")
    assert check.evaluate(conv(tool("t", is_error=recorded))).passed is passes


def test_is_error_omitted_matches_both():
    check = check_from_yaml("tool_executed: {tool_name: t, source: local}")
    assert check.evaluate(conv(tool("t", is_error=True))).passed


def test_arguments_compare_json_typed():
    check = check_from_yaml("tool_executed: {tool_name: t, source: local, arguments: {amount: 5, express: true}}")
    assert check.evaluate(conv(tool("t", {"amount": 5.0, "express": True}))).passed
    result = check.evaluate(conv(tool("t", {"amount": "5", "express": True})))
    assert "arguments.amount was '5', expected 5" in result.detail
    assert not check.evaluate(conv(tool("t", {"amount": 5, "express": 1}))).passed


def test_framework_tools_are_seen_by_plain_tool_executed():
    check = check_from_yaml("tool_executed: {tool_name: complete_skill, source: local}")
    assert check.evaluate(conv(tool("complete_skill"))).passed


def test_closest_miss_prefers_same_tool_name():
    run = conv(tool("lookup_card", {"shipping": "standard"}), order("express"))
    result = check_from_yaml(SEED_LOCAL).evaluate(run)
    assert "closest: tool_executed order_replacement (local) at event 1" in result.detail


def test_no_tool_runs_at_all():
    assert check_from_yaml(SEED_LOCAL).evaluate(conv(user("hi"))).detail == "no tool_executed event was recorded"


def test_times_exact_counts():
    check = check_from_yaml("tool_executed: {tool_name: order_replacement, source: local, times: 1}")
    assert check.evaluate(conv(order())).passed
    result = check.evaluate(conv(order(), user("again"), order()))
    assert not result.passed
    assert result.detail == "ran 2 times, expected exactly 1: event 0 (turn 0), event 2 (turn 1)"
    assert result.evidence == (0, 2)
    zero = check.evaluate(conv(user("hi")))
    assert not zero.passed and zero.detail.startswith("ran 0 times, expected exactly 1: no tool_executed event")


def test_times_zero_says_tool_never_ran():
    check = check_from_yaml("tool_executed: {tool_name: order_replacement, source: local, times: 0}")
    assert check.evaluate(conv(tool("lookup_card"))).passed
    assert not check.evaluate(conv(order())).passed


def test_times_counts_only_matching_runs():
    check = check_from_yaml(
        "tool_executed: {tool_name: order_replacement, source: local, arguments: {shipping: express}, times: 0}"
    )
    assert check.evaluate(conv(order("standard"))).passed


@pytest.mark.parametrize(
    "body, message",
    [
        ("{tool_name: t}", "t.yml:1:18: `tool_executed` is missing required field `source`"),
        ("{source: local}", "t.yml:1:18: `tool_executed` is missing required field `tool_name`"),
        (
            "{tool_name: t, source: remote}",
            "t.yml:1:41: `source` in `tool_executed` must be one of local, mcp, got 'remote'",
        ),
        (
            "{tool_name: t, source: mcp}",
            "t.yml:1:18: `tool_executed` with `source: mcp` needs `mcp_server` (it is not inferred from the tool name)",
        ),
        (
            "{tool_name: t, source: local, mcp_server: banking}",
            "t.yml:1:48: `tool_executed` with `source: local` must not set `mcp_server`",
        ),
        ("{tool_name: t, source: local, times: -1}", "t.yml:1:55: `times` in `tool_executed` must be an integer at least 0, got -1"),
        ("{tool_name: t, source: local, times: 1.5}", "t.yml:1:55: `times` in `tool_executed` must be an integer, got a number"),
        ("{tool_name: t, source: local, is_error: yes}", "t.yml:1:58: `is_error` in `tool_executed` must be true or false, got a string"),
        ("{tool_name: t, source: local, arguments: [a]}", "t.yml:1:59: `arguments` in `tool_executed` must be a mapping, got a list"),
        ("{tool_name: t, source: local, argument: {}}", "t.yml:1:48: unknown field `argument` in `tool_executed` (did you mean `arguments`?)"),
    ],
)
def test_load_errors(body, message):
    assert assertion_error(f"- tool_executed: {body}\n") == message
