"""The disk cache in front of a real server: a rerun makes no requests, anything different misses."""

import asyncio
from dataclasses import replace

import orjson
import pytest

from dialogcheck.config import LLMSettings
from dialogcheck.llm import ChatMessage, ChatRequest, ChatResponse, LLMError, Usage
from dialogcheck.llm.cache import CachedClient, cache_key
from dialogcheck.llm.openai_client import OpenAIClient
from tests.llm.conftest import Answer, chat, error_body, openai_body


def cached(server, folder) -> CachedClient:
    settings = LLMSettings(provider="openai", model="test-model", base_url=f"{server.root}/v1", timeout=60.0, max_retries=0)
    return CachedClient(OpenAIClient(settings), folder)


async def _each(client, *requests):
    return [await client.complete(r) for r in requests]


def test_a_second_identical_request_makes_no_call(openai_server, tmp_path):
    openai_server.answer(Answer(body=openai_body("PASS", prompt_tokens=20, completion_tokens=3, cost=0.5)))
    client = cached(openai_server, tmp_path)
    first, second = asyncio.run(_each(client, chat(temperature=0), chat(temperature=0)))
    assert openai_server.count == 1
    assert (first.cached, second.cached) == (False, True)
    assert replace(second, cached=False) == first
    assert (client.hits, client.misses) == (1, 1)


def test_a_fresh_client_on_the_same_folder_reproduces_the_answers(openai_server, tmp_path):
    asyncio.run(cached(openai_server, tmp_path).complete(chat()))
    again = cached(openai_server, tmp_path)
    response = asyncio.run(again.complete(chat()))
    assert (response.text, response.cached, openai_server.count, again.hits) == ("hello", True, 1, 1)


def test_a_different_option_message_model_or_schema_misses(openai_server, tmp_path):
    client = cached(openai_server, tmp_path)
    base = chat(temperature=0)
    variants = [
        base,
        chat(temperature=0.5),
        chat("Is the grass green?", temperature=0),
        replace(base, model="other-model"),
        replace(base, json_schema={"type": "object"}),
        replace(base, messages=(ChatMessage("system", "x"), *base.messages)),
        replace(base, endpoint="http://elsewhere/v1"),
    ]
    asyncio.run(_each(client, *variants))
    assert openai_server.count == len(variants) == client.misses
    assert len({cache_key(v) for v in variants}) == len(variants)


def test_the_entry_keeps_the_request_beside_the_answer(openai_server, tmp_path):
    client = cached(openai_server, tmp_path)
    asyncio.run(client.complete(chat()))
    key = cache_key(chat())
    path = tmp_path / key[:2] / f"{key}.json"
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [path.name]
    entry = orjson.loads(path.read_bytes())
    assert entry["request"]["messages"] == [["user", "Is the sky blue?"]]
    assert entry["response"] == {"text": "hello", "model": "test-model", "usage": {"input_tokens": 11, "output_tokens": 7, "cost": None}, "attempts": 1}


def test_a_corrupt_entry_is_a_miss_and_is_rewritten(openai_server, tmp_path):
    client = cached(openai_server, tmp_path)
    path = client.path_for(chat())
    path.parent.mkdir(parents=True)
    for junk in (b'{"request": {"half', b"[]", b'{"request": {}, "response": {}}'):
        path.write_bytes(junk)
        assert asyncio.run(client.complete(chat())).cached is False
    assert openai_server.count == 3
    assert asyncio.run(client.complete(chat())).cached is True
    assert openai_server.count == 3


def test_failures_are_not_cached(openai_server, tmp_path):
    openai_server.answer(Answer(400, error_body()), Answer(body=openai_body("later")))
    client = cached(openai_server, tmp_path)
    try:
        asyncio.run(client.complete(chat()))
    except Exception:  # noqa: BLE001 - how the call fails is not under test, only that the failure is not cached
        pass
    assert not any(tmp_path.rglob("*.json"))
    assert asyncio.run(client.complete(chat())).text == "later"


def test_disabled_passes_every_call_through(tmp_path):
    calls = []

    class Inner:
        async def complete(self, request):
            calls.append(request)
            return ChatResponse("x", "m", Usage(1, 1))

    client = CachedClient(Inner(), tmp_path, enabled=False)
    asyncio.run(_each(client, chat(), chat()))
    assert len(calls) == 2 and not any(tmp_path.iterdir())
    assert (client.hits, client.misses) == (0, 0)


def test_an_llm_error_passes_through_uncached(tmp_path):
    class Failing:
        async def complete(self, request):
            raise LLMError("down")

    client = CachedClient(Failing(), tmp_path)
    try:
        asyncio.run(client.complete(chat()))
    except LLMError as err:
        assert str(err) == "down"
    assert not any(tmp_path.rglob("*.json"))


def test_header_values_are_kept_out_of_the_entry_and_decide_the_key_by_their_hash(openai_server, tmp_path):
    token = "gw-token-planted-0123456789"
    client = cached(openai_server, tmp_path)
    with_header = replace(chat(), headers={"X-Gateway-Token": token})
    asyncio.run(_each(client, with_header, replace(chat(), headers={"X-Gateway-Token": "another-token-value"}), with_header))
    assert openai_server.count == 2 and client.hits == 1  # another header value is another request
    assert openai_server.headers[0]["x-gateway-token"] == token  # sent as a header, not in the body
    assert "X-Gateway-Token" not in orjson.dumps(openai_server.bodies[0]).decode()
    stored = b"".join(path.read_bytes() for path in tmp_path.rglob("*.json"))
    assert token.encode() not in stored and stored.count(b'"headers_sha256"') == 2


