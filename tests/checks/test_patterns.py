"""Patterns from files: bounded when compiled, and one time budget per check of a conversation.

Catastrophic backtracking is an error naming the pattern, never a hang; a pattern that would
take gigabytes to compile (or recurse past Python's limit) is a load error naming the limit.
"""

import pickle
import sys
import time

import pytest
from hypothesis import given, settings, strategies as st

from dialogcheck.checks import patterns
from dialogcheck.checks.base import Outcome
from dialogcheck.checks.patterns import (
    MAX_NESTING,
    MAX_PARTS,
    MAX_PATTERN_CHARS,
    MAX_REPEAT,
    PatternError,
    PatternTimeout,
    PatternTooLarge,
    compile_pattern,
    search,
)
from dialogcheck.judging import evaluate
from dialogcheck.scenario.load import load_scenario
from tests.conftest import bot, conv, tool, user

EVIL = "(a|aa)+$"
LONG = "a" * 5000 + "b"


def test_search_has_python_re_semantics():
    assert search("(?i)replacement", "Your REPLACEMENT is ordered")
    assert not search("^ordered", "it is ordered")
    assert search(r"\d{4}$", "card 4417")


def test_catastrophic_backtracking_times_out_with_a_clear_error(monkeypatch):
    monkeypatch.setattr(patterns, "CHECK_BUDGET", 0.2)
    started = time.process_time()  # CPU time: a loaded machine stretches the wall clock, not this
    with pytest.raises(PatternTimeout) as info:
        search(EVIL, LONG)
    assert time.process_time() - started < 2  # the search alone would run for ages
    assert str(info.value) == (
        "the pattern /(a|aa)+$/ ran out of the check's 0.2 s for searching (1 search, the last on a 5,001-character text):"
        " it backtracks catastrophically: simplify it"
    )


SCENARIO = (
    "scenario:\n  name: Evil\n  simulation_context: c\n  goals:\n"
    "    assertions:\n      - bot_uttered: {{text_matches: '{p}'}}\n      - bot_did_not_utter: {{text_matches: '{p}'}}\n"
    "      - sequencing: [{{bot_uttered: {{text_matches: '{p}'}}}}]\n"
    "    sop:\n"
    "      - {{type: confirmation_requested, beforeToolSlug: order, pattern: '{p}'}}\n"
    "      - {{type: tool_input_contains, toolSlug: order, assertions: {{note: {{op: matches, pattern: '{p}'}}}}}}\n"
)


def test_every_check_family_with_a_pattern_errors_instead_of_hanging(tmp_path, monkeypatch):
    monkeypatch.setattr(patterns, "CHECK_BUDGET", 0.2)
    path = tmp_path / "evil.yml"
    path.write_text(SCENARIO.format(p=EVIL))
    conversation = conv(user("x"), bot(LONG), tool("order", {"note": LONG}))
    started = time.process_time()
    result = evaluate(load_scenario(path), conversation)
    assert time.process_time() - started < 5  # five checks of at most 0.2 s of searching each, and their loading
    assert [r.outcome for r in result.assertions] == [Outcome.ERROR] * 3
    assert all(r.detail.startswith("the pattern /(a|aa)+$/ ran out of the check's 0.2 s for searching") for r in result.assertions)
    assert [s.outcome for s in result.sop.results] == [Outcome.ERROR, Outcome.ERROR]
    assert result.verdict is Outcome.ERROR


def _slow_text(pattern: str, seconds: float) -> str:
    """The shortest `a...ab` on which one search of `pattern` takes at least `seconds` of CPU, but finishes."""
    import regex

    compiled = regex.compile(pattern)
    for length in range(12, 40):
        text = "a" * length + "b"
        started = time.process_time()
        compiled.search(text)
        if time.process_time() - started >= seconds:
            return text
    raise AssertionError("no text slow enough")


