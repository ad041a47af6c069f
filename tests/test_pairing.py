"""Pairing conversations with one of several scenarios, and judging them so, with and without a judge."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from dialogcheck.checks import patterns
from dialogcheck.checks.base import Outcome
from dialogcheck.errors import LoadError
from dialogcheck.judge.base import JudgeVerdict
from dialogcheck.judging import iter_results
from dialogcheck.pairing import PairError, ScenarioSet, compile_pair, pair_key
from dialogcheck.scenario.load import load_scenario
from tests.conftest import FakeJudge, bot, conv, user

SCENARIO = """
scenario:
  name: {name}
  simulation_context: c
  goals:
    criteria: [{criterion}]
    assertions:
      - bot_uttered: {{text_matches: {word}}}
"""


def scenarios(tmp_path):
    loaded = []
    for slug, word in (("task-7", "hello"), ("task-17", "goodbye")):
        path = tmp_path / f"{slug}.yml"
        path.write_text(SCENARIO.format(name=f"Says {word}", criterion=f"It says {word}", word=word))
        loaded.append(load_scenario(path))
    return loaded


def test_keys_are_compared_whole():
    pattern = compile_pair(r"task-(\d+)")
    assert [pair_key(pattern, name) for name in ("task-7-trial-2", "tau-bench-task-17", "no key")] == ["7", "17", None]
    with pytest.raises(ValueError, match="exactly one capturing group"):
        compile_pair(r"(task)-(\d+)")


def test_by_name_or_by_key(tmp_path):
    several = ScenarioSet.of(scenarios(tmp_path), compile_pair(r"task-(\d+)"))
    named = replace(conv(user("hi"), bot("hello")), scenario="task-17", conversation_id="task-7-trial-0")
    assert several.scenario_of(named).slug == "task-17"  # the record's own name comes first
    by_key = replace(conv(user("hi")), conversation_id="task-7-trial-3")
    assert several.scenario_of(by_key).slug == "task-7"
    stray = replace(conv(user("hi")), conversation_id="task-8-trial-0", place=("logs.jsonl", 12))
    with pytest.raises(LoadError) as err:
        several.scenario_of(stray)
    assert str(err.value) == (
        "logs.jsonl:12:1: no scenario for conversation task-8-trial-0: its id `task-8-trial-0` gives the key `8` (--pair /task-(\\d+)/),"
        " and no scenario's slug does"
    )


def test_with_a_judge_each_conversation_is_asked_its_own_criteria(tmp_path):
    several = ScenarioSet.of(scenarios(tmp_path), compile_pair(r"task-(\d+)"))
    judge = FakeJudge(verdict=JudgeVerdict(True, "fine"))
    talks = [
        replace(conv(user("hi"), bot("hello")), conversation_id="task-7-trial-0"),
        replace(conv(user("hi"), bot("hello")), conversation_id="task-17-trial-0"),
    ]
    results = list(iter_results(several, talks, judge=judge))
    assert [(r.scenario, r.subject, r.verdict) for r in results] == [("task-7", "Says hello", Outcome.PASS), ("task-17", "Says goodbye", Outcome.FAIL)]
    assert sorted(request.criterion for _, request in judge.requests) == ["It says goodbye", "It says hello"]


def test_a_conversation_without_a_scenario_stops_before_its_window_is_judged(tmp_path):
    several = ScenarioSet.of(scenarios(tmp_path), compile_pair(r"task-(\d+)"))
    judge = FakeJudge(verdict=JudgeVerdict(True, "fine"))
    talks = [replace(conv(user("hi")), conversation_id=cid) for cid in ("task-7-a", "task-17-b", "unpaired")]
    with pytest.raises(LoadError, match="no scenario for conversation unpaired"):
        list(iter_results(several, talks, judge=judge))
    assert judge.requests == []  # paired as read: nothing was sent to the judge



#: Patterns that backtrack catastrophically in the engine, each with a name it takes far more than a second on.
CATASTROPHIC = [
    (r"(a+)+$", "a" * 5000 + "!"),
    (r"(a|aa)+$", "a" * 40 + "!"),
    (r"(a|a)+$", "a" * 40 + "!"),
    (r"task-(?:a|aa)+(\d*)$", "task-" + "a" * 40 + "!"),
]


@pytest.fixture
def short_budget(monkeypatch):
    """A fifth of the budget, so the tests that run out of it are quick (what runs out of 0.2 s runs out of 1 s)."""
    monkeypatch.setattr(patterns, "CHECK_BUDGET", 0.2)


@pytest.mark.usefixtures("short_budget")
@pytest.mark.parametrize("pattern, name", CATASTROPHIC)
def test_a_pattern_that_backtracks_catastrophically_on_a_name_is_an_error_not_a_hang(pattern, name):
    compiled = compile_pair(pattern)
    with pytest.raises(PairError) as err:
        pair_key(compiled, name)
    assert str(err.value) == (
        f"/{pattern}/ ran out of its 0.2 s for searching `{name if len(name) <= 80 else name[:79] + '…'}` ({len(name):,} characters):"
        " it backtracks catastrophically: simplify it"
    )
    assert pair_key(compiled, name[:-1].replace("a" * 30, "", 1)) is not None  # a name it can search is paired as before


def test_a_pattern_past_the_engines_bounds_is_refused_when_compiled():
    with pytest.raises(PairError, match=r"^too large a regular expression: a repeat count of 5,000 is more than the limit of 1,000$"):
        compile_pair(r"(x{5000})")
    with pytest.raises(PairError, match=r"^too large a regular expression: the pattern is 1,003 characters long"):
        compile_pair("(" + "x" * 1001 + ")")
    with pytest.raises(PairError, match=r"^not a valid regular expression: missing \) at position 6$"):
        compile_pair("task-(")


@pytest.mark.usefixtures("short_budget")
def test_a_pattern_compiled_by_re_is_compiled_again_within_the_bounds_with_its_flags():
    folded = compile_pair(re.compile(r"TASK-(\d+)", re.IGNORECASE))
    assert folded.pattern == r"(?i)TASK-(\d+)" and pair_key(folded, "task-7-trial-2") == "7"
    assert pair_key(compile_pair(re.compile(r"task-(\d+)")), "task-7") == "7"
    with pytest.raises(PairError, match="ran out of its 0.2 s"):
        pair_key(compile_pair(re.compile(r"(a|aa)+$")), "a" * 40 + "!")


@pytest.mark.usefixtures("short_budget")
def test_a_slug_or_an_id_the_pattern_runs_out_of_time_on_is_bad_input_where_it_is(tmp_path):
    slow = "a" * 40 + "!"
    path = tmp_path / f"{slow}.yml"
    path.write_text(SCENARIO.format(name="Slow", criterion="c", word="hello"))
    with pytest.raises(LoadError) as err:
        ScenarioSet.of([load_scenario(path)], compile_pair(r"(a|aa)+$"))
    assert str(err.value) == (
        f"{path}:1:1: --pair /(a|aa)+$/ ran out of its 0.2 s for searching `{slow}` (41 characters):"
        " it backtracks catastrophically: simplify it (the slug of this scenario)"
    )
    several = ScenarioSet.of(scenarios(tmp_path), compile_pair(r"(a|aa)+$"))  # `task-7` and `task-17` give no key
    stray = replace(conv(user("hi")), conversation_id=slow, place=("logs.jsonl", 12))
    with pytest.raises(LoadError) as err:
        several.scenario_of(stray)
    assert str(err.value) == (
        f"logs.jsonl:12:1: no scenario for conversation {slow}: --pair /(a|aa)+$/ ran out of its 0.2 s for searching `{slow}`"
        " (41 characters): it backtracks catastrophically: simplify it (its id)"
    )
