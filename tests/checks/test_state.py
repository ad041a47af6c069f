"""State checks (`state_equals`, `state_unchanged`, `state_changes`, `state_matches_replay`): what the agent's calls
left in its environment, judged from the conversation's `World`, explained with the first differing path and both
values; without a recorded state (or, to replay, the environment) they are `error`, never a pass."""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from functools import partial
from pathlib import Path

import orjson
import pytest

from dialogcheck import load_scenario
from dialogcheck.checks import ASSERTIONS, Outcome
from dialogcheck.environment import load_environment
from dialogcheck.errors import LoadError
from dialogcheck.events.model import World
from dialogcheck.events.parse import conversation_from_dicts
from dialogcheck.events.values import ABSENT
from dialogcheck.judging import evaluate
from dialogcheck.results.codec import conversation_document
from dialogcheck.results.model import ConversationResult
from tests import inprocess
from tests.conftest import assertion_error, bot, check_from_yaml, conv, user
from tests.environment.conftest import SHOP, with_faults, write_environment

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

START = {
    "orders": {
        "O1": {"id": "O1", "status": "pending", "total": 30, "items": [{"sku": "A", "qty": 1}]},
        "O2": {"id": "O2", "status": "shipped", "total": 12, "items": []},
    },
    "refunds": [],
    "a.b": {"c": 1},
}


def changed(state: dict, *edits) -> dict:
    """A copy of `state` with each `(keys, value)` set (ABSENT: deleted)."""
    copy = orjson.loads(orjson.dumps(state))
    for keys, value in edits:
        holder = copy
        for key in keys[:-1]:
            holder = holder[key]
        if value is ABSENT:
            del holder[keys[-1]]
        elif isinstance(holder, list) and keys[-1] == len(holder):
            holder.append(value)
        else:
            holder[keys[-1]] = value
    return copy


def with_world(final: dict, initial: dict = START, replay=None):
    """A conversation whose environment began with `initial` and ended with `final`."""
    world = World("shop", orjson.dumps(initial), orjson.dumps(final), replay)
    return dataclasses.replace(conv(user("cancel O1"), bot("Done.")), world=world)


CANCELLED = changed(START, (("orders", "O1", "status"), "cancelled"), (("refunds", 0), {"order_id": "O1"}))


def judged(text: str, conversation):
    check = check_from_yaml(text)
    return check, check.evaluate(conversation)


# --- state_equals ---------------------------------------------------------------------------------------


def test_state_equals_passes_on_an_equal_value_typed_as_json():
    check, result = judged("state_equals: {path: orders.O1.status, value: cancelled}", with_world(CANCELLED))
    assert result.passed and result.detail == "orders.O1.status is 'cancelled' in the final state"
    assert check.label == "state_equals orders.O1.status"
    assert judged("state_equals: {path: orders.O1.total, value: 30.0}", with_world(CANCELLED))[1].passed
    assert not judged("state_equals: {path: orders.O1.total, value: '30'}", with_world(CANCELLED))[1].passed
    assert judged("state_equals: {path: orders.O1.items.0, value: {qty: 1, sku: A}}", with_world(CANCELLED))[1].passed
    assert judged("state_equals: {path: a.b.c, value: 1}", with_world(CANCELLED))[1].passed  # a literal key `a.b`


def test_state_equals_fails_naming_the_path_and_both_values():
    _, result = judged("state_equals: {path: orders.O1.status, value: cancelled}", with_world(START))
    assert result.outcome is Outcome.FAIL
    assert result.detail == "orders.O1.status: final state has 'pending', expected 'cancelled'"
    [difference] = result.differences
    assert (difference.field, difference.path, difference.actual, difference.expected) == (
        "orders.O1.status", "orders.O1.status", "pending", "cancelled")


