"""`miss_count` ranks failed candidates without building text; it must agree with `mismatches`."""

import pytest

from tests.conftest import bot, check_from_yaml, conv, ev, tool, user

CHECKS = [
    "skill_cancelled: {skill_id: s, step_id: ask}",
    "skill_activated: {skill_id: s}",
    "ordered_block_completed: {skill_id: s, block_id: b, step_id: done}",
    "ordered_block_entered: {skill_id: s, block_id: b}",
    "bot_uttered: {utter_name: utter_ask, text_matches: '(?i)user id', buttons: [{title: Yes}]}",
    "bot_uttered: {text_matches: '^id$'}",
    "tool_executed: {tool_name: look_up, source: mcp, mcp_server: shop, arguments: {id: 7}, is_error: true}",
]


def every_candidate():
    return conv(
        user("hi"),
        *(ev(kind, skill_id=skill, step_id=step) for kind in ("skill_cancelled", "skill_activated") for skill in ("s", "t") for step in ("ask", "other")),
        *(
            ev("ordered_block_completed", skill_id=skill, block_id=block, step_id=step)
            for skill in ("s", "t")
            for block in ("b", "c")
            for step in ("done", "other")
        ),
        ev("ordered_block_entered", skill_id="t", block_id="b"),
        bot("your user id?", utter="utter_ask", buttons=[{"title": "No"}]),
        bot("id", utter="utter_other", buttons=[{"title": "Yes"}]),
        bot("nothing"),
        tool("look_up", {"id": 7}, source="mcp", mcp_server="shop", is_error=True),
        tool("look_up", {"id": True}, source="local"),
        tool("other", {}),
    )


@pytest.mark.parametrize("text", CHECKS)
def test_miss_count_is_the_number_of_mismatches_for_every_candidate(text):
    check = check_from_yaml(text)
    conversation = every_candidate()
    candidates = check.candidates(conversation)
    assert candidates
    for event in candidates:
        assert check.miss_count(event) == len(check.mismatches(event))
