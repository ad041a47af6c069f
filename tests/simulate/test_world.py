"""Putting the environment's calls into a conversation: paired with the agent's reports by tool and arguments, in
the order the environment answered them, the rest named."""

from dialogcheck.events.parse import conversation_from_dicts
from dialogcheck.simulate.world import merge_calls

TOOLS = {"get_order", "cancel_order"}


def call(tool, order="O1", *, error=False, fault=None):
    metadata = {"environment": True, **({"fault": fault} if fault else {})}
    return {"event": "tool_executed", "tool_name": tool, "source": "local", "arguments": {"order_id": order},
            "result": "timed out" if error else {"status": "placed"}, "is_error": error, "metadata": metadata}


def report(tool, order="O1", **extra):
    return {"event": "tool_executed", "tool_name": tool, "source": "local", "arguments": {"order_id": order},
            "result": "as the agent says", **extra}


def merged(recorded, calls):
    conversation = conversation_from_dicts(recorded)
    return merge_calls(conversation.events, conversation.raw_events, calls, TOOLS)


def shape(result):
    return [(e.type, getattr(e, "tool_name", None) or e.metadata.get("x"), e.turn, e.index) for e in result.events]


def user(text="a"):
    return {"event": "user", "text": text}


def bot(text="b"):
    return {"event": "bot", "text": text}


def test_calls_of_an_agent_that_reports_nothing_go_before_the_reply_of_their_turn_in_their_order():
    recorded = [bot("hi"), user(), bot(), user("c"), bot("d")]
    result = merged(recorded, [(1, call("get_order")), (2, call("cancel_order")), (2, call("get_order", "O2"))])

    assert shape(result) == [
        ("bot", None, 0, 0), ("user", None, 1, 1), ("tool_executed", "get_order", 1, 2), ("bot", None, 1, 3),
        ("user", None, 2, 4), ("tool_executed", "cancel_order", 2, 5), ("tool_executed", "get_order", 2, 6), ("bot", None, 2, 7),
    ]
    assert result.calls == (2, 5, 6)
    assert result.unanswered == () and result.unreported == ()  # it reports no calls: nothing is missing from its log


def test_a_report_after_a_message_of_its_turn_is_paired_where_it_was_and_keeps_its_context():
    recorded = [user(), bot("let me look"), report("get_order", metadata={"skill_id": "orders"}, source="mcp", mcp_server="shop"), bot("placed")]
    result = merged(recorded, [(1, call("get_order"))])

    assert shape(result) == [("user", None, 1, 0), ("bot", None, 1, 1), ("tool_executed", "get_order", 1, 2), ("bot", None, 1, 3)]
    paired = result.events[2]
    assert paired.result == {"status": "placed"} and paired.metadata == {"skill_id": "orders", "environment": True}
    assert (paired.source, paired.mcp_server) == ("mcp", "shop")
    assert result.unanswered == () and result.unreported == ()


def test_two_calls_of_one_tool_reported_in_another_order_pair_by_their_arguments_and_keep_the_answered_order():
    recorded = [user(), report("cancel_order", "O2", metadata={"skill_id": "s_O2"}), report("cancel_order", "O1", metadata={"skill_id": "s_O1"}), bot()]
    result = merged(recorded, [(1, call("cancel_order", "O1", error=True)), (1, call("cancel_order", "O2"))])

    answered = [(e.arguments["order_id"], e.is_error, e.metadata["skill_id"]) for e in result.events if e.type == "tool_executed"]
    assert answered == [("O1", True, "s_O1"), ("O2", False, "s_O2")]  # each report's context on its own call, in the answered order


def test_reports_in_another_order_than_the_calls_were_answered_are_put_in_the_answered_order():
    recorded = [user(), report("get_order", "O2"), report("cancel_order", "O2"), bot()]
    result = merged(recorded, [(1, call("cancel_order", "O2")), (1, call("get_order", "O2"))])

    assert [e.tool_name for e in result.events if e.type == "tool_executed"] == ["cancel_order", "get_order"]


def test_a_report_of_a_call_never_answered_is_kept_as_tool_unanswered_which_no_tool_check_counts():
    recorded = [user(), report("cancel_order"), bot("Cancelled!")]
    result = merged(recorded, [])

    assert shape(result) == [("user", None, 1, 0), ("tool_unanswered", None, 1, 1), ("bot", None, 1, 2)]
    assert result.unanswered == (1,) and result.events[1].type == "tool_unanswered"
    assert result.recorded[1]["event"] == "tool_unanswered" and result.recorded[1]["tool_name"] == "cancel_order"
    conversation = conversation_from_dicts(result.recorded)
    assert conversation.tool_runs == ()


def test_a_report_whose_arguments_differ_from_the_call_is_not_that_call():
    recorded = [user(), report("cancel_order", "O9"), bot()]
    result = merged(recorded, [(1, call("cancel_order", "O1"))])

    assert [(obj["event"], obj["arguments"]["order_id"]) for obj in result.recorded[1:3]] == [("tool_unanswered", "O9"), ("tool_executed", "O1")]
    assert result.unanswered == (1,) and result.unreported == (2,)


def test_an_agent_cannot_pass_its_own_report_off_as_an_answered_call_or_claim_a_fault():
    spoofed = report("cancel_order", metadata={"environment": True, "fault": {"kind": "timeout", "index": 1}, "skill_id": "s"})
    result = merged([user(), spoofed, bot()], [])

    assert result.events[1].type == "tool_unanswered" and result.events[1].metadata == {"skill_id": "s"}
    assert "environment" not in result.recorded[1]["metadata"] and "fault" not in result.recorded[1]["metadata"]
    assert result.calls == () and result.unanswered == (1,)


def test_a_call_answered_in_one_turn_and_reported_in_the_next_is_one_event_in_its_own_turn():
    recorded = [user(), bot(), user("c"), report("cancel_order"), bot("d")]
    result = merged(recorded, [(1, call("cancel_order", error=True))])

    runs = [e for e in result.events if e.type == "tool_executed"]
    assert [(e.turn, e.is_error) for e in runs] == [(1, True)]  # the answer as it was, once, never the report's success
    assert result.unanswered == () and result.unreported == ()


def test_reports_pair_within_their_turn_first_and_the_rest_is_named():
    recorded = [user(), report("get_order"), bot("x"), user("b"), report("cancel_order", "O2"), bot("y")]
    result = merged(recorded, [(1, call("cancel_order"))])

    assert shape(result) == [
        ("user", None, 1, 0), ("tool_unanswered", None, 1, 1), ("tool_executed", "cancel_order", 1, 2), ("bot", None, 1, 3),
        ("user", None, 2, 4), ("tool_unanswered", None, 2, 5), ("bot", None, 2, 6),
    ]
    assert result.unanswered == (1, 5) and result.unreported == (2,)


def test_a_tool_that_is_not_the_environments_is_left_as_reported():
    recorded = [user(), report("send_email"), bot("x")]
    result = merged(recorded, [])

    assert shape(result) == [("user", None, 1, 0), ("tool_executed", "send_email", 1, 1), ("bot", None, 1, 2)]
    assert result.unanswered == () and result.unreported == ()