def test_state_equals_on_an_object_names_the_first_differing_path_inside_and_keeps_both_values_whole():
    _, result = judged("state_equals: {path: orders.O1, value: {id: O1, status: pending, total: 30, items: [{sku: B, qty: 1}]}}",
                       with_world(START))
    assert result.detail == "orders.O1.items.0.sku: final state has 'A', expected 'B'"
    [difference] = result.differences
    assert (difference.field, difference.path) == ("orders.O1", "orders.O1.items.0.sku")
    assert difference.actual == START["orders"]["O1"] and difference.expected["items"] == [{"sku": "B", "qty": 1}]


@pytest.mark.parametrize(
    "path, detail",
    [
        ("orders.O9.status", "orders.O9.status: no such path in the final state (orders has no key `O9`; its keys: O1, O2), expected 'x'"),
        ("orderz", "orderz: no such path in the final state (the state has no key `orderz`; its keys: orders, refunds, a.b), expected 'x'"),
        ("refunds.0", "refunds.0: no such path in the final state (refunds is a list of 0 items), expected 'x'"),
        ("orders.O1.status.x", "orders.O1.status.x: no such path in the final state (orders.O1.status is 'pending', with nothing inside), expected 'x'"),
    ],
)
def test_a_path_not_in_the_state_is_a_failure_naming_the_path_never_a_crash(path, detail):
    _, result = judged(f"state_equals: {{path: {path}, value: x}}", with_world(START))
    assert result.outcome is Outcome.FAIL and result.detail == detail
    [difference] = result.differences
    assert (difference.path, difference.actual, difference.expected) == (path, ABSENT, "x")


def test_a_missing_path_in_an_empty_state_says_it_has_no_keys():
    _, result = judged("state_equals: {path: orders, value: x}", with_world({}, {}))
    assert result.detail == "orders: no such path in the final state (the state has no key `orders`; its keys: none), expected 'x'"


def test_state_equals_dollar_is_the_whole_state():
    assert judged("state_equals: {path: $, value: {}}", with_world({}, {}))[1].passed
    _, result = judged("state_equals: {path: $, value: {refunds: []}}", with_world({"refunds": [1]}, {}))
    assert result.detail == "refunds.0: final state has 1, expected no value there"


# --- state_unchanged ------------------------------------------------------------------------------------


def test_state_unchanged_passes_when_every_path_holds_the_same_value():
    check, result = judged("state_unchanged: {paths: [orders.O2, refunds]}", with_world(START))
    assert result.passed and result.detail == "unchanged: orders.O2, refunds"
    assert check.label == "state_unchanged orders.O2, refunds"


def test_state_unchanged_fails_on_a_path_in_neither_state_so_a_misspelt_one_never_passes():
    _, result = judged("state_unchanged: {paths: [orders.O2, orders.O1.staus, order.O1]}", with_world(CANCELLED))
    assert not result.passed
    assert result.detail == (
        "orders.O1.staus: no such path in either state (orders.O1 has no key `staus`; its keys: id, status, total, items); "
        "order.O1: no such path in either state (the state has no key `order`; its keys: orders, refunds, a.b)"
    )


def test_state_unchanged_fails_naming_each_changed_path_with_both_values():
    final = changed(START, (("orders", "O2", "status"), "cancelled"), (("orders", "O1"), ABSENT), (("orders", "O3"), {"id": "O3"}))
    _, result = judged("state_unchanged: {paths: [orders.O2, orders.O1, orders.O3, refunds]}", with_world(final))
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "orders.O2.status changed: starting state had 'shipped', final state has 'cancelled'; "
        "orders.O1 was removed: starting state had " + '{"id":"O1","items":[{"qty":1,"sku":"A"}],"status":"pending","total":30}'
        + "; orders.O3 was added: final state has {\"id\":\"O3\"}"
    )
    # Each difference keeps both values whole; one added where nothing was expected has no `expected` to keep.
    assert [(d.field, d.path) for d in result.differences] == [("orders.O2", "orders.O2.status"), ("orders.O1", "orders.O1")]
    assert result.differences[1].actual is ABSENT and result.differences[1].expected == START["orders"]["O1"]


# --- state_changes --------------------------------------------------------------------------------------