def test_a_request_without_headers_keeps_the_identity_it_always_had():
    request = ChatRequest("openai", "m", (ChatMessage("user", "hi"),))
    assert request.identity() == b'{"endpoint":null,"json_schema":null,"messages":[["user","hi"]],"model":"m","options":{},"provider":"openai"}'


class Recording:
    def __init__(self):
        self.calls = 0

    async def complete(self, request):
        self.calls += 1
        return ChatResponse('{"verdict": "PASS", "rationale": "from the model"}', "m", Usage(1, 1))


def test_an_entry_that_is_a_link_is_refused_not_followed(tmp_path):
    inner = Recording()
    client = CachedClient(inner, tmp_path / "cache")
    path = client.path_for(chat())
    path.parent.mkdir(parents=True)
    forged = tmp_path / "forged.json"  # a committed link to an answer (or to any file) outside the cache
    forged.write_bytes(orjson.dumps({"request": orjson.loads(chat().identity()), "response": {"text": "FORGED", "model": "m"}}))
    path.symlink_to(forged)
    with pytest.raises(LLMError) as info:
        asyncio.run(client.complete(chat()))
    assert str(info.value) == f"the answer cache entry {path} is a symbolic link: refused, not followed (delete it, or pass --no-cache)"
    assert inner.calls == 0 and path.is_symlink() and b"FORGED" in forged.read_bytes()


def test_an_entry_folder_that_is_a_link_is_refused_for_reading_and_writing(tmp_path):
    inner = Recording()
    client = CachedClient(inner, tmp_path / "cache")
    path = client.path_for(chat())
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache").mkdir()
    path.parent.symlink_to(outside)
    with pytest.raises(LLMError, match=f"the answer cache entry {path.parent} is a symbolic link: refused"):
        asyncio.run(client.complete(chat()))
    assert inner.calls == 0 and list(outside.iterdir()) == []


def test_an_entry_made_a_link_while_the_call_ran_is_not_written_through(tmp_path):
    client = CachedClient(Recording(), tmp_path / "cache")
    path = client.path_for(chat())
    target = tmp_path / "target.txt"
    target.write_text("untouched")

    class LinkingInner(Recording):
        async def complete(self, request):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(target)  # appears between the read and the write
            return await super().complete(request)

    client.inner = LinkingInner()
    with pytest.raises(LLMError, match="is a symbolic link: refused"):
        asyncio.run(client.complete(chat()))
    assert target.read_text() == "untouched" and path.is_symlink()


def _complete_in_a_thread(client, request):
    """`client.complete(request)` in a thread; a read that blocks is unblocked (by writing to the pipe) and fails the test."""
    import threading

    outcome = {}

    def call():
        try:
            outcome["response"] = asyncio.run(client.complete(request))
        except BaseException as err:  # noqa: BLE001 - handed to the test
            outcome["error"] = err

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(120)  # a margin for a loaded machine: the fixed read never waits at all
    return thread, outcome


def test_an_entry_that_is_a_named_pipe_is_a_miss_never_a_wait(tmp_path):
    import os

    inner = Recording()
    client = CachedClient(inner, tmp_path / "cache")
    path = client.path_for(chat())
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    thread, outcome = _complete_in_a_thread(client, chat())
    if thread.is_alive():
        with open(path, "wb"):  # lets the blocked read go on, so the test ends
            pass
        thread.join(30)
        pytest.fail("reading a named pipe as a cache entry waited for a writer")
    assert "error" not in outcome, outcome
    assert outcome["response"].text.startswith('{"verdict": "PASS"') and not outcome["response"].cached
    assert inner.calls == 1 and (client.hits, client.misses) == (0, 1)
    assert path.is_file()  # the answer replaced the pipe: a rerun hits
    assert asyncio.run(client.complete(chat())).cached


def test_an_entry_larger_than_the_bound_is_a_miss_and_is_rewritten(tmp_path, monkeypatch):
    from dialogcheck.llm import cache

    inner = Recording()
    client = CachedClient(inner, tmp_path / "cache")
    asyncio.run(client.complete(chat()))
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", client.path_for(chat()).stat().st_size - 1)  # one byte over the bound
    assert not asyncio.run(client.complete(chat())).cached and inner.calls == 2
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", client.path_for(chat()).stat().st_size)  # at the bound: read
    assert asyncio.run(client.complete(chat())).cached and inner.calls == 2


def test_a_replay_miss_passes_over_a_named_pipe_in_the_folder(tmp_path):
    import os

    client = CachedClient(Recording(), tmp_path / "cache")
    asyncio.run(client.complete(chat(temperature=0)))
    pipe = client.path_for(chat(temperature=0)).parent / ("0" * 64 + ".json")
    os.mkfifo(pipe)
    replaying = CachedClient(Recording(), tmp_path / "cache", replay=True)
    thread, outcome = _complete_in_a_thread(replaying, chat(temperature=1))
    if thread.is_alive():
        with open(pipe, "wb"):
            pass
        thread.join(30)
        pytest.fail("a replay miss waited on a named pipe in the cache folder")
    assert isinstance(outcome.get("error"), LLMError), outcome
    assert str(outcome["error"]).endswith("its messages match the nearest cached request, but not its options")
