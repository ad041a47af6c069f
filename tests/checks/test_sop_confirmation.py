"""SOP `confirmation_requested`: the turn window, its edges, and skip when never called."""

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.sop_confirmation import ConfirmationRequested
from tests.conftest import bot, conv, tool, user
from tests.sop.conftest import evaluator

ASK = "Shall I order a replacement card?"
PATTERN = r"(?i)shall I|confirm|do you want"


def check(window=4):
    return ConfirmationRequested("order_replacement", pattern=PATTERN, within_last_n_turns=window)


def asked_turns_back(back, window=4):
    """A conversation where the bot asks in turn 1 and the order runs `back` turns later."""
    events = [user("my card broke"), bot(ASK)]
    events += [user(f"filler {i}") for i in range(back)]
    events.append(tool("order_replacement", {"card_id": "c1"}))
    return check(window).evaluate(conv(*events))


def test_same_turn_confirmation_passes():
    result = asked_turns_back(0)
    assert result.outcome is Outcome.PASS
    assert result.detail == (
        "order_replacement at event 2 (turn 1) after the bot asked at event 1 (turn 1): 'Shall I order a replacement card?'"
    )
    assert result.evidence == (1, 2)


@pytest.mark.parametrize("window", [1, 2, 4, 6])
def test_window_edges(window):
    # the window is the call's turn and the window-1 turns before it
    assert asked_turns_back(window - 1, window).outcome is Outcome.PASS
    assert asked_turns_back(window, window).outcome is Outcome.FAIL


def test_default_window_is_four_turns():
    assert ConfirmationRequested("order_replacement", pattern=PATTERN).within_last_n_turns == 4
    assert asked_turns_back(3).passed
    result = asked_turns_back(4)
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "order_replacement at event 6 (turn 5): no bot message before it in turns 2-5 matched "
        "/(?i)shall I|confirm|do you want/ (there was no bot message in that window)"
    )
    assert result.evidence == (6,)


def test_a_message_after_the_call_does_not_count():
    c = conv(user("my card broke"), tool("order_replacement"), bot(ASK))
    result = check().evaluate(c)
    assert result.outcome is Outcome.FAIL
    assert result.detail == (
        "order_replacement at event 1 (turn 1): no bot message before it in turns 0-1 matched "
        "/(?i)shall I|confirm|do you want/ (there was no bot message in that window)"
    )


def test_a_non_matching_message_is_named():
    c = conv(user("my card broke"), bot("Ordering it now."), tool("order_replacement"))
    result = check(1).evaluate(c)
    assert result.detail == (
        "order_replacement at event 2 (turn 1): no bot message before it in turn 1 matched "
        "/(?i)shall I|confirm|do you want/ (1 bot message looked at; the last, at event 1 (turn 1), said 'Ordering it now.')"
    )


def test_turn_zero_counts():
    c = conv(bot("Do you want a new card?"), user("yes"), tool("order_replacement"))
    assert check(2).evaluate(c).passed
    assert not check(1).evaluate(c).passed


def test_every_call_needs_its_own_confirmation():
    c = conv(
        user("hi"), bot(ASK), user("yes"), tool("order_replacement"),
        user("another one"), user("now"), user("please"), user("go"), tool("order_replacement"),
    )
    result = check(2).evaluate(c)
    assert result.outcome is Outcome.FAIL
    assert result.detail.startswith("order_replacement at event 8 (turn 6): no bot message")
    assert result.evidence == (8,)


def test_the_pattern_is_case_sensitive_unless_it_says_otherwise():
    c = conv(user("hi"), bot("SHALL I order it?"), tool("order_replacement"))
    assert not ConfirmationRequested("order_replacement", pattern="shall I").evaluate(c).passed
    assert ConfirmationRequested("order_replacement", pattern="(?i)shall I").evaluate(c).passed


def test_never_called_is_skip():
    result = check().evaluate(conv(user("hi"), bot(ASK), tool("lookup_card")))
    assert result.outcome is Outcome.SKIP
    assert result.detail == "`order_replacement` was never called, so no confirmation was needed"


def test_framework_tools_are_not_calls():
    check = ConfirmationRequested("hangup", pattern=".")
    assert check.evaluate(conv(user("hi"), tool("hangup"))).outcome is Outcome.SKIP


def test_catalog():
    c = conv(user("hi"), tool("order_replacement", source="mcp", mcp_server="cards"))
    assert ConfirmationRequested("order_replacement", "banking", pattern=".").evaluate(c).outcome is Outcome.SKIP
    assert ConfirmationRequested("order_replacement", "cards", pattern=".").evaluate(c).outcome is Outcome.FAIL


def test_from_yaml():
    parsed = evaluator(
        """
        type: confirmation_requested
        beforeToolSlug: order_replacement
        pattern: '(?i)shall I|confirm|do you want'
        withinLastNTurns: 2
        """
    )
    assert parsed == check(2)
    default = evaluator("{type: confirmation_requested, beforeToolSlug: x, pattern: ok}")
    assert default.within_last_n_turns == 4
