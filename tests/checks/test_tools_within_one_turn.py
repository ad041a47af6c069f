"""`tools_within_one_turn`: exact matching (not greedy), order, extras, framework tools, turns."""

from tests.conftest import assertion_error, check_from_yaml, conv, tool, user

SEED = """
- tools_within_one_turn:
    ordered: true
    allow_extra_calls: false
    calls:
      - tool_executed:
          tool_name: check_balance
          source: local
      - tool_executed:
          tool_name: order_replacement
          source: local
"""


def within(calls: str, allow_extra: bool = False, ordered: bool | None = None):
    order = f"\n    ordered: {str(ordered).lower()}" if ordered is not None else ""
    return check_from_yaml(
        f"- tools_within_one_turn:\n    allow_extra_calls: {str(allow_extra).lower()}{order}\n    calls:\n{calls}"
    )


TWO = """      - tool_executed: {tool_name: a, source: local}
      - tool_executed: {tool_name: b, source: local}
"""


def test_seed_example_passes_in_order_in_one_turn():
    run = conv(user("replace my card"), tool("check_balance"), tool("order_replacement"))
    result = check_from_yaml(SEED).evaluate(run)
    assert result.passed
    assert result.detail == "turn 1 holds check_balance at event 1, order_replacement at event 2"
    assert result.evidence == (1, 2)


def test_seed_example_fails_when_split_across_turns():
    run = conv(user("replace"), tool("check_balance"), user("yes"), tool("order_replacement"))
    result = check_from_yaml(SEED).evaluate(run)
    assert not result.passed
    assert result.detail == (
        "no turn holds all 2 calls in the listed order; closest: turn 1 matched 1 of 2, lacking "
        "order_replacement (local); its counted runs: check_balance (event 1)"
    )


def test_ordered_rejects_reverse_order_unordered_accepts_it():
    run = conv(user("x"), tool("b"), tool("a"))
    assert not within(TWO, ordered=True).evaluate(run).passed
    assert within(TWO, ordered=False).evaluate(run).passed
    assert within(TWO).evaluate(run).passed  # ordered defaults to false


def test_extra_calls_fail_unless_allowed():
    run = conv(user("x"), tool("a"), tool("lookup"), tool("b"))
    result = within(TWO).evaluate(run)
    assert not result.passed
    assert result.detail == (
        "no turn holds all 2 calls; closest: turn 1 holds every call but also extra counted runs "
        "(lookup at event 2) and allow_extra_calls is false"
    )
    assert within(TWO, allow_extra=True).evaluate(run).passed


def test_framework_tools_neither_satisfy_nor_count_as_extra():
    run = conv(user("x"), tool("a"), tool("complete_skill"), tool("set_fields"), tool("listen"), tool("b"), tool("hangup"))
    assert within(TWO).evaluate(run).passed


def test_search_knowledge_and_cannot_help_are_counted():
    for name in ("search_knowledge", "cannot_help"):
        run = conv(user("x"), tool("a"), tool(name), tool("b"))
        assert not within(TWO).evaluate(run).passed, name


def test_each_run_counts_toward_one_call_only():
    same_twice = """      - tool_executed: {tool_name: a, source: local}
      - tool_executed: {tool_name: a, source: local}
"""
    assert not within(same_twice).evaluate(conv(user("x"), tool("a"))).passed
    assert within(same_twice).evaluate(conv(user("x"), tool("a"), tool("a"))).passed


def test_exact_matching_beats_greedy_assignment():
    # Call 1 accepts any `a`; call 2 only the `a` with shipping express. A greedy pass would give the
    # express run to call 1 (it comes first) and then find nothing for call 2.
    calls = """      - tool_executed: {tool_name: a, source: local}
      - tool_executed: {tool_name: a, source: local, arguments: {shipping: express}}
"""
    run = conv(user("x"), tool("a", {"shipping": "express"}), tool("a", {"shipping": "standard"}))
    result = within(calls).evaluate(run)
    assert result.passed
    assert result.detail == "turn 1 holds a at event 2, a at event 1"


def test_exact_matching_ordered_with_overlap():
    calls = """      - tool_executed: {tool_name: a, source: local}
      - tool_executed: {tool_name: a, source: local, arguments: {k: 2}}
"""
    run = conv(user("x"), tool("a", {"k": 2}), tool("a", {"k": 1}), tool("a", {"k": 2}))
    assert within(calls, allow_extra=True, ordered=True).evaluate(run).passed
    assert not within(calls, allow_extra=False, ordered=True).evaluate(run).passed


def test_turn_zero_and_session_start():
    run = conv(user("/session_start"), tool("a"), tool("b"), user("hi"), tool("a"))
    result = within(TWO).evaluate(run)
    assert result.passed and result.detail.startswith("turn 0 holds")


def test_no_counted_runs():
    result = within(TWO).evaluate(conv(user("x"), tool("complete_skill")))
    assert not result.passed
    assert result.detail == "no counted tool run was recorded in any turn"


def test_closest_turn_is_the_one_with_most_matches():
    run = conv(user("1"), tool("z"), user("2"), tool("a"), tool("z"), user("3"), tool("b"))
    result = within(TWO, allow_extra=True).evaluate(run)
    assert "closest: turn 2 matched 1 of 2, lacking b (local)" in result.detail


def test_call_fields_are_matched_fully():
    calls = """      - tool_executed: {tool_name: a, source: mcp, mcp_server: bank}
      - tool_executed: {tool_name: b, source: local, is_error: false}
"""
    good = conv(user("x"), tool("a", source="mcp", mcp_server="bank"), tool("b"))
    assert within(calls).evaluate(good).passed
    bad = conv(user("x"), tool("a", source="mcp", mcp_server="bank"), tool("b", is_error=True))
    assert not within(calls).evaluate(bad).passed


def test_load_errors():
    one_call = "      - tool_executed: {tool_name: a, source: local}\n"
    assert assertion_error(f"- tools_within_one_turn:\n    allow_extra_calls: false\n    calls:\n{one_call}") == (
        "t.yml:4:7: `calls` in `tools_within_one_turn` must hold at least 2 items, got 1"
    )
    assert assertion_error(f"- tools_within_one_turn:\n    calls:\n{TWO}") == (
        "t.yml:2:5: `tools_within_one_turn` is missing required field `allow_extra_calls`"
    )
    framework = "      - tool_executed: {tool_name: a, source: local}\n      - tool_executed: {tool_name: hangup, source: local}\n"
    assert assertion_error(f"- tools_within_one_turn:\n    allow_extra_calls: true\n    calls:\n{framework}") == (
        "t.yml:5:36: `hangup` is a framework tool: it is never counted, so `tools_within_one_turn` could never match it"
        " (an agent that owns a tool of this name sets `framework_tools` in eval/conftest.yml)"
    )
    times = "      - tool_executed: {tool_name: a, source: local, times: 1}\n      - tool_executed: {tool_name: b, source: local}\n"
    assert assertion_error(f"- tools_within_one_turn:\n    allow_extra_calls: true\n    calls:\n{times}") == (
        "t.yml:4:54: `times` is not allowed inside `tools_within_one_turn`: each entry there matches one run"
    )
    wrong = "      - skill_completed: {skill_id: s}\n      - tool_executed: {tool_name: b, source: local}\n"
    assert assertion_error(f"- tools_within_one_turn:\n    allow_extra_calls: true\n    calls:\n{wrong}") == (
        "t.yml:4:9: each call of `tools_within_one_turn` is a `tool_executed` entry, got `skill_completed`"
    )
