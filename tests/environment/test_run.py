"""One run's environment: validated calls, recorded events the checks can judge, and a state of its own."""

from __future__ import annotations

import threading

import orjson

from dialogcheck._fields import Problems
from dialogcheck._yaml import parse_yaml
from dialogcheck.checks import Outcome
from dialogcheck.environment import run as run_module
from dialogcheck.events.model import ToolRun
from dialogcheck.events.parse import conversation_from_dicts
from dialogcheck.scenario.load import parse_assertion


def test_tools_are_shown_as_an_llm_agent_is_given_them(shop):
    run = shop.start(seed=0)
    assert run.tools[0] == {
        "name": "get_order",
        "description": "Look up an order by its id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    }
    run.tools[0]["name"] = "changed"
    assert run.tools[0]["name"] == "get_order"


def test_arguments_that_break_the_schema_are_answered_with_the_error_and_recorded(shop):
    run = shop.start(seed=0)
    assert run.call("get_order", {"order_id": 5}) == {"result": "invalid arguments at `order_id`: 5 is not of type 'string'", "is_error": True}
    assert run.call("get_order", {}) == {"result": "invalid arguments: 'order_id' is a required property", "is_error": True}
    assert run.call("get_order", ["O1"]) == {"result": "invalid arguments: they must be a JSON object, got a list", "is_error": True}
    assert run.call("get_order", {"order_id": {1, 2}}) == {"result": "invalid arguments: they must be a JSON object, got a value that is not JSON", "is_error": True}
    assert run.call("get_order", None) == {"result": "invalid arguments: they must be a JSON object, got null", "is_error": True}
    assert run.call("get_ordr", None)["result"].startswith("unknown tool `get_ordr`")
    assert [event["arguments"] for event in run.events] == [{"order_id": 5}, {}, {}, {}, {}, {}]
    assert all(event["is_error"] and event["metadata"] == {"environment": True} for event in run.events)


def test_an_unknown_tool_is_an_error_answer_naming_the_tools(shop):
    run = shop.start(seed=0)
    assert run.call("get_ordr", {"order_id": "O1"}) == {
        "result": "unknown tool `get_ordr` (did you mean `get_order`?): the tools are get_order, cancel_order",
        "is_error": True,
    }
    assert run.events[0]["tool_name"] == "get_ordr"


def test_arguments_past_their_bound_are_refused_unrecorded(shop, monkeypatch):
    monkeypatch.setattr(run_module, "MAX_ARGUMENT_BYTES", 30)
    run = shop.start(seed=0)
    assert run.call("get_order", {"order_id": "O" * 30}) == {"result": "invalid arguments: they take more than 30 bytes as JSON", "is_error": True}
    assert run.events[0]["arguments"] == {}


def test_calls_past_the_bound_are_refused(shop, monkeypatch):
    monkeypatch.setattr(run_module, "MAX_CALLS", 2)
    run = shop.start(seed=0)
    assert [run.call("get_order", {"order_id": "O1"})["is_error"] for _ in range(3)] == [False, False, True]
    assert run.events[-1]["result"] == "this run's environment answers at most 2 calls"


def _assertion(text: str):
    problems = Problems()
    check = parse_assertion(parse_yaml(text, "<test>"), problems, 1)
    assert not problems, problems.items
    return check


def test_recorded_events_parse_into_tool_runs_that_assertions_judge(shop):
    run = shop.start(seed=0)
    run.call("get_order", {"order_id": "O1"})
    run.call("cancel_order", {"order_id": "O1", "reason": "late"})
    run.call("cancel_order", {"order_id": "O9", "reason": "late"})
    events = [{"event": "user", "text": "cancel O1 please"}, *run.events]
    conversation = conversation_from_dicts(orjson.loads(orjson.dumps(events)))
    runs = [event for event in conversation.events if isinstance(event, ToolRun)]
    assert [(r.tool_name, r.is_error, r.metadata["environment"]) for r in runs] == [
        ("get_order", False, True), ("cancel_order", False, True), ("cancel_order", True, True),
    ]
    assert runs[2].error_message == "not found: orders.O9"
    cancelled = _assertion("tool_executed: {tool_name: cancel_order, source: local, arguments: {order_id: O1}, is_error: false}")
    assert cancelled.evaluate(conversation).outcome is Outcome.PASS
    failed = _assertion("tool_executed: {tool_name: cancel_order, source: local, is_error: true, times: 1}")
    assert failed.evaluate(conversation).outcome is Outcome.PASS
    never = _assertion("tool_executed: {tool_name: cancel_order, source: local, arguments: {order_id: O2}}")
    assert never.evaluate(conversation).outcome is Outcome.FAIL


def test_each_run_starts_from_a_fresh_copy_and_keeps_its_own_start(shop):
    first = shop.start(seed=0)
    first.call("cancel_order", {"order_id": "O1", "reason": "late"})
    second = shop.start(seed=0)
    assert second.state["orders"]["O1"]["status"] == "placed"
    assert first.state["orders"]["O1"]["status"] == "cancelled"
    assert first.initial_state == shop.state == second.state
    first.state["orders"]["O1"]["status"] = "changed by a reader"
    first.initial_state["orders"].clear()
    assert first.state["orders"]["O1"]["status"] == "cancelled" and first.initial_state == shop.state


def test_parallel_runs_writing_the_same_record_never_see_each_others_writes(shop):
    runs = [shop.start(seed=n) for n in range(8)]
    barrier = threading.Barrier(len(runs))
    seen: dict[int, list[str]] = {}

    def agent(number: int) -> None:
        run = runs[number]
        barrier.wait(timeout=60)
        seen[number] = []
        for turn in range(20):
            run.call("cancel_order", {"order_id": "O1", "reason": f"run {number} turn {turn}"})
            seen[number].append(run.call("get_order", {"order_id": "O1"})["result"]["status"])

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(len(runs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for number, run in enumerate(runs):
        notes = [refund["note"] for refund in run.state["refunds"]]
        assert notes == [f"refund: run {number} turn {turn}" for turn in range(20)]
        assert seen[number] == ["cancelled"] * 20
    assert shop.state["refunds"] == []


def test_one_run_called_from_many_threads_records_every_call_in_one_order(shop):
    run = shop.start(seed=0)
    threads = [threading.Thread(target=lambda n=n: [run.call("cancel_order", {"order_id": "O2", "reason": f"{n}-{i}"}) for i in range(25)]) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    notes = [refund["note"] for refund in run.state["refunds"]]
    assert len(notes) == len(set(notes)) == 100
    assert [event["arguments"]["reason"] for event in run.events] == [note.removeprefix("refund: ") for note in notes]


def test_the_public_names_of_the_environment_package_are_pinned():
    import dialogcheck.environment as package

    assert sorted(package.__all__) == ["AgentEnvironment", "Environment", "RunEnvironment", "load_environment", "project_of", "run_seed"]
    assert all(hasattr(package, name) for name in package.__all__)


def test_schema_patterns_are_searched_within_a_time_budget(tmp_path, monkeypatch):
    from dialogcheck.checks import patterns
    from dialogcheck.environment import load_environment

    from .conftest import write_environment

    text = """\
    environment:
      tools:
        - name: find
          description: Finds by code.
          parameters:
            type: object
            properties: {code: {type: string, pattern: "^(a|aa)+$"}, id: {type: string, pattern: "^O[0-9]+$"}}
            patternProperties: {"^n_": {type: integer}}
          returns: found
    """
    run = load_environment(write_environment(tmp_path, text)).start(seed=0)
    assert run.call("find", {"id": "O12", "n_x": 1}) == {"result": "found", "is_error": False}
    assert run.call("find", {"id": "X1"}) == {"result": "invalid arguments at `id`: 'X1' does not match '^O[0-9]+$'", "is_error": True}
    assert run.call("find", {"n_x": "one"}) == {"result": "invalid arguments at `n_x`: 'one' is not of type 'integer'", "is_error": True}
    monkeypatch.setattr(patterns, "CHECK_BUDGET", 0.05)
    answer = run.call("find", {"code": "a" * 5000 + "b"})
    assert answer["is_error"] is True
    assert answer["result"].startswith("the arguments could not be checked: the pattern /^(a|aa)+$/ ran out of the check's 0.05 s")


def test_sop_evaluators_judge_the_recorded_tool_log(shop):
    from dialogcheck.sop.load import parse_evaluator

    run = shop.start(seed=0)
    run.call("get_order", {"order_id": "O1"})
    run.call("cancel_order", {"order_id": "O1", "reason": "late"})
    conversation = conversation_from_dicts(run.events)

    def evaluator(text: str):
        problems = Problems()
        check = parse_evaluator(parse_yaml(text, "<test>"), problems, None, "the evaluator")
        assert not problems, problems.items
        return check.evaluate(conversation).outcome

    assert evaluator("{type: tool_sequence, sequence: [get_order, cancel_order], contiguous: true}") is Outcome.PASS
    assert evaluator("{type: tool_output_contains, toolSlug: cancel_order, assertions: {status: {op: equals, value: cancelled}}}") is Outcome.PASS
    assert evaluator("{type: tool_output_contains, toolSlug: get_order, assertions: {status: {op: equals, value: cancelled}}}") is Outcome.FAIL