def test_state_changes_passes_when_every_change_is_under_an_allowed_path_and_each_required_one_changed():
    check, result = judged("state_changes: {allowed: [orders.O1.status, refunds], required: [orders.O1.status]}",
                           with_world(CANCELLED))
    assert result.passed
    assert result.detail == "the state changed at orders.O1.status, refunds.0: all under the allowed paths; every required path changed"
    assert check.label == "state_changes allowed orders.O1.status, refunds; required orders.O1.status"
    assert judged("state_changes: {allowed: [$]}", with_world(CANCELLED))[1].passed
    assert judged("state_changes: {allowed: [orders]}", with_world(START))[1].detail == "the state did not change"
    assert judged("state_changes: {required: [refunds]}", with_world(CANCELLED))[1].passed


def test_a_change_outside_the_allowed_paths_fails_with_its_path_and_both_values():
    final = changed(CANCELLED, (("orders", "O2", "status"), "cancelled"), (("orders", "O2", "total"), 0))
    _, result = judged("state_changes: {allowed: [orders.O1, refunds]}", with_world(final))
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "orders.O2.status changed outside the allowed paths (orders.O1, refunds): starting state had 'shipped', "
        "final state has 'cancelled'; and 1 more change outside them (orders.O2.total)"
    )
    assert [(d.path, d.actual, d.expected) for d in result.differences] == [
        ("orders.O2.status", "cancelled", "shipped"), ("orders.O2.total", 0, 12)]


def test_a_record_added_whole_is_a_change_at_the_record_not_only_at_its_fields():
    final = changed(START, (("orders", "O3"), {"id": "O3", "status": "placed"}))
    _, result = judged("state_changes: {allowed: [orders.O3.status]}", with_world(final))
    assert result.detail == (
        "orders.O3 changed outside the allowed paths (orders.O3.status): starting state had no value there, "
        "final state has {\"id\":\"O3\",\"status\":\"placed\"}"
    )
    assert result.differences == ()  # nothing was expected there, so there is no expected value to keep
    assert judged("state_changes: {allowed: [orders.O3]}", with_world(final))[1].passed


def test_a_required_path_that_did_not_change_fails_naming_it():
    _, result = judged("state_changes: {allowed: [orders.O1, refunds], required: [orders.O1.status, orders.O9]}",
                       with_world(changed(START, (("refunds", 0), {"order_id": "O1"}))))
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "required path orders.O1.status did not change: it is 'pending' in both states; "
        "required path orders.O9 did not change: it is in neither state"
    )


# --- state_matches_replay -------------------------------------------------------------------------------


def shop_world(tmp_path: Path, text: str = SHOP):
    """The shop environment with its orders pending, from a real file."""
    return load_environment(write_environment(tmp_path, text.replace("status: placed", "status: pending")))


REPLAY = """
state_matches_replay:
  calls:
    - {tool: get_order, arguments: {order_id: O1}}
    - {tool: cancel_order, arguments: {order_id: O1, reason: late}}
"""


def recorded(environment, *calls, faults: bool = True):
    """A conversation the environment answered `calls` in, its world as the batch runner records it."""
    run = environment.start(seed=0, faults=faults, sleep=lambda seconds: None)
    for name, arguments in calls:
        run.call(name, arguments)
    initial = orjson.dumps(run.initial_state)
    world = World(environment.name, initial, orjson.dumps(run.state), partial(environment.replay, initial))
    events = [user("Please cancel order O1, it is late."), *run.events, bot("Your order O1 is cancelled.")]
    return dataclasses.replace(conversation_from_dicts(events, source="test"), world=world)


def test_state_matches_replay_passes_when_the_agent_left_the_state_the_expected_calls_leave(tmp_path):
    environment = shop_world(tmp_path)
    conversation = recorded(environment, ("cancel_order", {"order_id": "O1", "reason": "late"}))
    check, result = judged(REPLAY, conversation)
    assert result.passed and result.detail == "the final state equals the state the 2 expected calls leave"
    assert check.label == "state_matches_replay get_order, cancel_order"