def test_one_budget_for_all_the_searches_of_a_check_however_many_messages(tmp_path, monkeypatch):
    """40 bot messages, each search slow but under any per-search limit: one budget per check, not one per search.

    Before, each search had a second of its own, so such a check took 40 searches' time (22 s on this
    machine with 0.25 s searches) and then failed; now it stops when its budget is spent, an `error`.
    """
    monkeypatch.setattr(patterns, "CHECK_BUDGET", 0.3)
    slow = _slow_text(EVIL, 0.02)
    path = tmp_path / "evil.yml"
    path.write_text(SCENARIO.format(p=EVIL))
    events = [user("x")]
    for _ in range(40):
        events += [bot(slow), tool("order", {"note": slow})]
    conversation = conv(*events)
    started = time.process_time()
    result = evaluate(load_scenario(path), conversation)
    spent = time.process_time() - started
    outcomes = [r.outcome for r in result.assertions] + [s.outcome for s in result.sop.results]
    assert outcomes == [Outcome.ERROR] * 5, [r.detail for r in result.assertions]
    assert "searches, the last on a" in result.assertions[0].detail
    # Each check stops at its budget (an error, above, where every search finishing would make it fail): never a hang.
    # In CPU time, which a loaded machine does not stretch: a check's searches use at most its budget of it; had
    # each search its own, the five checks would take 5 x 40 searches of at least 0.02 s, 4 s.
    assert spent < 5 * 0.3 * 2, spent


class _Clock:
    """A clock for the pattern module: every reading is `step` seconds after the last."""

    def __init__(self, step: float):
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_the_budget_is_shared_by_the_searches_of_one_check_and_fresh_for_the_next(monkeypatch):
    from dialogcheck.checks.running import run_check
    from tests.conftest import check_from_yaml

    monkeypatch.setattr(patterns, "process_time", _Clock(0.1))  # each search starts 0.1 s after the one before
    check = check_from_yaml("bot_uttered: {text_matches: never}")
    long = conv(user("x"), *[bot(f"message {i}") for i in range(40)])
    first = run_check(check, long)
    assert first.outcome is Outcome.ERROR  # the 11th search finds the 1 s budget spent
    assert first.detail == (
        "the pattern /never/ ran out of the check's 1 s for searching (11 searches, the last on a 10-character text):"
        " it backtracks catastrophically: simplify it"
    )
    short = conv(user("x"), *[bot(f"message {i}") for i in range(3)])
    result = run_check(check, short)  # a new evaluation, a new budget: its 7 searches fit
    assert result.outcome is Outcome.FAIL, result.detail


@pytest.mark.parametrize(
    ("pattern", "plain"),
    [
        ("(?i)user id", True),
        ("as an AI language model", True),
        (r"order\.", True),
        ("(?x) user id", True),
        ("(?i)user(?-i) ID", True),
        ("", True),
        (EVIL, False),
        ("a+", False),
        ("confirm|proceed", False),
        ("^ordered", False),
        ("[ab]c", False),
        ("a.c", False),
        (r"\bid\b", False),
        ("(?:ab)", False),
        ("(?:ab){e<=1}", False),
        (r"(a)\1", False),
    ],
)
def test_only_characters_in_a_row_are_plain(pattern, plain):
    """Plain patterns are searched without the engine's time limit: nothing else may be taken for one."""
    assert patterns.is_plain(pattern) is plain


def test_a_plain_pattern_still_finds_its_check_budget_spent(monkeypatch):
    from dialogcheck.checks.running import run_check
    from tests.conftest import check_from_yaml

    monkeypatch.setattr(patterns, "process_time", _Clock(0.3))
    check = check_from_yaml("bot_did_not_utter: {text_matches: '(?i)as an ai'}")
    result = run_check(check, conv(user("x"), *[bot(f"message {i}") for i in range(10)]))
    assert result.outcome is Outcome.ERROR
    assert result.detail == (  # the 5th search starts 1.2 s after the first
        "the pattern /(?i)as an ai/ ran out of the check's 1 s for searching (5 searches, the last on a 9-character text):"
        " it backtracks catastrophically: simplify it"
    )


