"""Each fault kind, as the agent receives it and as it is recorded on the call's event."""

from __future__ import annotations

import orjson

from dialogcheck.environment import load_environment

from .conftest import Sleeps, with_faults, write_environment

O1 = {"id": "O1", "status": "placed", "total": 30, "paid": True}


def start(tmp_path, fault_lines: str, sleep=None, **options):
    environment = load_environment(write_environment(tmp_path, with_faults(fault_lines)))
    return environment.start(seed=7, sleep=sleep or Sleeps(), **options)


def test_a_timeout_answers_as_a_timed_out_call_after_its_delay_and_never_reaches_the_tool(tmp_path):
    sleeps = Sleeps()
    run = start(tmp_path, "- {tool: cancel_order, kind: timeout, delay: 30}\n", sleeps)
    answer = run.call("cancel_order", {"order_id": "O1", "reason": "late"})
    assert answer == {"result": "timeout: `cancel_order` gave no answer within 30 s", "is_error": True}
    assert sleeps.delays == [30.0]
    assert run.state == run.initial_state
    assert run.events[0]["metadata"] == {"environment": True, "fault": {"kind": "timeout", "index": 1, "delay": 30.0}}


def test_a_timeout_waits_nothing_by_default(tmp_path):
    sleeps = Sleeps()
    run = start(tmp_path, "- {tool: get_order, kind: timeout}\n", sleeps)
    assert run.call("get_order", {"order_id": "O1"})["is_error"] is True
    assert sleeps.delays == []


def test_an_error_answers_its_message_and_records_its_status(tmp_path):
    run = start(tmp_path, "- {tool: cancel_order, kind: error, status: 503, message: service unavailable}\n")
    assert run.call("cancel_order", {"order_id": "O1", "reason": "late"}) == {"result": "service unavailable", "is_error": True}
    assert run.state == run.initial_state
    event = run.events[0]
    assert event["error_message"] == "service unavailable"
    assert event["metadata"]["fault"] == {"kind": "error", "index": 1, "status": 503, "message": "service unavailable"}


def test_empty_answers_nothing_and_not_as_an_error(tmp_path):
    run = start(tmp_path, "- {tool: get_order, kind: empty}\n- {tool: cancel_order, kind: empty, value: {}}\n")
    assert run.call("get_order", {"order_id": "O1"}) == {"result": None, "is_error": False}
    assert run.call("cancel_order", {"order_id": "O1", "reason": "x"}) == {"result": {}, "is_error": False}
    assert [event["metadata"]["fault"] for event in run.events] == [
        {"kind": "empty", "index": 1, "value": None}, {"kind": "empty", "index": 2, "value": {}},
    ]


def test_malformed_cuts_the_answer_in_half_or_answers_its_text_and_the_tool_still_runs(tmp_path):
    run = start(tmp_path, "- {tool: get_order, kind: malformed}\n- {tool: cancel_order, kind: malformed, text: '<html>502'}\n")
    assert run.call("get_order", {"order_id": "O1"}) == {"result": '{"id":"O1","status":"place', "is_error": False}
    assert run.call("cancel_order", {"order_id": "O1", "reason": "x"}) == {"result": "<html>502", "is_error": False}
    assert run.state["orders"]["O1"]["status"] == "cancelled"  # the service did the work; its answer was lost
    assert run.events[1]["metadata"]["fault"] == {"kind": "malformed", "index": 2, "text": "<html>502"}


def test_corrupt_sets_deletes_or_flips_a_field_of_the_answer_not_of_the_state(tmp_path):
    faults = """\
    - {tool: get_order, kind: corrupt, path: status, set: delivered, on_call: 1}
    - {tool: get_order, kind: corrupt, path: total, delete: true, on_call: 2}
    - {tool: get_order, kind: corrupt, path: paid, flip: true, on_call: 3}
    """
    run = start(tmp_path, faults)
    answers = [run.call("get_order", {"order_id": "O1"})["result"] for _ in range(4)]
    assert answers == [{**O1, "status": "delivered"}, {"id": "O1", "status": "placed", "paid": True}, {**O1, "paid": False}, O1]
    assert run.state == run.initial_state
    assert [event["metadata"].get("fault") for event in run.events] == [
        {"kind": "corrupt", "index": 1, "path": "status", "set": "delivered"},
        {"kind": "corrupt", "index": 2, "path": "total", "delete": True},
        {"kind": "corrupt", "index": 3, "path": "paid", "flip": True},
        None,
    ]