def test_state_matches_replay_fails_with_the_first_differing_path_and_both_values(tmp_path):
    environment = shop_world(tmp_path)
    conversation = recorded(environment, ("cancel_order", {"order_id": "O2", "reason": "late"}))
    _, result = judged(REPLAY, conversation)
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "the final state differs from the state the 2 expected calls leave in 3 places; first at "
        "orders.O1.status: final state has 'pending', replay has 'cancelled'"
    )
    [difference] = result.differences
    assert (difference.path, difference.actual, difference.expected) == ("orders.O1.status", "pending", "cancelled")


def test_an_expected_call_the_environment_refuses_is_an_error_naming_its_place(tmp_path):
    environment = shop_world(tmp_path)
    conversation = recorded(environment, ("cancel_order", {"order_id": "O1", "reason": "late"}))
    _, result = judged(REPLAY.replace("reason: late", "why: late"), conversation)
    assert result.outcome is Outcome.ERROR
    assert result.detail.startswith(
        "expected call 2 (cancel_order) was answered with an error when replayed: invalid arguments")
    assert result.detail.endswith("; the scenario's expected calls must all succeed on the starting state")


def test_the_agent_that_says_cancelled_while_its_cancel_call_timed_out_fails_the_end_state_checks(tmp_path):
    environment = shop_world(tmp_path, with_faults("- {tool: cancel_order, kind: timeout, delay: 5}"))
    conversation = recorded(environment, ("cancel_order", {"order_id": "O1", "reason": "late"}))
    assert conversation.tool_runs[0].is_error and conversation.tool_runs[0].metadata["fault"]["kind"] == "timeout"
    _, result = judged("state_equals: {path: orders.O1.status, value: cancelled}", conversation)
    assert result.outcome is Outcome.FAIL
    assert result.detail == "orders.O1.status: final state has 'pending', expected 'cancelled'"
    _, replayed = judged(REPLAY, conversation)  # the replay runs with the faults off: the cancel goes through there
    assert replayed.outcome is Outcome.FAIL and "orders.O1.status: final state has 'pending', replay has 'cancelled'" in replayed.detail
    _, required = judged("state_changes: {required: [orders.O1.status]}", conversation)
    assert required.detail == "required path orders.O1.status did not change: it is 'pending' in both states"


# --- without a recorded state ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "state_equals: {path: orders.O1.status, value: cancelled}",
        "state_unchanged: {paths: [orders]}",
        "state_changes: {allowed: [orders]}",
        "state_matches_replay: {calls: [{tool: get_order}]}",
    ],
)
def test_without_a_recorded_state_every_state_check_is_an_error_never_a_pass(text):
    _, result = judged(text, conv(user("hi"), bot("Done.")))
    assert result.outcome is Outcome.ERROR
    assert result.detail == (
        "no environment state was recorded for this conversation: the scenario names no `environment`, "
        "or the conversation was recorded without one"
    )


def test_replay_without_the_environment_at_hand_is_an_error():
    _, result = judged(REPLAY, with_world(CANCELLED))
    assert result.outcome is Outcome.ERROR
    assert result.detail == "the environment is not at hand to replay the calls (only its starting and final states were recorded)"


def test_the_differences_reach_the_json_output_whole():
    _, result = judged("state_equals: {path: orders.O1, value: {id: O1}}", with_world(START))
    document = conversation_document(ConversationResult("t", "s", (result,)), with_source=True)
    assert document["assertions"][0]["differences"] == [
        {"field": "orders.O1", "path": "orders.O1.status", "actual": START["orders"]["O1"], "expected": {"id": "O1"}}]


def test_the_four_keys_are_registered():
    assert {"state_equals", "state_unchanged", "state_changes", "state_matches_replay"} <= set(ASSERTIONS)


# --- bad values in the file -----------------------------------------------------------------------------

SCENARIO = """\
scenario:
  name: Cancel a late order
  simulation_context: You want order O1 cancelled.
  goals:
    assertions:
%s
"""


def scenario_error(tmp_path: Path, assertion: str) -> str:
    path = tmp_path / "cancel.yml"
    path.write_text(SCENARIO % textwrap.indent(textwrap.dedent(assertion).strip("\n"), " " * 6))
    with pytest.raises(LoadError) as info:
        load_scenario(path, environ={})
    return str(info.value).replace(str(path), "F")


