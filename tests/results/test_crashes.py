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


def test_a_judge_that_crashes_and_an_sop_step_that_crashes_keep_their_exceptions():
    import pickle

    from dialogcheck.sop.model import Step, StepSet
    from tests.conftest import FakeJudge

    steps = StepSet((Step("b", None, True, 1.0, Broken()),))
    scenario = Scenario("s", "S", "c", goals=Goals(criteria=("The agent is polite",), sop=steps))
    result = evaluate(scenario, conv(user("hi")), judge=FakeJudge(error=RuntimeError("the judge broke")))
    assert result.criteria[0].detail == "judge crashed: RuntimeError: the judge broke"
    assert result.sop.results[0].result.detail == "the check crashed: KeyError: 'no such key'"
    assert [(c.where, c.type) for c in result.crashes] == [("broken", "KeyError"), ("criterion 'The agent is polite'", "RuntimeError")]
    assert "raise self.error" in result.crashes[1].traceback  # where the fake judge raised it
    assert all(r.exception is None for r in (*result.criteria, *(s.result for s in result.sop.results)))  # plain data now
    assert pickle.loads(pickle.dumps(result)) == result  # it travels between processes