def test_a_search_outside_a_check_has_a_budget_of_its_own(monkeypatch):
    monkeypatch.setattr(patterns, "process_time", _Clock(0.1))
    assert all(search("a", "a") for _ in range(100))


@pytest.mark.parametrize(
    ("pattern", "joinable"),
    [
        ("(?i)user id", True),
        ("a", True),
        ("(?x) user id", True),
        ("[^a]", False),  # a negated character: it would match the separator between two texts
        (r"a\x00b", False),  # the separator itself
        ("", False),  # no character: it matches at the separator too
        ("a+", False),  # not plain
        ("^a", False),
    ],
)
def test_only_patterns_no_match_of_which_spans_two_texts_search_them_joined(pattern, joinable):
    assert patterns.prepared(pattern).joinable is joinable


JOIN_PATTERNS = ["(?i)user id", "a", "ab", "[^a]", r"a\x00b", "", "^a", "a$", "(?i)K", "(?r)ab"]
JOIN_TEXTS = st.lists(st.text(alphabet="ab \x00Kk\u212a", max_size=6), max_size=6)


@settings(max_examples=300)
@given(st.sampled_from(JOIN_PATTERNS), JOIN_TEXTS)
def test_texts_searched_at_once_are_found_as_each_alone(pattern, texts):
    prepared = patterns.prepared(pattern)
    assert prepared.found_in(texts) == [prepared.found(text) for text in texts] == [search(pattern, text) for text in texts]


def test_texts_searched_at_once_spend_one_search_of_the_budget(monkeypatch):
    from dialogcheck.checks.running import run_check
    from tests.conftest import check_from_yaml

    monkeypatch.setattr(patterns, "process_time", _Clock(0.3))
    check = check_from_yaml("bot_uttered: {utter_name: utter_ask, text_matches: '(?i)user id'}")
    result = run_check(check, conv(user("x"), *[bot(f"message {i}", utter="utter_other") for i in range(4)]))
    # No search while looking for a match (no message has the name), one for the four texts ranked at once, one for
    # the closest one's explanation. Searched one at a time, the fifth search would find the budget spent.
    assert result.outcome is Outcome.FAIL, result.detail
    assert result.detail.endswith("does not match /(?i)user id/")


def test_a_pattern_travels_to_a_worker_as_its_text():
    prepared = patterns.prepared("(?i)user id")
    again = pickle.loads(pickle.dumps(prepared))
    assert (again.source, again.plain, again.joinable, again.found("USER ID")) == ("(?i)user id", True, True, True)


