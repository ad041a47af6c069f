"""`Environment.replay`: the state a list of expected calls leaves on a fresh copy of a starting state, faults off.

tau-bench grades a conversation by replaying the task's expected actions on a fresh database; an expected call
the environment refuses is a mistake in the scenario, said with its place in the list, never a silent no-op.
"""

from __future__ import annotations

import orjson
import pytest

from dialogcheck.environment import load_environment
from dialogcheck.events.model import ReplayRefused

from .conftest import with_faults, write_environment

CANCEL = {"tool": "cancel_order", "arguments": {"order_id": "O1", "reason": "late"}}


def test_replay_makes_the_calls_in_order_on_a_fresh_copy_of_the_state_given(shop):
    start = orjson.dumps({**shop.state, "refunds": [{"order_id": "O0"}]})
    state = shop.replay(start, [{"tool": "get_order", "arguments": {"order_id": "O2"}}, CANCEL])
    assert state["orders"]["O1"]["status"] == "cancelled"
    assert state["orders"]["O2"] == shop.state["orders"]["O2"]
    assert state["refunds"] == [{"order_id": "O0"}, {"order_id": "O1", "note": "refund: late"}]
    assert orjson.loads(start)["orders"]["O1"]["status"] == "placed"  # the bytes given are never changed
    assert shop.replay(start, [CANCEL]) == state  # each replay starts afresh (a read changes nothing)


def test_replay_runs_with_the_faults_off(tmp_path):
    faulted = load_environment(write_environment(tmp_path, with_faults("- {tool: cancel_order, kind: timeout, delay: 300}")))
    run = faulted.start(seed=0, sleep=lambda seconds: None)
    assert run.call(CANCEL["tool"], CANCEL["arguments"])["is_error"]  # the agent's call timed out
    assert faulted.replay(faulted.state_json, [CANCEL])["orders"]["O1"]["status"] == "cancelled"


@pytest.mark.parametrize(
    "call, reason",
    [
        ({"tool": "cancel_ordr", "arguments": {"order_id": "O1", "reason": "late"}}, "unknown tool `cancel_ordr`"),
        ({"tool": "cancel_order", "arguments": {"order_id": "O1"}}, "invalid arguments"),
        ({"tool": "cancel_order"}, "invalid arguments"),  # no arguments reads as {}
        ({"tool": "cancel_order", "arguments": {"order_id": "O9", "reason": "late"}}, "not found: orders.O9"),
    ],
)
def test_a_call_the_environment_refuses_raises_naming_its_place_and_the_reason(shop, call, reason):
    with pytest.raises(ReplayRefused) as info:
        shop.replay(shop.state_json, [CANCEL, call])
    assert (info.value.number, info.value.tool) == (2, call["tool"])
    assert reason in info.value.reason
    assert str(info.value).startswith(f"expected call 2 ({call['tool']}) was answered with an error when replayed: ")
