"""SOP `llm_judge`: error without a judge, skip with --no-judge, judge errors kept as data."""

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.sop_judge import NO_JUDGE_SKIP, LlmJudge
from dialogcheck.judge.base import NO_JUDGE_REASON, JudgeError, JudgeRequest, JudgeVerdict
from tests.conftest import bot, conv, user
from tests.sop.conftest import evaluator

CONVERSATION = conv(user("hi"), bot("hello"))


class FakeJudge:
    def __init__(self, verdict=None, error=None):
        self.verdict, self.error, self.requests = verdict, error, []

    def judge(self, conversation, request):
        self.requests.append((conversation, request))
        if self.error is not None:
            raise self.error
        return self.verdict


def test_plain_evaluate_is_an_error_never_a_pass():
    result = LlmJudge("Agent greets").evaluate(CONVERSATION)
    assert result.outcome is Outcome.ERROR
    assert result.detail == NO_JUDGE_REASON


def test_no_judge_configured():
    result = LlmJudge("Agent greets").evaluate_with(CONVERSATION, None, no_judge=False)
    assert result.outcome is Outcome.ERROR
    assert result.detail == NO_JUDGE_REASON


def test_no_judge_flag_skips_even_with_a_judge():
    judge = FakeJudge(JudgeVerdict(True, "fine"))
    result = LlmJudge("Agent greets").evaluate_with(CONVERSATION, judge, no_judge=True)
    assert result.outcome is Outcome.SKIP
    assert result.detail == NO_JUDGE_SKIP
    assert judge.requests == []


def test_pass_and_fail_carry_the_reasoning_and_send_the_request():
    check = LlmJudge("Agent greets", rubric="PASS if it says hello", model="small")
    judge = FakeJudge(JudgeVerdict(True, "It said hello."))
    result = check.evaluate_with(CONVERSATION, judge)
    assert result.outcome is Outcome.PASS
    assert result.detail == "It said hello."
    assert judge.requests == [(CONVERSATION, JudgeRequest("Agent greets", "PASS if it says hello", "small"))]
    failed = check.evaluate_with(CONVERSATION, FakeJudge(JudgeVerdict(False, "  ")))
    assert failed.outcome is Outcome.FAIL
    assert failed.detail == "(the judge gave no reasoning)"


def test_judge_error_keeps_the_raw_answer():
    judge = FakeJudge(error=JudgeError("unparseable answer", raw="maybe?"))
    result = LlmJudge("Agent greets").evaluate_with(CONVERSATION, judge)
    assert result.outcome is Outcome.ERROR
    assert result.detail == "judge error: unparseable answer; raw answer: 'maybe?'"


def test_a_crashing_judge_is_an_error():
    result = LlmJudge("Agent greets").evaluate_with(CONVERSATION, FakeJudge(error=RuntimeError("boom")))
    assert result.outcome is Outcome.ERROR
    assert result.detail == "judge crashed: RuntimeError: boom"


def test_from_yaml():
    check = evaluator("{type: llm_judge, criterion: Agent greets, rubric: be strict, model: gpt-x}")
    assert check == LlmJudge("Agent greets", "be strict", "gpt-x")
    assert evaluator("{type: llm_judge, criterion: Agent greets}") == LlmJudge("Agent greets")
