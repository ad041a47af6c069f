"""A crash in a check keeps its exception type and traceback in the result and in run_N.json (an agent's: tests/report/test_html.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from dialogcheck.checks.base import Check, Outcome
from dialogcheck.judging import evaluate
from dialogcheck.results.codec import decode_run, run_document
from dialogcheck.results.model import RunResult, ScenarioInfo
from dialogcheck.scenario.model import Goals, Scenario
from tests.conftest import conv, user


@dataclass(frozen=True)
class Broken(Check):
    key = "broken"

    def evaluate(self, conversation):
        return {}["no such key"]


def test_a_check_that_crashes_is_an_error_with_its_exception_kept():
    result = evaluate(Scenario("s", "S", "c", goals=Goals(assertions=(Broken(),))), conv(user("hi")))
    (assertion,) = result.assertions
    assert assertion.outcome is Outcome.ERROR and assertion.detail == "the check crashed: KeyError: 'no such key'"
    (crash,) = result.crashes
    assert (crash.where, crash.type, crash.message) == ("broken", "KeyError", "'no such key'")
    assert 'return {}["no such key"]' in crash.traceback
    run = RunResult(ScenarioInfo("s", "S", "s.yml"), 1, Outcome.ERROR, conversation=result, crashes=result.crashes)
    document = run_document(run)
    assert document["crashes"][0]["where"] == "broken"
    assert decode_run(json.loads(json.dumps(document)), "run_1.json").crashes == run.crashes
