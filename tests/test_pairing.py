"""Pairing conversations with one of several scenarios, and judging them so, with and without a judge."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dialogcheck.judging import iter_results
from dialogcheck.checks.base import Outcome
from dialogcheck.errors import LoadError
from dialogcheck.judge.base import JudgeVerdict
from dialogcheck.pairing import ScenarioSet, compile_pair, pair_key
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
