"""Streaming judgement: results in input order, a bounded window read ahead, the judge used per window."""

from dialogcheck.checks.base import Outcome
from dialogcheck.judge.base import JudgeVerdict
from dialogcheck.judging import iter_results
from dialogcheck.scenario.load import load_scenario
from tests.conftest import FakeJudge, bot, conv, user

SCENARIO = """
scenario:
  name: Says hello
  simulation_context: c
  goals:
    criteria: [The agent is polite]
    assertions:
      - bot_uttered: {text_matches: hello}
"""


def conversations(n, consumed):
    for i in range(n):
        consumed.append(i)
        yield conv(user("hi"), bot("hello" if i % 2 == 0 else "go away"))


def scenario(tmp_path):
    path = tmp_path / "s.yml"
    path.write_text(SCENARIO)
    return load_scenario(path)


def test_without_a_judge_results_stream_one_by_one(tmp_path):
    consumed = []
    results = iter_results(scenario(tmp_path), conversations(1000, consumed), no_judge=True)
    first = next(results)
    assert first.verdict is Outcome.PASS and consumed == [0]
    rest = list(results)
    assert len(rest) == 999 and [r.verdict for r in rest[:2]] == [Outcome.FAIL, Outcome.PASS]


def test_with_a_judge_a_window_is_read_ahead_and_order_is_kept(tmp_path):
    consumed = []
    judge = FakeJudge(JudgeVerdict(True, "polite"))
    results = iter_results(scenario(tmp_path), conversations(25, consumed), judge=judge, window=10)
    first = next(results)
    assert len(consumed) == 10  # one window, not the whole input
    assert first.criteria[0].outcome is Outcome.PASS
    verdicts = [first.verdict] + [r.verdict for r in results]
    assert verdicts == [Outcome.PASS if i % 2 == 0 else Outcome.FAIL for i in range(25)]
    assert len(judge.requests) == 25