@pytest.mark.parametrize(
    "assertion, message",
    [
        ("- state_equals: {path: orders.O1.status}", "F:6:23: `state_equals` is missing required field `value`"),
        ("- state_equals: {path: 5, value: x}", "F:6:30: `path` in `state_equals` must be a string, got an integer"),
        ("- state_equals: {path: a, value: x, vaule: y}", "F:6:43: unknown field `vaule` in `state_equals` (did you mean `value`?)"),
        ("- state_unchanged: {paths: []}", "F:6:34: `paths` in `state_unchanged` must hold at least one item, got 0"),
        ("- state_unchanged: {paths: orders}", "F:6:34: `paths` in `state_unchanged` must be a list, got a string"),
        ("- state_unchanged: {paths: ['']}", "F:6:35: item 1 of `paths` in `state_unchanged` must be a non-empty string, got a string"),
        ("- state_changes: {}", "F:6:24: `state_changes` must set at least one of `allowed`, `required`"),
        ("- state_changes: {allowed: [a], required: b}", "F:6:49: `required` in `state_changes` must be a list, got a string"),
        ("- state_matches_replay: {calls: [{arguments: {}}]}", "F:6:40: call 1 of `state_matches_replay` is missing required field `tool`"),
        ("- state_matches_replay: {calls: [{tool: x, arguments: [1]}]}", "F:6:61: `arguments` in call 1 of `state_matches_replay` must be a mapping, got a list"),
        ("- state_matches_replay: {calls: [x]}", "F:6:40: call 1 of `state_matches_replay` must be a mapping, got a string"),
        ("- state_matches_replay: {calls: []}", "F:6:39: `calls` in `state_matches_replay` must hold at least one item, got 0"),
        ("- state_equal: {path: a, value: 1}", "F:6:9: unknown assertion `state_equal` (did you mean `state_equals`?)"),
    ],
)
def test_a_bad_value_is_a_load_error_at_its_line_and_column(tmp_path, assertion, message):
    assert scenario_error(tmp_path, assertion) == message


