"""The LLM judge over a scripted chat client: prompts, schema validation, retries of malformed answers."""

import asyncio
import json

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.checks.judged import JudgeRequest
from dialogcheck.config import LLMSettings
from dialogcheck.judge.answers import CRITERION_SCHEMA
from dialogcheck.judge.base import JudgeError, judge_one
from dialogcheck.judge.chat_judge import ChatJudge
from dialogcheck.judge.ledger import render_ledger
from dialogcheck.judge.transcript import render_transcript
from dialogcheck.llm.base import ChatResponse, LLMError, Usage
from dialogcheck.llm.structured import MalformedAnswer, parse_json_answer
from dialogcheck.llm.templates import Templates
from tests.conftest import bot, conv, tool, user

CONVERSATION = conv(user("replace my card"), tool("order_replacement", {"shipping": "standard"}), bot("Ordered!"))
SETTINGS = LLMSettings(provider="openai", model="judge-model", options={"temperature": 0})


class ScriptedClient:
    """Answers each request with the next scripted text (or raises it, when it is an exception)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    async def complete(self, request):
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ChatResponse(answer, request.model, Usage(100, 20))


def said(verdict="PASS", rationale="ok", criterion="criterion", turns=(), events=()) -> str:
    """A judge's answer as the prompt asks for it."""
    return json.dumps({"criterion": criterion, "verdict": verdict, "rationale": rationale, "evidence": {"turns": list(turns), "events": list(events)}})


def judge(client, **kw):
    return asyncio.run(ChatJudge(client, SETTINGS, **kw).judge(CONVERSATION, JudgeRequest("The agent orders a card", "be strict")))


def test_a_pass_with_its_rationale_and_the_prompt_it_was_given():
    client = ScriptedClient(said("PASS", "order_replacement ran in turn 1"))
    verdict = judge(client)
    assert (verdict.passed, verdict.reasoning, verdict.usage) == (True, "order_replacement ran in turn 1", Usage(100, 20))
    (request,) = client.requests
    assert (request.provider, request.model, dict(request.options)) == ("openai", "judge-model", {"temperature": 0, "max_tokens": 2048})
    assert request.json_schema == CRITERION_SCHEMA
    prompt = request.messages[0].content
    assert "USER: replace my card" in prompt and "AGENT: Ordered!" in prompt
    assert "tool order_replacement(shipping='standard') -> ok" in prompt
    assert "## Criterion criterion\nThe agent orders a card" in prompt and "## Rubric\nbe strict" in prompt
    assert "[turn 1, event 0] USER: replace my card" in prompt and "  [event 1] tool order_replacement" in prompt


def test_fenced_json_is_read():
    verdict = judge(ScriptedClient(f"Here you go:\n```json\n{said('FAIL', 'no')}\n```"))
    assert (verdict.passed, verdict.reasoning) == (False, "no")


def test_a_malformed_answer_is_retried_with_what_was_wrong():
    client = ScriptedClient("PASS, clearly", said("pass", "x"), said("PASS", "ok"))
    verdict = judge(client)
    assert verdict.passed and verdict.usage == Usage(300, 60)
    second, third = client.requests[1].messages, client.requests[2].messages
    assert [m.role for m in second] == ["user", "assistant", "user"]
    assert second[1].content == "PASS, clearly"
    assert second[2].content == "That answer was not valid (the answer holds no JSON object). Answer again with only the JSON object."
    assert "verdict: 'pass' is not one of ['PASS', 'FAIL', 'INCONCLUSIVE']" in third[-1].content


def test_no_valid_answer_is_a_judge_error_with_the_raw_text():
    with pytest.raises(JudgeError) as info:
        judge(ScriptedClient("?", "??", "???"))
    assert str(info.value) == "no valid answer after 3 attempts: the answer holds no JSON object"
    assert info.value.raw == "???"


def test_a_provider_failure_is_a_judge_error():
    with pytest.raises(JudgeError) as info:
        judge(ScriptedClient(LLMError("HTTP 500 after 4 attempts")))
    assert str(info.value) == "HTTP 500 after 4 attempts"


def test_request_model_overrides_the_configured_one():
    client = ScriptedClient(said("PASS", "ok"))
    asyncio.run(ChatJudge(client, SETTINGS).judge(CONVERSATION, JudgeRequest("c", model="bigger")))
    assert client.requests[0].model == "bigger"


