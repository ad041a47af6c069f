"""`--blame llm`: the localiser, served by a real loopback OpenAI-compatible server, places only what evidence could not."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck import LoadError, check_conversations, run_scenarios
from dialogcheck._cli.main import cli
from dialogcheck.blame import blame, localised
from dialogcheck.config import LLMSettings
from dialogcheck.judge.chat_judge import ChatJudge
from dialogcheck.judging import evaluate
from dialogcheck.llm.factory import make_client
from tests import inprocess
from tests.cli.test_run import AGENT
from tests.conftest import bot, conv, plain_env, tool, user
from tests.llm.conftest import Answer, openai_body
from tests.test_blame import ORDERED_AS_ASKED, scenario

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
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
    placed = asyncio.run(localised(conversation, found, result, judge_for(openai_server))).blame
    assert (placed.actor, placed.turn, placed.event, placed.rule, placed.checks) == ("agent", 2, 4, "llm", ("assertion 1",))
    assert placed.reason == "It refused a replacement it could have ordered."
    prompt = openai_server.bodies[0]["messages"][0]["content"]
    assert "- assertion 1 (skill_completed): no skill_completed event was recorded" in prompt
    assert "turn 2" in prompt  # the transcript is numbered, as the judge's is


def test_a_cited_line_that_does_not_exist_is_asked_again(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    openai_server.answer(says(actor="agent", turn=9, event=None, reason="late"),
                         says(actor="user", turn=1, event=None, reason="The customer never said which card."))
    placed = asyncio.run(localised(conversation, blame(conversation, result), result, judge_for(openai_server))).blame
    assert (placed.actor, placed.turn, placed.event) == ("user", 1, None)
    assert "it cites turn 9, but this conversation has turns 0 to 2" in json.dumps(openai_server.bodies[1])


def test_an_event_sets_the_turn_and_must_agree_with_it(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    openai_server.answer(says(actor="agent", turn=1, event=4, reason="x"), says(actor="agent", turn=None, event=4, reason="refused"))
    placed = asyncio.run(localised(conversation, blame(conversation, result), result, judge_for(openai_server))).blame
    assert (placed.turn, placed.event) == (2, 4)
    assert "it cites event 4, which is in turn 2, not turn 1" in json.dumps(openai_server.bodies[1])


def test_unknown_is_an_answer(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    openai_server.answer(says(actor="unknown", turn=None, event=None, reason="The transcript does not show it."))
    placed = asyncio.run(localised(conversation, blame(conversation, result), result, judge_for(openai_server))).blame
    assert (placed.actor, placed.turn, placed.event, placed.rule) == ("unknown", None, None, "llm")


def test_evidence_is_never_sent_to_the_localiser(tmp_path, openai_server):
    conversation = conv(user("card_4417 standard"), tool("order_replacement", {"card_id": "card_4417", "shipping": "express"}))
    result = evaluate(scenario(tmp_path, ORDERED_AS_ASKED), conversation, no_judge=True)
    found = blame(conversation, result)
    assert asyncio.run(localised(conversation, found, result, judge_for(openai_server))) == (found, None)  # nothing asked, nothing spent
    assert openai_server.count == 0


def test_a_localiser_that_fails_leaves_the_evidence_s_answer(tmp_path, openai_server):
    conversation, result = unplaced(tmp_path)
    found = blame(conversation, result)
    openai_server.answer(*[Answer(body=openai_body("not json at all"))] * 3)
    kept = asyncio.run(localised(conversation, found, result, judge_for(openai_server))).blame
    assert (kept.actor, kept.rule, kept.event) == (found.actor, found.rule, found.event)
    assert "(the LLM localiser gave no answer:" in kept.reason


# --------------------------------------------------------------------------- --blame llm on the command line


def project_of(tmp_path, server, goals: str = UNPLACED, config: bool = True):
    """A project judged by the loopback `server`, a scenario of `goals`, and the unplaced conversation as a file."""
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    if config:
        (tmp_path / "eval" / "conftest.yml").write_text(
            f"evaluation:\n  llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: judge, max_retries: 1}}\n"
        )
    scenario = tmp_path / "eval" / "scenarios" / "card.yml"
    scenario.write_text(f"scenario:\n  name: Card\n  simulation_context: c\n  goals:\n{goals}")
    events = [bot("hi"), user("my card broke"), bot("sorry to hear"), user("I want a new one"), bot("I cannot do that")]
    conversation = tmp_path / "conversation.jsonl"
    conversation.write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(scenario), str(conversation)


def checked(*args, cwd):
    return inprocess.run([DIALOGCHECK, "check", "--format", "json", "--no-cache", *args], cwd=cwd, text=True, env=plain_env("NO_COLOR"))


def test_check_blame_llm_asks_the_evaluation_model_where_the_evidence_placed_nothing(tmp_path, openai_server):
    scenario, conversation = project_of(tmp_path, openai_server)
    openai_server.answer(says(actor="user", turn=1, event=None, reason="The customer never said which card."))
    done = checked("--blame", "llm", "--scenario", scenario, conversation, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["blame"] == {
        "actor": "user", "turn": 1, "event": None, "source_index": None, "checks": ["assertion 1"],
        "reason": "The customer never said which card.", "rule": "llm",
    }
    assert openai_server.count == 1
    assert json.loads(done.stdout)["usage"] == {"input_tokens": 11, "output_tokens": 7, "cost": None}  # the localiser's tokens count
    evidence = checked("--scenario", scenario, conversation, cwd=tmp_path)  # the default: the evidence alone, nothing asked
    assert json.loads(evidence.stdout)["blame"]["rule"] == "missing_from_start" and openai_server.count == 1


def test_check_blame_llm_never_asks_about_a_failure_the_evidence_placed(tmp_path, openai_server):
    scenario, conversation = project_of(tmp_path, openai_server, "    assertions:\n      - bot_did_not_utter: {text_matches: cannot}\n")
    done = checked("--blame", "llm", "--scenario", scenario, conversation, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert (json.loads(done.stdout)["blame"]["rule"], openai_server.count) == ("forbidden_event", 0)


def test_check_blame_llm_without_a_model_to_ask_is_a_usage_error(tmp_path, openai_server):
    scenario, conversation = project_of(tmp_path, openai_server, config=False)
    for extra, why in (((), "no evaluation.llm is configured"), (("--no-judge",), "--no-judge keeps it from being asked")):
        done = checked("--blame", "llm", *extra, "--scenario", scenario, conversation, cwd=tmp_path)
        assert done.returncode == 2 and why in json.loads(done.stdout)["error"]["message"], done.stdout
        assert "blame" not in done.stdout.replace("--blame llm", "")
    on_ray = CliRunner().invoke(cli, ["check", "--blame", "llm", "--engine", "ray", "--no-judge", "--output", str(tmp_path / "out"), "--scenario", scenario, conversation])
    assert on_ray.exit_code == 2 and "--blame llm asks the evaluation model" in on_ray.output, on_ray.output
    assert "--engine ray runs the deterministic checks (use --engine local)" in on_ray.output  # refused before Ray starts
    assert openai_server.count == 0


def test_check_conversations_takes_the_blame_modes_and_no_other(tmp_path, openai_server):
    scenario, conversation = project_of(tmp_path, openai_server)
    openai_server.answer(says(actor="agent", turn=2, event=4, reason="It refused a replacement it could have ordered."))
    [placed] = check_conversations(scenario, conversation, judge=judge_for(openai_server), blame="llm")
    assert (placed.blame.actor, placed.blame.event, placed.blame.rule) == ("agent", 4, "llm")
    assert (placed.usage.input_tokens, placed.usage.output_tokens) == (11, 7)
    [unblamed] = check_conversations(scenario, conversation, no_judge=True, blame="off")
    assert unblamed.blame is None and unblamed.verdict.value == "fail"
    with pytest.raises(ValueError, match="blame 'yes': give one of 'evidence', 'llm', 'off'"):
        list(check_conversations(scenario, conversation, no_judge=True, blame="yes"))


def test_run_blame_llm_localises_a_run_and_needs_a_model(tmp_path, openai_server):
    scenario, _ = project_of(tmp_path, openai_server)
    (tmp_path / "eval" / "conftest.yml").write_text(
        f"agent: {{type: python, callable: 'agent:respond'}}\n"
        f"evaluation:\n  llm: {{provider: openai_compatible, base_url: '{openai_server.root}/v1', model: judge, max_retries: 1}}\n"
    )
    (tmp_path / "agent.py").write_text(AGENT)
    Path(scenario).write_text(f"scenario:\n  name: Card\n  simulation_context: c\n  script: [my card broke]\n  goals:\n{UNPLACED}")
    openai_server.answer(says(actor="agent", turn=1, event=None, reason="It looked the card up and never ordered one."))
    batch = run_scenarios(tmp_path, results=tmp_path / "r", blame="llm", use_cache=False)
    assert batch.failed == 1
    written = json.loads((tmp_path / "r" / "card" / "run_1.json").read_text())["blame"]
    assert (written["actor"], written["turn"], written["rule"]) == ("agent", 1, "llm")
    assert batch.runs[0].conversation.usage.input_tokens == 11  # the localiser's tokens count as the judge's
    with pytest.raises(LoadError, match="blame='llm' asks the evaluation model .* and no_judge= keeps it from being asked"):
        run_scenarios(tmp_path, results=tmp_path / "r2", blame="llm", no_judge=True)