def test_dialogcheck_validate_refuses_a_bad_state_check_with_exit_2_and_the_position(tmp_path):
    path = tmp_path / "cancel.yml"
    path.write_text(SCENARIO % "      - state_changes: {}\n      - state_matches_replay: {calls: [{arguments: {}}]}")
    done = inprocess.run([DIALOGCHECK, "validate", path], text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert f"{path}:6:24: `state_changes` must set at least one of `allowed`, `required`" in output
    assert f"{path}:7:40: call 1 of `state_matches_replay` is missing required field `tool`" in output
    assert "Traceback" not in output


def test_a_scenario_with_state_checks_loads_and_judges_through_evaluate(tmp_path):
    path = tmp_path / "cancel.yml"
    write_environment(tmp_path, SHOP)
    text = SCENARIO % "      - state_equals: {path: orders.O1.status, value: cancelled}\n      - state_unchanged: {paths: [orders.O2]}"
    path.write_text(text.replace("  goals:", "  environment: shop\n  goals:"))
    scenario = load_scenario(path, environ={})
    assert scenario.environment is not None and scenario.environment.name == "shop"
    result = evaluate(scenario, with_world(START), no_judge=True)
    assert [str(r.outcome) for r in result.assertions] == ["fail", "pass"]
    assert [str(r.outcome) for r in evaluate(scenario, conv(user("hi")), no_judge=True).assertions] == ["error", "error"]


def test_state_equals_takes_null_as_a_value_where_memory_checks_refuse_it():
    check = check_from_yaml("state_equals: {path: orders.O1.note, value: null}")
    assert check.value is None
    final = changed(START, (("orders", "O1", "note"), None))
    assert check.evaluate(with_world(final)).passed
    _, result = judged("state_equals: {path: orders.O1.total, value: null}", with_world(START))
    assert result.detail == "orders.O1.total: final state has 30, expected null"
    assert "null is not accepted" in assertion_error("memory_was_set: [{name: a, value: null}]")


def test_check_of_a_recorded_conversation_without_state_exits_3_with_the_error_not_a_pass(tmp_path):
    scenario = tmp_path / "cancel.yml"
    write_environment(tmp_path, SHOP)
    scenario.write_text((SCENARIO % "      - state_equals: {path: orders.O1.status, value: cancelled}").replace("  goals:", "  environment: shop\n  goals:"))
    record = tmp_path / "c.jsonl"
    record.write_bytes(b'{"event": "user", "text": "cancel O1"}\n{"event": "bot", "text": "Cancelled."}\n')
    done = inprocess.run([DIALOGCHECK, "check", "--scenario", scenario, record, "--format", "json"], text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    document = orjson.loads(done.stdout)
    assert document["verdict"] == "error"
    [assertion] = document["assertions"]
    assert (assertion["key"], assertion["outcome"], assertion["passed"]) == ("state_equals", "error", False)
    assert assertion["detail"].startswith("no environment state was recorded for this conversation")


def test_a_place_the_replay_lacks_keeps_both_values_whole_one_level_up(tmp_path):
    environment = shop_world(tmp_path)
    conversation = recorded(environment, ("cancel_order", {"order_id": "O1", "reason": "late"}),
                            ("cancel_order", {"order_id": "O1", "reason": "again"}))
    _, result = judged(REPLAY, conversation)
    assert result.detail == (
        "the final state differs from the state the 2 expected calls leave in 1 place; first at "
        "refunds.1: final state has {\"note\":\"refund: again\",\"order_id\":\"O1\"}, replay has no value there"
    )
    [difference] = result.differences
    assert (difference.field, difference.path) == ("refunds", "refunds.1")
    assert len(difference.actual) == 2 and difference.expected == [{"order_id": "O1", "note": "refund: late"}]


def scenario_problems(tmp_path: Path, assertions: str, *, environment: bool = True) -> list[str]:
    """The problems of a scenario file of `assertions` (YAML lines), naming the shop environment or none."""
    path = tmp_path / "cancel.yml"
    text = SCENARIO % assertions
    if environment:
        write_environment(tmp_path, SHOP)
        text = text.replace("  goals:", "  environment: shop\n  goals:")
    path.write_text(text)
    with pytest.raises(LoadError) as raised:
        load_scenario(path, environ={})
    return [str(problem).removeprefix(f"{path}:") for problem in raised.value.problems]


def test_a_state_check_in_a_scenario_without_an_environment_is_bad_input_at_its_line(tmp_path):
    problems = scenario_problems(
        tmp_path, "      - bot_uttered: {text_matches: cancelled}\n      - state_equals: {path: orders.O1.status, value: cancelled}", environment=False
    )
    assert problems[0] == (
        "7:9: assertion 2 (`state_equals`) judges the state of the agent's environment, but this scenario names no"
        " `environment` (nor does eval/conftest.yml): add `environment: NAME` (eval/environments/NAME.yml)"
    )


def test_an_expected_call_of_a_tool_the_environment_lacks_is_bad_input_at_its_assertion(tmp_path):
    problems = scenario_problems(tmp_path, "      - state_matches_replay: {calls: [{tool: cancel_ordr, arguments: {order_id: O1}}]}")
    assert problems[0] == (
        "7:9: call 1 of assertion 1 (`state_matches_replay`) names the tool `cancel_ordr` (did you mean `cancel_order`?),"
        " which environment `shop` does not have (its tools: cancel_order, get_order)"
    )


def test_a_state_check_path_whose_table_the_environment_lacks_is_bad_input_at_its_assertion(tmp_path):
    problems = scenario_problems(tmp_path, "      - state_unchanged: {paths: [order.O1]}\n      - state_equals: {path: $, value: {}}")
    assert problems == [
        "7:9: assertion 1 (`state_unchanged`) names the path `order.O1`, whose table `order` (did you mean `orders`?)"
        " is not in the starting state of environment `shop` (its tables: orders, refunds)"
    ]