def test_a_project_template_overrides_the_built_in(tmp_path):
    custom = tmp_path / "judge.j2"
    custom.write_text("Criterion: {{ criterion }}\nLedger:\n{{ ledger }}\n")
    client = ScriptedClient(said("PASS", "ok"))
    judge(client, templates=Templates({"criteria_judge_prompt": custom}))
    assert client.requests[0].messages[0].content.startswith("Criterion: The agent orders a card\nLedger:\nturn 1:")


def test_a_broken_template_is_a_clear_error(tmp_path):
    custom = tmp_path / "judge.j2"
    custom.write_text("{{ critterion }}")
    with pytest.raises(JudgeError, match="the template could not be rendered: 'critterion' is undefined"):
        judge(ScriptedClient(), templates=Templates({"criteria_judge_prompt": custom}))


def test_metrics_are_scored_in_one_call():
    answer = (
        '{"task_completion": {"passed": true, "reasoning": "card ordered"},'
        ' "tone": {"score": 4, "reasoning": "polite"}}'
    )
    client = ScriptedClient(answer)
    scores = asyncio.run(ChatJudge(client, SETTINGS).score_metrics(CONVERSATION, ("task_completion", "tone"), "wants a card"))
    assert scores["task_completion"] == {"passed": True, "reasoning": "card ordered"}
    assert scores["tone"] == {"score": 4, "reasoning": "polite"}
    prompt = client.requests[0].messages[0].content
    assert "- tone: was the agent polite" in prompt and "wants a card" in prompt


def long_conversation(turns):
    events = []
    for n in range(turns):
        events += [user(f"question {n} " + "x" * 80), tool("lookup", {"n": n}), bot(f"answer {n} " + "y" * 80)]
    return conv(*events)


def test_a_conversation_past_max_prompt_chars_is_a_judge_error_and_nothing_is_sent():
    client = ScriptedClient()
    small = LLMSettings(provider="openai", model="judge-model", max_prompt_chars=5000)
    with pytest.raises(JudgeError, match=r"too long to judge: its transcript and event ledger pass 5,000 characters"):
        asyncio.run(ChatJudge(client, small).judge(long_conversation(40), JudgeRequest("The agent answers")))
    scores = asyncio.run(ChatJudge(client, small).score_metrics(long_conversation(40), ("tone",)))
    assert "too long to judge" in scores["error"]
    assert client.requests == []


def test_a_conversation_within_max_prompt_chars_is_judged_whole():
    client = ScriptedClient(said("PASS", "ok"))
    small = LLMSettings(provider="openai", model="judge-model", max_prompt_chars=5000)
    assert asyncio.run(ChatJudge(client, small).judge(long_conversation(10), JudgeRequest("The agent answers"))).passed
    prompt = client.requests[0].messages[0].content
    assert "USER: question 9 " in prompt and "tool lookup(n=9) -> ok" in prompt


def test_the_limit_counts_the_transcript_and_the_ledger_together():
    conversation = long_conversation(10)
    transcript, ledger = render_transcript(conversation, numbered=True), render_ledger(conversation, numbered=True)
    both = len(transcript) + len(ledger) + 2  # each rendering counts one newline a line, its last one included
    fits = ChatJudge(ScriptedClient(said("PASS", "ok")), LLMSettings("openai", "m", max_prompt_chars=both))
    assert asyncio.run(fits.judge(conversation, JudgeRequest("c"))).passed
    with pytest.raises(JudgeError, match="too long"):
        asyncio.run(ChatJudge(ScriptedClient(), LLMSettings("openai", "m", max_prompt_chars=both - 1)).judge(conversation, JudgeRequest("c")))
    assert len(transcript) < both - 1  # the transcript alone fits: the ledger tipped it over


