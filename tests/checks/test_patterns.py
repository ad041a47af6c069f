"""Patterns from files run with a time limit: catastrophic backtracking is an error, never a hang."""

import time

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.patterns import PatternTimeout, search
from dialogcheck.evaluate import evaluate
from dialogcheck.scenario.load import load_scenario
from tests.conftest import bot, conv, tool, user

EVIL = "(a|aa)+$"
LONG = "a" * 5000 + "b"


def test_search_has_python_re_semantics():
    assert search("(?i)replacement", "Your REPLACEMENT is ordered")
    assert not search("^ordered", "it is ordered")
    assert search(r"\d{4}$", "card 4417")


def test_catastrophic_backtracking_times_out_with_a_clear_error():
    started = time.monotonic()
    with pytest.raises(PatternTimeout) as info:
        search(EVIL, LONG, timeout=0.2)
    assert time.monotonic() - started < 5
    assert str(info.value) == (
        "the pattern /(a|aa)+$/ took longer than 0.2 s on a 5,001-character text (it backtracks catastrophically: simplify it)"
    )


def test_every_check_family_with_a_pattern_errors_instead_of_hanging(tmp_path, monkeypatch):
    monkeypatch.setattr("dialogcheck.checks.patterns.SEARCH_TIMEOUT", 0.2)
    path = tmp_path / "evil.yml"
    path.write_text(
        "scenario:\n  name: Evil\n  simulation_context: c\n  goals:\n"
        f"    assertions:\n      - bot_uttered: {{text_matches: '{EVIL}'}}\n"
        "    sop:\n"
        f"      - {{type: confirmation_requested, beforeToolSlug: order, pattern: '{EVIL}'}}\n"
        f"      - {{type: tool_input_contains, toolSlug: order, assertions: {{note: {{op: matches, pattern: '{EVIL}'}}}}}}\n"
    )
    conversation = conv(user("x"), bot(LONG), tool("order", {"note": LONG}))
    started = time.monotonic()
    result = evaluate(load_scenario(path), conversation)
    assert time.monotonic() - started < 10
    assert result.assertions[0].outcome is Outcome.ERROR
    assert result.assertions[0].detail.startswith("the pattern /(a|aa)+$/ took longer than 0.2 s")
    assert [s.outcome for s in result.sop.results] == [Outcome.ERROR, Outcome.ERROR]
    assert result.verdict is Outcome.ERROR


def test_the_regex_engine_takes_partial_and_timeout_as_its_fifth_and_sixth_arguments():
    """`search` passes them by position (cheaper than keywords); a `regex` release that moved them must fail here."""
    import regex

    pattern = regex.compile("abc")
    assert pattern.search("xxab", None, None, None, True).partial
    assert pattern.search("xxab", None, None, None, False, 1.0) is None
    with pytest.raises(TimeoutError):
        regex.compile(EVIL).search(LONG, None, None, None, False, 0.1)
