"""SOP `tool_called`, `tool_sequence`, `no_tool_called` and catalog name resolution."""

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.sop_tools import NoToolCalled, ToolCalled, ToolSequence, resolves
from dialogcheck.events.parse import conversation_from_dicts
from tests.conftest import bot, conv, tool, user
from tests.sop.conftest import evaluator


def mcp(name, server, **extra):
    return tool(name, source="mcp", mcp_server=server, **extra)


def run_of(event):
    return conversation_from_dicts([event]).tool_runs[0]


# --- name resolution -------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "slug", "catalog", "expected"),
    [
        (tool("get_order"), "get_order", None, True),
        (tool("get_orders"), "get_order", None, False),
        (tool("shop_get_order"), "get_order", None, False),  # without a catalog the name must be exact
        (mcp("get_order", "shop"), "get_order", None, True),
        (mcp("get_order", "shop"), "get_order", "shop", True),
        (mcp("get_order", "other"), "get_order", "shop", False),
        (tool("get_order", metadata={"catalog": "shop"}), "get_order", "shop", True),
        (tool("get_order", metadata={"catalog": "other"}), "get_order", "shop", False),
        (tool("get_order"), "get_order", "shop", False),  # no connector: the bare name says nothing of the catalog
        (tool("shop_get_order"), "get_order", "shop", True),
        (tool("shop.get_order"), "get_order", "shop", True),
        (mcp("shop_get_order", "shop"), "get_order", "shop", True),
        (mcp("shop_get_order", "other"), "get_order", "shop", False),  # prefixed name from another connector
        (tool("shop.get_order", metadata={"catalog": "other"}), "get_order", "shop", False),
        (tool("shop-get_order"), "get_order", "shop", False),
    ],
)
def test_name_resolution(event, slug, catalog, expected):
    assert resolves(run_of(event), slug, catalog) is expected


def test_mcp_server_wins_over_metadata_catalog():
    event = mcp("get_order", "shop", metadata={"catalog": "other"})
    assert resolves(run_of(event), "get_order", "shop")
    assert not resolves(run_of(event), "get_order", "other")


def test_a_failed_run_counts_as_a_call():
    result = ToolCalled("get_order").evaluate(conv(user("hi"), tool("get_order", is_error=True)))
    assert result.outcome is Outcome.PASS


# --- tool_called -------------------------------------------------------------


def test_tool_called_passes_and_names_the_call():
    c = conv(user("hi"), tool("lookup_card"), user("ok"), tool("lookup_card"))
    result = ToolCalled("lookup_card").evaluate(c)
    assert result.outcome is Outcome.PASS
    assert result.detail == (
        "`lookup_card` called at event 1 (turn 1) (2 calls: lookup_card at event 1 (turn 1), lookup_card at event 3 (turn 2))"
    )
    assert result.evidence == (1, 3)


def test_tool_called_never_called_lists_the_tool_log():
    c = conv(user("hi"), tool("activate"), tool("check_balance"), mcp("submit_transfer", "banking"))
    result = ToolCalled("lookup_card").evaluate(c)
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "`lookup_card` was never called; tool log (2 calls): check_balance at event 2 (turn 1), "
        "submit_transfer [banking] at event 3 (turn 1)"
    )


def test_tool_called_on_an_empty_log():
    result = ToolCalled("lookup_card").evaluate(conv(user("hi"), bot("hello")))
    assert result.detail == "`lookup_card` was never called; the tool log is empty (no counted tool calls)"


def test_framework_tools_are_not_in_the_tool_log():
    c = conv(user("hi"), tool("activate"), tool("complete_skill"), tool("hangup"))
    assert ToolCalled("hangup").evaluate(c).outcome is Outcome.FAIL
    assert NoToolCalled(("hangup",)).evaluate(c).outcome is Outcome.PASS


def test_tool_called_with_catalog():
    c = conv(user("hi"), mcp("submit_transfer", "payments"), tool("banking_submit_transfer"))
    check = evaluator("{type: tool_called, toolSlug: submit_transfer, catalogSlug: banking}")
    assert check == ToolCalled("submit_transfer", "banking")
    result = check.evaluate(c)
    assert result.outcome is Outcome.PASS
    assert result.detail == "`submit_transfer` (catalog `banking`) called at event 2 (turn 1)"
    assert ToolCalled("submit_transfer", "banking").evaluate(conv(mcp("submit_transfer", "payments"))).outcome is Outcome.FAIL


# --- tool_sequence -----------------------------------------------------------


LOG = (user("hi"), tool("get_order"), tool("check_balance"), tool("activate"), tool("set_delivery_address"))


def test_gapped_sequence_allows_calls_between():
    result = ToolSequence(("get_order", "set_delivery_address"), contiguous=False).evaluate(conv(*LOG))
    assert result.outcome is Outcome.PASS
    assert result.detail == "in order: get_order at event 1 (turn 1), set_delivery_address at event 4 (turn 1)"
    assert result.evidence == (1, 4)


def test_gapped_sequence_fails_out_of_order():
    c = conv(user("hi"), tool("set_delivery_address"), tool("get_order"))
    result = ToolSequence(("get_order", "set_delivery_address"), contiguous=False).evaluate(c)
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "matched get_order at event 2 (turn 1); no call of `set_delivery_address` after get_order at event 2 (turn 1); "
        "tool log (2 calls): set_delivery_address at event 1 (turn 1), get_order at event 2 (turn 1)"
    )