def test_metric_out_of_range_is_retried_then_reported():
    bad = '{"tone": {"score": 9, "reasoning": "x"}}'
    scores = asyncio.run(ChatJudge(ScriptedClient(bad, bad, bad), SETTINGS).score_metrics(CONVERSATION, ("tone",)))
    assert scores == {"error": "no valid answer after 3 attempts: tone.score: 9 is greater than the maximum of 5"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("nothing", "the answer holds no JSON object"),
        ("{verdict: PASS}", "the answer is not valid JSON"),
        ('{"criterion": "c", "verdict": "PASS", "evidence": {}}', "the answer: 'rationale' is a required property"),
        ('{"criterion": "c", "verdict": "PASS", "rationale": "x"}', "the answer: 'evidence' is a required property"),
        (said("MAYBE", "x"), "verdict: 'MAYBE' is not one of ['PASS', 'FAIL', 'INCONCLUSIVE']"),
    ],
)
def test_answer_validation(text, message):
    with pytest.raises(MalformedAnswer, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_json_answer(text, CRITERION_SCHEMA)


def test_the_judge_and_the_metrics_see_the_tools_the_subject_does_not_call_framework_tools():
    conversation = conv(user("cancel my order"), tool("cancel", {"order": "o-1"}), bot("Cancelled."))
    answers = [said("PASS", "cancel ran")] * 2
    answers.append('{"tone": {"score": 4, "reasoning": "polite"}}')
    client = ScriptedClient(*answers)
    asyncio.run(ChatJudge(client, SETTINGS).judge(conversation, JudgeRequest("The agent cancels")))
    own = frozenset({"activate"})
    asyncio.run(ChatJudge(client, SETTINGS).judge(conversation, JudgeRequest("The agent cancels", framework_tools=own)))
    asyncio.run(ChatJudge(client, SETTINGS).score_metrics(conversation, ("tone",), framework_tools=own))
    seen = ["tool cancel(order='o-1') -> ok" in request.messages[0].content for request in client.requests]
    assert seen == [False, True, True]


def judged(*answers, request=JudgeRequest("The agent orders a card", id="criterion:0")):
    """The judgement `judge_one` makes of the scripted answers, and the requests they answered."""
    client = ScriptedClient(*answers)
    return asyncio.run(judge_one(ChatJudge(client, SETTINGS), CONVERSATION, request)), client.requests


def test_cited_turns_and_events_become_the_evidence():
    judgement, _ = judged(said("PASS", "order_replacement ran", "criterion:0", turns=[1], events=[1]))
    assert (judgement.outcome, judgement.detail, judgement.evidence) == (Outcome.PASS, "order_replacement ran", (0, 1, 2))


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (said("PASS", "ok", "criterion:0", turns=[7]), "it cites turn 7, but this conversation has turns 0 to 1"),
        (said("PASS", "ok", "criterion:0", events=[3, 9]), "it cites event 3, 9, but this conversation has events 0 to 2"),
        (said("PASS", "ok", "criterion:1"), "it answers criterion 'criterion:1', but the question was criterion 'criterion:0'"),
        (said("PASS", "Your reason, in your own words, naming what the agent did or said.", "criterion:0"), "the rationale repeats the prompt's own words"),
        (said("PASS", "your reason, in your own words", "criterion:0"), "the rationale repeats the prompt's own words"),
        (said("PASS", "  ", "criterion:0"), "the rationale is empty"),
    ],
)
def test_an_invalid_answer_is_asked_again_once_with_the_reason_then_is_an_error(bad, reason):
    judgement, requests = judged(bad, bad)
    assert judgement.outcome is Outcome.ERROR and judgement.detail.startswith(f"judge error: no valid answer: {reason}")
    assert len(requests) == 2 and reason in requests[1].messages[-1].content


def test_an_invalid_answer_then_a_valid_one_is_taken():
    judgement, requests = judged(said("PASS", "ok", "criterion:1"), said("FAIL", "nothing was ordered", "criterion:0", events=[1]))
    assert (judgement.outcome, judgement.detail, judgement.evidence, len(requests)) == (Outcome.FAIL, "nothing was ordered", (1,), 2)


def test_inconclusive_is_an_error_that_says_so_with_the_reason():
    judgement, _ = judged(said("INCONCLUSIVE", "the card type is never mentioned", "criterion:0"))
    assert (judgement.outcome, judgement.inconclusive) == (Outcome.ERROR, True)
    assert judgement.detail == "inconclusive: the card type is never mentioned"


def test_a_project_template_s_own_wording_is_no_rationale_either(tmp_path):
    custom = tmp_path / "judge.j2"
    custom.write_text("{{ transcript }} {{ ledger }} {{ criterion }} {{ criterion_id }} {{ rubric }}\nrationale: one or two sentences citing the turns\n")
    echo = said("PASS", "one or two sentences citing the turns", "criterion:0")
    client = ScriptedClient(echo, echo)
    verdict = asyncio.run(judge_one(ChatJudge(client, SETTINGS, templates=Templates({"criteria_judge_prompt": custom})), CONVERSATION, JudgeRequest("c", id="criterion:0")))
    assert verdict.outcome is Outcome.ERROR and "repeats the prompt's own words" in verdict.detail