# --- compiling, bounded ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{1000000000}", "a repeat count of 1,000,000,000 is more than the limit of 1,000"),
        ("x{0,5000}", "a repeat count of 5,000 is more than the limit of 1,000"),
        ("(?:ab){1001,}", "a repeat count of 1,001 is more than the limit of 1,000"),
        ("(?:(?:a{100}){100}){100}", "its repeats copy it to 1,020,202 parts, more than the limit of 10,000 (counts of nested repeats multiply)"),
        ("a" * 1001, "the pattern is 1,001 characters long, more than the limit of 1,000"),
        ("(" * 51 + "a" + ")" * 51, "groups, repeats and lookarounds nest more than 50 levels deep (the limit)"),
        ("(" * 450 + ")" * 450, "groups nest more than 50 levels deep (the limit)"),  # deeper than the engine's parser recurses
        # Read as the engine reads them: verbose mode (spaces and comments inside a count) and a flag set mid-pattern.
        ("(?x) a{1 000 000}", "a repeat count of 1,000,000 is more than the limit of 1,000"),
        ("(?x)#[\na{100000}", "a repeat count of 100,000 is more than the limit of 1,000"),
        ("a(?x)b{2 000}", "a repeat count of 2,000 is more than the limit of 1,000"),
    ],
)
def test_a_pattern_past_a_limit_is_refused_naming_it(pattern, message):
    with pytest.raises(PatternTooLarge) as info:
        compile_pattern(pattern)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "pattern",
    [
        r"\d{4}",
        ".{0,1000}",
        "x{1000}" * 9,
        "(" * 50 + "a" + ")" * 50,
        "a" * 1000,
        "(?:(?:ab){50}){50}",
        "[(]{1000}",  # a parenthesis inside a set opens nothing
        r"(?#a{1000000})\d",  # nor does a count inside a comment
        "(?i)(shall I|would you like|do you want)( me)? to (order|send|replace)",
    ],
)
def test_patterns_within_the_limits_compile(pattern):
    assert compile_pattern(pattern).search is not None


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(unclosed", "missing ) at position 9"),
        # The engine raises ValueError, not its own error, for these: once a traceback in `validate`.
        ("(?V0V1)a", "VERSION0 and VERSION1 flags are mutually incompatible"),
        ("(?a)(?u)x", "ASCII, LOCALE and UNICODE flags are mutually incompatible"),
    ],
)
def test_an_invalid_pattern_keeps_the_engines_own_words(pattern, message):
    with pytest.raises(PatternError) as info:
        compile_pattern(pattern)
    assert not isinstance(info.value, PatternTooLarge)
    assert str(info.value) == message


def test_the_limits_are_the_documented_ones():
    assert (MAX_PATTERN_CHARS, MAX_REPEAT, MAX_NESTING, MAX_PARTS, patterns.CHECK_BUDGET) == (1_000, 1_000, 50, 10_000, 1.0)


def test_the_engine_parser_this_module_reads_is_there():
    """`check_bounds` reads the engine's own parse tree: a `regex` release that renamed these must fail here."""
    from regex import _regex_core as core

    for name in ("Source", "Info", "_parse_pattern", "_UnscopedFlagSet", "VERBOSE", "UNICODE", "RegexBase", "Sequence", "Branch", "Character"):
        assert hasattr(core, name), name
    tree = patterns._parse("(?:ab){3,5}c")
    repeat = patterns._children(tree)[0]
    assert (repeat.min_count, repeat.max_count) == (3, 5)


def test_the_limits_bound_the_memory_of_compiling_in_a_real_process(tmp_path):
    """The largest accepted patterns compile in little memory, and a refused one takes none (it once took 11.5 GB)."""
    from tests.reliability.figures import measure

    script = tmp_path / "compile.py"
    script.write_text(
        "from dialogcheck.checks.patterns import compile_pattern, PatternTooLarge\n"
        "for i in range(128):\n"
        "    compile_pattern('(?:[ab]|c%d){1000}' % (i % 10) + 'x' * (i // 10) + 'y{999}')\n"
        "try:\n"
        "    compile_pattern('a{1000000000}')\n"
        "except PatternTooLarge:\n"
        "    print('refused')\n"
    )
    done = measure([sys.executable, str(script)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "refused\n"
    assert done.peak_rss_mb < 400, done.peak_rss_mb


def test_time_the_machine_gives_other_processes_spends_none_of_a_check_budget(monkeypatch):
    """On a loaded machine wall-clock time passes between two searches while this process waits for a core: the
    budget is CPU time, so a check of many plain searches is judged the same there as on an idle machine."""
    from dialogcheck.checks.running import run_check
    from tests.conftest import check_from_yaml

    monkeypatch.setattr(patterns, "monotonic", _Clock(0.3), raising=False)  # each reading 0.3 s of waiting later
    check = check_from_yaml("bot_did_not_utter: {text_matches: '(?i)as an ai'}")
    result = run_check(check, conv(user("x"), *[bot(f"message {i}") for i in range(10)]))
    assert result.outcome is Outcome.PASS, result.detail