def test_a_corruption_with_nothing_to_alter_is_recorded_as_not_applied(tmp_path):
    run = start(tmp_path, "- {tool: get_order, kind: corrupt, path: shipping.eta, set: never}\n- {tool: get_order, kind: corrupt, path: status, flip: true}\n")
    assert run.call("get_order", {"order_id": "O1"}) == {"result": O1, "is_error": False}
    assert run.events[0]["metadata"]["fault"] == {
        "kind": "corrupt", "index": 1, "path": "shipping.eta", "set": "never", "applied": False, "why": "the result has no `shipping.eta`",
    }
    assert run.call("get_order", {"order_id": "O9"})["result"] == "not found: orders.O9"
    assert run.events[1]["metadata"]["fault"]["why"] == "the tool answered an error"


def test_stale_answers_from_the_starting_state_or_writes_ago_and_keeps_no_write(tmp_path):
    faults = """\
    - {tool: get_order, kind: stale, on_call: 1}
    - {tool: get_order, kind: stale, behind: 1, on_call: 2}
    - {tool: get_order, kind: stale, behind: 5, on_call: 3}
    """
    run = start(tmp_path, faults)
    run.call("cancel_order", {"order_id": "O1", "reason": "first"})
    assert run.call("get_order", {"order_id": "O1"})["result"]["status"] == "placed"
    run.call("cancel_order", {"order_id": "O2", "reason": "second"})
    stale = run.call("get_order", {"order_id": "O2"})["result"]
    assert stale["status"] == "shipped"  # as it was one write ago, before O2 was cancelled
    assert run.call("get_order", {"order_id": "O1"})["result"]["status"] == "placed"  # fewer writes than 5: the start
    assert run.call("get_order", {"order_id": "O1"})["result"]["status"] == "cancelled"
    assert [event["metadata"].get("fault") for event in run.events if event["tool_name"] == "get_order"] == [
        {"kind": "stale", "index": 1}, {"kind": "stale", "index": 2, "behind": 1}, {"kind": "stale", "index": 3, "behind": 5}, None,
    ]


def test_latency_answers_as_usual_after_its_delay(tmp_path):
    sleeps = Sleeps()
    run = start(tmp_path, "- {tool: get_order, kind: latency, delay: 2.5}\n", sleeps)
    assert run.call("get_order", {"order_id": "O1"}) == {"result": O1, "is_error": False}
    assert run.call("get_order", {"order_id": "O9"}) == {"result": "not found: orders.O9", "is_error": True}
    assert sleeps.delays == [2.5, 2.5]
    assert run.events[1]["metadata"]["fault"] == {"kind": "latency", "index": 1, "delay": 2.5}


def test_on_call_and_match_choose_the_calls_and_the_first_fault_in_file_order_wins(tmp_path):
    faults = """\
    - {tool: get_order, kind: error, message: second call, on_call: 2}
    - {tool: get_order, kind: error, message: O2 only, match: {order_id: O2}}
    - {tool: get_order, kind: error, message: never first}
    """
    run = start(tmp_path, faults)
    results = [run.call("get_order", {"order_id": order})["result"] for order in ("O1", "O1", "O2", "O1")]
    assert results == ["never first", "second call", "O2 only", "never first"]


def test_invalid_calls_meet_no_fault_and_are_not_counted(tmp_path):
    run = start(tmp_path, "- {tool: get_order, kind: error, on_call: 1}\n")
    assert run.call("get_order", {"order_id": 1})["result"].startswith("invalid arguments")
    assert run.call("get_order", {"order_id": "O1"}) == {"result": "internal server error", "is_error": True}
    assert "fault" not in run.events[0]["metadata"]


def test_faults_switched_off_leave_every_call_alone(tmp_path):
    run = start(tmp_path, "- {tool: get_order, kind: error}\n", faults=False)
    assert run.call("get_order", {"order_id": "O1"}) == {"result": O1, "is_error": False}


def test_only_as_many_older_states_are_kept_as_a_stale_fault_reaches_back(tmp_path):
    run = start(tmp_path, "- {tool: get_order, kind: stale, behind: 2, on_call: 1}\n")
    for n in range(10):
        run.call("cancel_order", {"order_id": "O1", "reason": str(n)})
    assert len(run._older) == 2  # a bound on memory: the states two and one writes ago
    assert [refund["note"] for refund in orjson.loads(run._older[0])["refunds"]] == [f"refund: {n}" for n in range(8)]
    assert len(run.call("get_order", {"order_id": "O1"})["result"]) == 4
