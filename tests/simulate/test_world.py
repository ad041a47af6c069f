"""Putting the environment's calls into a conversation: paired with the agent's reports, the rest before the turn's reply."""

from dialogcheck.events.parse import conversation_from_dicts
from dialogcheck.simulate.world import merge_calls

TOOLS = {"get_order", "cancel_order"}


def call(tool, order="O1"):
    return {"event": "tool_executed", "tool_name": tool, "source": "local", "arguments": {"order_id": order},
            "result": {"status": "placed"}, "is_error": False, "metadata": {"environment": True}}


def report(tool):
    return {"event": "tool_executed", "tool_name": tool, "source": "local", "arguments": {}, "result": "as the agent says"}


def merged(recorded, calls):
    conversation = conversation_from_dicts(recorded)
    return merge_calls(conversation.events, conversation.raw_events, calls, TOOLS)


def shape(result):
    return [(e.type, getattr(e, "tool_name", None), e.turn, e.index) for e in result.events]


def test_calls_of_an_agent_that_reports_nothing_go_before_the_reply_of_their_turn():
    recorded = [{"event": "bot", "text": "hi"}, {"event": "user", "text": "a"}, {"event": "bot", "text": "b"}, {"event": "user", "text": "c"}, {"event": "bot", "text": "d"}]
    result = merged(recorded, [(1, call("get_order")), (2, call("cancel_order")), (2, call("get_order", "O2"))])

    assert shape(result) == [
        ("bot", None, 0, 0), ("user", None, 1, 1), ("tool_executed", "get_order", 1, 2), ("bot", None, 1, 3),
        ("user", None, 2, 4), ("tool_executed", "cancel_order", 2, 5), ("tool_executed", "get_order", 2, 6), ("bot", None, 2, 7),
    ]
    assert result.unanswered == () and result.unreported == ()  # it reports no calls: nothing is missing from its log


def test_a_report_after_a_message_of_its_turn_is_still_paired_with_the_call():
    recorded = [{"event": "user", "text": "a"}, {"event": "bot", "text": "let me look"}, report("get_order"), {"event": "bot", "text": "placed"}]
    result = merged(recorded, [(1, call("get_order"))])

    assert shape(result) == [("user", None, 1, 0), ("bot", None, 1, 1), ("tool_executed", "get_order", 1, 2), ("bot", None, 1, 3)]
    assert result.events[2].result == {"status": "placed"} and result.events[2].metadata["environment"] is True
    assert result.unanswered == () and result.unreported == ()


def test_reports_pair_within_their_turn_only_and_the_rest_is_named():
    recorded = [{"event": "user", "text": "a"}, report("get_order"), {"event": "bot", "text": "x"}, {"event": "user", "text": "b"}, report("cancel_order"), {"event": "bot", "text": "y"}]
    result = merged(recorded, [(1, call("cancel_order"))])

    assert shape(result) == [
        ("user", None, 1, 0), ("tool_executed", "get_order", 1, 1), ("tool_executed", "cancel_order", 1, 2), ("bot", None, 1, 3),
        ("user", None, 2, 4), ("tool_executed", "cancel_order", 2, 5), ("bot", None, 2, 6),
    ]
    assert result.unanswered == (1, 5)  # the turn-2 cancel was never answered; the turn-1 cancel call was never reported
    assert result.unreported == (2,)


def test_a_tool_that_is_not_the_environments_is_left_as_reported():
    recorded = [{"event": "user", "text": "a"}, report("send_email"), {"event": "bot", "text": "x"}]
    result = merged(recorded, [])

    assert shape(result) == [("user", None, 1, 0), ("tool_executed", "send_email", 1, 1), ("bot", None, 1, 2)]
    assert result.unanswered == () and result.unreported == ()
