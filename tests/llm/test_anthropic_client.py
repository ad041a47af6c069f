"""The Anthropic client against a real Messages-API server: system prompt, max_tokens, usage, retries."""

import asyncio
import builtins
from dataclasses import replace

import pytest

from dialogcheck.config import LLMSettings
from dialogcheck.llm import ChatMessage, LLMError
from dialogcheck.llm.anthropic_client import AnthropicClient
from dialogcheck.llm.retry import RetryingClient
from tests.llm.conftest import Answer, anthropic_body, chat, error_body


def settings(server, **changes) -> LLMSettings:
    values = {"provider": "anthropic", "model": "claude-test", "base_url": server.root, "api_key": "sk-ant-test", "timeout": 60.0, "max_retries": 0}
    return LLMSettings(**{**values, **changes})


def request(**options):
    return chat(provider="anthropic", model="claude-test", system="You judge.", **options)


def test_success_sends_system_apart_and_reads_usage(anthropic_server):
    anthropic_server.answer(Answer(body=anthropic_body('{"verdict": "PASS"}', model="claude-served", input_tokens=30, output_tokens=9, cache_read=4)))
    response = asyncio.run(AnthropicClient(settings(anthropic_server)).complete(request()))
    assert (response.text, response.model) == ('{"verdict": "PASS"}', "claude-served")
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.cost) == (34, 9, None)
    body = anthropic_server.bodies[0]
    assert body["system"] == "You judge."
    assert body["messages"] == [{"role": "user", "content": "Is the sky blue?"}]
    assert (body["model"], body["max_tokens"]) == ("claude-test", 1024)
    assert anthropic_server.headers[0]["authorization"] == "Bearer sk-ant-test"  # anthropic 2.x: no x-api-key


def test_options_go_into_the_body_and_max_tokens_is_overridable(anthropic_server):
    asyncio.run(AnthropicClient(settings(anthropic_server)).complete(request(temperature=0.0, max_tokens=64, top_k=3)))
    body = anthropic_server.bodies[0]
    assert (body["temperature"], body["max_tokens"], body["top_k"]) == (0.0, 64, 3)


def test_no_system_message_sends_no_system(anthropic_server):
    asyncio.run(AnthropicClient(settings(anthropic_server)).complete(chat(provider="anthropic")))
    assert "system" not in anthropic_server.bodies[0]


def test_a_conversation_keeps_its_turns_in_order(anthropic_server):
    turns = (ChatMessage("system", "Be a user."), ChatMessage("user", "hi"), ChatMessage("assistant", "hello"), ChatMessage("user", "bye"))
    asyncio.run(AnthropicClient(settings(anthropic_server)).complete(replace(request(), messages=turns)))
    assert [m["role"] for m in anthropic_server.bodies[0]["messages"]] == ["user", "assistant", "user"]


def test_a_local_server_needs_no_key(anthropic_server):
    response = asyncio.run(AnthropicClient(settings(anthropic_server, api_key=None)).complete(request()))
    assert response.text == "hello"


def test_overloaded_529_is_retried_and_400_is_not(anthropic_server):
    client = RetryingClient(AnthropicClient(settings(anthropic_server)), max_retries=2, backoff_base=0.01)
    anthropic_server.answer(Answer(529, error_body("overloaded")), Answer())
    assert asyncio.run(client.complete(request())).attempts == 2
    anthropic_server.answer(Answer(400, error_body("bad")))
    with pytest.raises(LLMError, match=r"anthropic model 'claude-test' failed after 1 attempt: HTTP 400"):
        asyncio.run(client.complete(request()))
    assert anthropic_server.count == 3


def test_429_retry_after_is_honoured(anthropic_server):
    anthropic_server.answer(Answer(429, error_body(), {"retry-after": "0.2"}), Answer())
    client = RetryingClient(AnthropicClient(settings(anthropic_server)), max_retries=1, backoff_base=0.01)
    asyncio.run(client.complete(request()))
    assert 0.18 <= anthropic_server.times[1] - anthropic_server.times[0] < 1.0


def test_a_missing_sdk_is_a_clear_error(monkeypatch):
    real_import = builtins.__import__

    def no_anthropic(name, *args, **kwargs):
        if name == "anthropic" or name.startswith("anthropic."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_anthropic)
    with pytest.raises(LLMError) as caught:
        AnthropicClient(LLMSettings(provider="anthropic", model="m"))
    assert str(caught.value) == "the anthropic provider needs the anthropic package: pip install 'dialogcheck[anthropic]'"
