"""`sequencing`: strictly after the previous match, earliest match, allowed steps only."""

import pytest

from tests.conftest import assertion_error, bot, check_from_yaml, conv, ev, tool, user

SEED = """
- sequencing:
    - memory_was_set: card_replace.replacement_reason
    - tool_executed:
        tool_name: order_replacement
        source: local
    - skill_completed:
        skill_id: card_replace
"""


def happy():
    return conv(
        user("replace my card"),
        ev("memory_set", key="card_replace.replacement_reason", value="damaged"),
        tool("lookup_card"),
        tool("order_replacement"),
        ev("skill_completed", skill_id="card_replace"),
    )


def test_seed_example_passes_with_events_between():
    result = check_from_yaml(SEED).evaluate(happy())
    assert result.passed
    assert result.detail == (
        "in order: memory_was_set at event 1 (turn 1), tool_executed at event 3 (turn 1), "
        "skill_completed at event 4 (turn 1)"
    )
    assert result.evidence == (1, 3, 4)


def test_tool_before_memory_fails_and_says_it_matched_only_earlier():
    run = conv(
        user("x"),
        tool("order_replacement"),
        ev("memory_set", key="card_replace.replacement_reason", value="damaged"),
        ev("skill_completed", skill_id="card_replace"),
    )
    result = check_from_yaml(SEED).evaluate(run)
    assert not result.passed
    assert result.detail == (
        "step 2 of 3 (tool_executed order_replacement (local)) has no match after step 1 matched at "
        "event 2 (turn 1); it matched only earlier, at event 1 (turn 1)"
    )


def test_missing_step_explains_closest():
    run = conv(user("x"), ev("memory_set", key="card_replace.replacement_reason", value="d"), tool("order_replacement", source="mcp", mcp_server="m"))
    result = check_from_yaml(SEED).evaluate(run)
    assert result.detail.startswith("step 2 of 3 (tool_executed order_replacement (local)) has no match after step 1")
    assert "source was 'mcp', expected 'local'" in result.detail


def test_one_event_never_satisfies_two_steps():
    twice = "- sequencing:\n    - bot_uttered: {text_matches: hello}\n    - bot_uttered: {text_matches: hello}\n"
    check = check_from_yaml(twice)
    assert not check.evaluate(conv(bot("hello there"))).passed
    assert check.evaluate(conv(bot("hello"), bot("hello again"))).passed


def test_earliest_match_each_time():
    check = check_from_yaml(
        "- sequencing:\n    - bot_uttered: {utter_name: a}\n    - tool_executed: {tool_name: t, source: local}\n"
    )
    run = conv(bot("1", "a"), tool("t"), bot("2", "a"))
    assert check.evaluate(run).evidence == (0, 1)


def test_memory_cleared_step_and_block_steps():
    check = check_from_yaml(
        "- sequencing:\n"
        "    - ordered_block_entered: {skill_id: s, block_id: main}\n"
        "    - memory_was_cleared: s.draft\n"
        "    - ordered_block_completed: {skill_id: s, block_id: main, step_id: submit}\n"
    )
    run = conv(
        ev("ordered_block_entered", skill_id="s", block_id="main"),
        ev("memory_cleared", key="s.draft"),
        ev("ordered_block_completed", skill_id="s", block_id="main", step_id="submit"),
    )
    assert check.evaluate(run).passed
    assert not check.evaluate(conv(*reversed(run.raw_events))).passed


def test_memory_step_key_must_match():
    check = check_from_yaml("- sequencing:\n    - memory_was_set: a\n    - memory_was_set: b\n")
    assert check.evaluate(conv(ev("memory_set", key="a", value=1), ev("memory_set", key="b", value=2))).passed
    result = check.evaluate(conv(ev("memory_set", key="b", value=2), ev("memory_set", key="a", value=1)))
    assert not result.passed
    assert "it matched only earlier, at event 0 (turn 0)" in result.detail


@pytest.mark.parametrize(
    "step, reason",
    [
        ("memory_was_not_set: [{name: k}]", "it matches no event"),
        ("bot_did_not_utter: {utter_name: x}", "it matches no event"),
        ("tools_within_one_turn: {allow_extra_calls: true, calls: []}", "it matches a turn, not one event"),
        ("sequencing: []", "sequencing does not nest"),
    ],
)
def test_disallowed_steps(step, reason):
    key = step.split(":")[0]
    assert assertion_error(f"- sequencing:\n    - {step}\n") == f"t.yml:2:7: `{key}` is not allowed inside `sequencing`: {reason}"


@pytest.mark.parametrize("value, what", [("[{name: k}]", "a list"), ("{name: k}", "a mapping")])
def test_memory_step_must_be_a_string(value, what):
    assert assertion_error(f"- sequencing:\n    - memory_was_set: {value}\n") == (
        "t.yml:2:23: inside `sequencing`, `memory_was_set` takes the key name as a string (no list, no value)"
    )


def test_times_not_allowed_in_sequencing():
    assert assertion_error("- sequencing:\n    - tool_executed: {tool_name: t, source: local, times: 1}\n") == (
        "t.yml:2:52: `times` is not allowed inside `sequencing`: each entry there matches one run"
    )


def test_unknown_step_and_empty_list():
    assert assertion_error("- sequencing:\n    - skill_complete: {skill_id: s}\n") == (
        "t.yml:2:7: unknown sequencing step `skill_complete` (did you mean `skill_completed`?)"
    )
    assert assertion_error("- sequencing: []\n") == (
        "t.yml:1:15: `sequencing` (a list of steps) must hold at least one item, got 0"
    )
