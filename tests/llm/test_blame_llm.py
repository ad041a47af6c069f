"""`--blame llm`: the localiser, served by a real loopback OpenAI-compatible server, places only what evidence could not."""

from __future__ import annotations

import asyncio
import json

from dialogcheck.blame import blame, localised
from dialogcheck.config import LLMSettings
from dialogcheck.judge.chat_judge import ChatJudge
from dialogcheck.judging import evaluate
from dialogcheck.llm.factory import make_client
from tests.conftest import bot, conv, tool, user
from tests.llm.conftest import Answer, openai_body
from tests.test_blame import ORDERED_AS_ASKED, scenario

#: A skill never completed, with nothing said that it needs: placed only by the fallback, after the first message.
UNPLACED = "    assertions:\n      - skill_completed: {skill_id: card_replace}\n"


def judge_for(server) -> ChatJudge:
    settings = LLMSettings(provider="openai_compatible", model="m", base_url=f"{server.root}/v1", options={"temperature": 0})
    return ChatJudge(make_client(settings, cache=None, max_in_flight=1), settings)


def says(**answer) -> Answer:
    return Answer(body=openai_body(json.dumps(answer)))


def unplaced(tmp_path):
    conversation = conv(bot("hi"), user("my card broke"), bot("sorry to hear"), user("I want a new one"), bot("I cannot do that"))
    return conversation, evaluate(scenario(tmp_path, UNPLACED), conversation, no_judge=True)


def test_the_localiser_places_what_only_a_fallback_placed(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    found = blame(conversation, result)
    assert found.rule == "missing_from_start"
    openai_server.answer(says(actor="agent", turn=2, event=4, reason="It refused a replacement it could have ordered."))
    placed = asyncio.run(localised(conversation, found, result, judge_for(openai_server)))
    assert (placed.actor, placed.turn, placed.event, placed.rule, placed.checks) == ("agent", 2, 4, "llm", ("assertion 1",))
    assert placed.reason == "It refused a replacement it could have ordered."
    prompt = openai_server.bodies[0]["messages"][0]["content"]
    assert "- assertion 1 (skill_completed): no skill_completed event was recorded" in prompt
    assert "turn 2" in prompt  # the transcript is numbered, as the judge's is


def test_a_cited_line_that_does_not_exist_is_asked_again(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    openai_server.answer(says(actor="agent", turn=9, event=None, reason="late"),
                         says(actor="user", turn=1, event=None, reason="The customer never said which card."))
    placed = asyncio.run(localised(conversation, blame(conversation, result), result, judge_for(openai_server)))
    assert (placed.actor, placed.turn, placed.event) == ("user", 1, None)
    assert "it cites turn 9, but this conversation has turns 0 to 2" in json.dumps(openai_server.bodies[1])


def test_an_event_sets_the_turn_and_must_agree_with_it(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    openai_server.answer(says(actor="agent", turn=1, event=4, reason="x"), says(actor="agent", turn=None, event=4, reason="refused"))
    placed = asyncio.run(localised(conversation, blame(conversation, result), result, judge_for(openai_server)))
    assert (placed.turn, placed.event) == (2, 4)
    assert "it cites event 4, which is in turn 2, not turn 1" in json.dumps(openai_server.bodies[1])


def test_unknown_is_an_answer(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    openai_server.answer(says(actor="unknown", turn=None, event=None, reason="The transcript does not show it."))
    placed = asyncio.run(localised(conversation, blame(conversation, result), result, judge_for(openai_server)))
    assert (placed.actor, placed.turn, placed.event, placed.rule) == ("unknown", None, None, "llm")


def test_evidence_is_never_sent_to_the_localiser(tmp_path, openai_server):
    conversation = conv(user("card_4417 standard"), tool("order_replacement", {"card_id": "card_4417", "shipping": "express"}))
    result = evaluate(scenario(tmp_path, ORDERED_AS_ASKED), conversation, no_judge=True)
    found = blame(conversation, result)
    assert asyncio.run(localised(conversation, found, result, judge_for(openai_server))) == found
    assert openai_server.count == 0


def test_a_localiser_that_fails_leaves_the_evidence_s_answer(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    found = blame(conversation, result)
    openai_server.answer(*[Answer(body=openai_body("not json at all"))] * 3)
    kept = asyncio.run(localised(conversation, found, result, judge_for(openai_server)))
    assert (kept.actor, kept.rule, kept.event) == (found.actor, found.rule, found.event)
    assert "(the LLM localiser gave no answer:" in kept.reason
