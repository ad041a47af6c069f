"""Strict replay (`--replay`): every LLM call, judge and simulated user alike, is answered from the cache.

A loopback server counts the requests that reach it: a replayed rerun of an
unchanged batch makes none and gives the same verdicts; a changed request
is an error that names the call and where it differs, and is not sent.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.config import CacheSettings, LLMSettings
from dialogcheck.llm import ChatMessage, ChatRequest, LLMError
from dialogcheck.llm.factory import make_client
from tests.llm.conftest import Answer, judge_says, openai_body
from tests.llm.test_check_with_judge import EVENTS, project
from tests.llm.test_run_with_llm_user import make_project


def check(*args):
    return CliRunner().invoke(cli, ["check", "--format", "json", *map(str, args)])


def test_a_replayed_check_makes_no_request_and_gives_the_same_verdicts(tmp_path, openai_server):
    openai_server.answer(Answer(body=judge_says("FAIL", "it ordered without asking", events=[3])))
    scenario, conversation = project(tmp_path, openai_server)
    first = check("--scenario", scenario, conversation)
    assert first.exit_code == 1 and openai_server.count == 2
    replayed = check("--replay", "--scenario", scenario, conversation)
    assert openai_server.count == 2  # not one request more
    assert replayed.exit_code == 1
    again, before = json.loads(replayed.stdout), json.loads(first.stdout)
    assert [c.pop("cached") for c in again["criteria"] + again["sop"]] == [True, True]  # the same verdicts, marked as the cache's
    assert again == before and "cached" not in first.stdout


def test_a_replay_miss_is_an_error_that_names_the_call_and_the_first_difference(tmp_path, openai_server):
    openai_server.answer(Answer(body=judge_says("PASS", "it asked first")))
    scenario, conversation = project(tmp_path, openai_server)
    check("--scenario", scenario, conversation)
    changed = [dict(e, text="Shall I order the card?") if e.get("text") == "Shall I order it?" else e for e in EVENTS]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(e) + "\n" for e in changed))
    replayed = check("--replay", "--scenario", scenario, conversation)
    assert openai_server.count == 2  # the miss was not sent
    assert replayed.exit_code == 3
    detail = json.loads(replayed.stdout)["criteria"][0]["detail"]
    assert detail.startswith(f"judge error: --replay: no cached answer for the call to openai_compatible model 'judge' at {openai_server.root}/v1 (key ")
    assert "nothing was sent: message 1 (user) differs from the nearest cached request's at character" in detail
    assert "Shall I order the card?" in detail and "Shall I order it?" in detail


def test_replay_with_an_empty_cache_says_so_and_with_no_cache_is_a_usage_error(tmp_path, openai_server):
    scenario, conversation = project(tmp_path, openai_server)
    empty = check("--replay", "--scenario", scenario, conversation)
    assert empty.exit_code == 3 and openai_server.count == 0
    assert json.loads(empty.stdout)["criteria"][0]["detail"].endswith("nothing was sent: the cache holds no answer of this model")
    refused = check("--replay", "--no-cache", "--scenario", scenario, conversation)
    assert refused.exit_code == 2 and "--replay answers every LLM call from the cache: it cannot go with --no-cache" in refused.output


def test_a_replayed_run_asks_neither_the_simulated_user_nor_the_judge(tmp_path, openai_server):
    openai_server.answer(
        Answer(body=openai_body('{"message": "my card please", "done": false}')),
        Answer(body=openai_body('{"message": "thanks, bye", "done": true}')),
    )
    root = make_project(tmp_path / "p", openai_server)
    first = CliRunner().invoke(cli, ["run", str(root), "--simulate", "llm", "--results", str(tmp_path / "r1")])
    assert first.exit_code == 0, first.output
    assert openai_server.count == 2
    replayed = CliRunner().invoke(cli, ["run", str(root), "--simulate", "llm", "--replay", "--results", str(tmp_path / "r2")])
    assert replayed.exit_code == 0, replayed.output
    assert openai_server.count == 2
    runs = [json.loads((tmp_path / r / "lookup" / "run_1.json").read_text()) for r in ("r1", "r2")]
    assert (runs[1]["verdict"], runs[1]["transcript"]) == (runs[0]["verdict"], runs[0]["transcript"])

    scenario = root / "eval" / "scenarios" / "lookup.yml"
    scenario.write_text(scenario.read_text().replace("You are Ana", "You are Bea"))
    missed = CliRunner().invoke(cli, ["run", str(root), "--simulate", "llm", "--replay", "--results", str(tmp_path / "r3")])
    assert missed.exit_code == 3 and openai_server.count == 2
    error = json.loads((tmp_path / "r3" / "lookup" / "run_1.json").read_text())["error"]
    assert "--replay: no cached answer for the call to openai_compatible model 'sim'" in error and "You are Bea" in error


def test_a_request_that_differs_only_in_its_options_says_so(tmp_path, openai_server):
    settings = LLMSettings(provider="openai_compatible", model="m", base_url=f"{openai_server.root}/v1", timeout=60.0, max_retries=0)
    cache = CacheSettings(dir=tmp_path / "cache")
    request = ChatRequest("openai_compatible", "m", (ChatMessage("user", "hi"),), {"temperature": 0}, endpoint=settings.base_url)
    asyncio.run(make_client(settings, cache=cache, max_in_flight=1).complete(request))
    replaying = make_client(settings, cache=cache, max_in_flight=1, replay=True)
    assert asyncio.run(replaying.complete(request)).cached
    other = ChatRequest("openai_compatible", "m", (ChatMessage("user", "hi"),), {"temperature": 1}, endpoint=settings.base_url)
    with pytest.raises(LLMError, match="its messages match the nearest cached request, but not its options"):
        asyncio.run(replaying.complete(other))
    assert openai_server.count == 1