def test_gapped_sequence_first_element_missing():
    result = ToolSequence(("get_order",), contiguous=False).evaluate(conv(user("hi")))
    assert result.detail == "no call of `get_order`; the tool log is empty (no counted tool calls)"


def test_contiguous_sequence_ignores_framework_tools_between():
    c = conv(user("hi"), tool("get_order"), tool("activate"), tool("set_delivery_address"))
    result = ToolSequence(("get_order", "set_delivery_address"), contiguous=True).evaluate(c)
    assert result.outcome is Outcome.PASS
    assert result.detail == "consecutive: get_order at event 1 (turn 1), set_delivery_address at event 3 (turn 1)"


def test_contiguous_sequence_fails_with_a_counted_call_between():
    result = ToolSequence(("get_order", "set_delivery_address"), contiguous=True).evaluate(conv(*LOG))
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "longest consecutive run: get_order at event 1 (turn 1), then check_balance at event 2 (turn 1) "
        "instead of `set_delivery_address`; tool log (3 calls): get_order at event 1 (turn 1), "
        "check_balance at event 2 (turn 1), set_delivery_address at event 4 (turn 1)"
    )
    assert result.evidence == (1,)


def test_contiguous_sequence_somewhere_in_the_log():
    c = conv(user("hi"), tool("a"), tool("b"), tool("a"), tool("c"), tool("d"))
    assert ToolSequence(("a", "c", "d"), contiguous=True).evaluate(c).outcome is Outcome.PASS
    assert ToolSequence(("a", "c", "d"), contiguous=False).evaluate(c).outcome is Outcome.PASS


def test_contiguous_sequence_log_ends_early():
    c = conv(user("hi"), tool("x"), tool("get_order"))
    result = ToolSequence(("get_order", "set_delivery_address"), contiguous=True).evaluate(c)
    assert "then the log ended before `set_delivery_address`" in result.detail


def test_contiguous_sequence_no_first_element():
    result = ToolSequence(("get_order", "x"), contiguous=True).evaluate(conv(user("hi"), tool("y")))
    assert result.detail == "no call of `get_order`; tool log (1 call): y at event 1 (turn 1)"


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("lookup", ["get_order", "look_up_order"])
def test_alternatives_in_both_kinds_of_sequence(contiguous, lookup):
    c = conv(user("hi"), tool(lookup), tool("set_delivery_address"))
    check = ToolSequence(("get_order|look_up_order", "set_delivery_address"), contiguous)
    assert check.evaluate(c).outcome is Outcome.PASS
    assert ToolSequence(("get_order|find", "set_delivery_address"), contiguous).evaluate(c).passed is (lookup == "get_order")


def test_alternatives_in_a_gapped_sequence_explain_the_missing_element():
    c = conv(user("hi"), tool("get_order"), tool("other"))
    result = ToolSequence(("get_order", "set_address|set_delivery_address"), contiguous=False).evaluate(c)
    assert "no call of `set_address|set_delivery_address` after get_order at event 1 (turn 1)" in result.detail


def test_sequence_with_catalog_and_mixed_connectors():
    c = conv(user("hi"), mcp("get_order", "shop"), mcp("log", "audit"), tool("shop.set_delivery_address"))
    assert ToolSequence(("get_order", "set_delivery_address"), False, "shop").evaluate(c).passed
    # contiguous is about the whole log, whatever connector a call came from
    assert not ToolSequence(("get_order", "set_delivery_address"), True, "shop").evaluate(c).passed


def test_sequence_from_yaml():
    check = evaluator("{type: tool_sequence, sequence: [get_order, 'set_a | set_b'], contiguous: true}")
    assert check == ToolSequence(("get_order", "set_a | set_b"), True)
    assert check.evaluate(conv(user("hi"), tool("get_order"), tool("set_b"))).passed


# --- no_tool_called ----------------------------------------------------------


def test_no_tool_called_passes():
    result = NoToolCalled(("complete_cart", "refund")).evaluate(conv(user("hi"), tool("get_order")))
    assert result.outcome is Outcome.PASS
    assert result.detail == "none of `complete_cart`, `refund` was called (1 call in the tool log)"


def test_no_tool_called_fails_naming_every_forbidden_call():
    c = conv(user("hi"), tool("refund"), tool("get_order"), user("again"), tool("refund", is_error=True))
    result = NoToolCalled(("complete_cart", "refund")).evaluate(c)
    assert result.outcome is Outcome.FAIL
    assert result.detail == "forbidden tool called: refund at event 1 (turn 1), refund at event 4 (turn 2)"
    assert result.evidence == (1, 4)


def test_no_tool_called_with_catalog_only_forbids_that_connector():
    check = NoToolCalled(("submit_transfer",), "banking")
    assert check.evaluate(conv(user("hi"), mcp("submit_transfer", "sandbox"))).passed
    assert check.evaluate(conv(user("hi"), mcp("banking_submit_transfer", "sandbox"))).passed
    result = check.evaluate(conv(user("hi"), mcp("submit_transfer", "banking")))
    assert result.detail == "forbidden tool called: submit_transfer [banking] at event 1 (turn 1)"
