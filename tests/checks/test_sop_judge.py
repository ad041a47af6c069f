"""SOP `llm_judge`: error without a judge, skip with --no-judge, judge answers and errors kept as data."""

import asyncio

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.judged import NO_JUDGE_REASON, NO_JUDGE_SKIP, JudgeRequest, unjudged
from dialogcheck.checks.sop_judge import LlmJudge
from dialogcheck.judge.base import JudgeError, JudgeVerdict, judge_one
from tests.conftest import FakeJudge, bot, conv, user
from tests.sop.conftest import evaluator

CONVERSATION = conv(user("hi"), bot("hello"))


def judged(check: LlmJudge, judge) -> object:
    return check.judged(asyncio.run(judge_one(judge, CONVERSATION, check.request())))


def test_plain_evaluate_is_an_error_never_a_pass():
    result = LlmJudge("Agent greets").evaluate(CONVERSATION)
    assert result.outcome is Outcome.ERROR
    assert result.detail == NO_JUDGE_REASON


def test_unjudged_is_error_or_skip():
    check = LlmJudge("Agent greets")
    assert (check.judged(unjudged(False)).outcome, check.judged(unjudged(False)).detail) == (Outcome.ERROR, NO_JUDGE_REASON)
    assert (check.judged(unjudged(True)).outcome, check.judged(unjudged(True)).detail) == (Outcome.SKIP, NO_JUDGE_SKIP)


def test_pass_and_fail_carry_the_reasoning_and_send_the_request():
    check = LlmJudge("Agent greets", rubric="PASS if it says hello", model="small")
    judge = FakeJudge(JudgeVerdict(True, "It said hello."))
    result = judged(check, judge)
    assert result.outcome is Outcome.PASS
    assert result.detail == "It said hello."
    assert judge.requests == [(CONVERSATION, JudgeRequest("Agent greets", "PASS if it says hello", "small"))]
    failed = judged(check, FakeJudge(JudgeVerdict(False, "  ")))
    assert failed.outcome is Outcome.FAIL
    assert failed.detail == "(the judge gave no reasoning)"


def test_judge_error_keeps_the_raw_answer():
    result = judged(LlmJudge("Agent greets"), FakeJudge(error=JudgeError("unparseable answer", raw="maybe?")))
    assert result.outcome is Outcome.ERROR
    assert result.detail == "judge error: unparseable answer; raw answer: 'maybe?'"


def test_a_crashing_judge_is_an_error():
    result = judged(LlmJudge("Agent greets"), FakeJudge(error=RuntimeError("boom")))
    assert result.outcome is Outcome.ERROR
    assert result.detail == "judge crashed: RuntimeError: boom"


def test_from_yaml():
    check = evaluator("{type: llm_judge, criterion: Agent greets, rubric: be strict, model: gpt-x}")
    assert check == LlmJudge("Agent greets", "be strict", "gpt-x")
