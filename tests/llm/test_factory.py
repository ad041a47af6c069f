"""`make_client` builds provider, retry, limit, cache, in that order from the inside out."""

import asyncio

import pytest

from dialogcheck.config import CacheSettings, LLMSettings
from dialogcheck.llm import LLMError
from dialogcheck.llm.anthropic_client import AnthropicClient
from dialogcheck.llm.cache import CachedClient
from dialogcheck.llm.factory import make_client
from dialogcheck.llm.limit import LimitedClient
from dialogcheck.llm.openai_client import OpenAIClient
from dialogcheck.llm.retry import RetryingClient
from tests.llm.conftest import chat


def layers(client) -> list[type]:
    found = []
    while client is not None:
        found.append(type(client))
        client = getattr(client, "inner", None)
    return found


def test_the_layers_and_their_settings(tmp_path):
    settings = LLMSettings(provider="vllm", model="m", base_url="http://127.0.0.1:9/v1", max_retries=4, timeout=12.0)
    client = make_client(settings, cache=CacheSettings(dir=tmp_path), max_in_flight=5)
    assert layers(client) == [CachedClient, LimitedClient, RetryingClient, OpenAIClient]
    assert client.folder == tmp_path
    assert client.inner.max_in_flight == 5
    assert (client.inner.inner.max_retries, client.inner.inner.timeout) == (4, 12.0)


def test_anthropic_gets_its_own_client():
    client = make_client(LLMSettings(provider="anthropic", model="claude", api_key="k"), cache=None, max_in_flight=1)
    assert layers(client) == [LimitedClient, RetryingClient, AnthropicClient]


def test_no_cache_when_turned_off(tmp_path):
    settings = LLMSettings(provider="ollama", model="m", base_url="http://127.0.0.1:9/v1")
    assert CachedClient not in layers(make_client(settings, cache=CacheSettings(dir=tmp_path), max_in_flight=1, use_cache=False))
    assert CachedClient not in layers(make_client(settings, cache=CacheSettings(enabled=False, dir=tmp_path), max_in_flight=1))


def test_a_cache_folder_option_wins(tmp_path):
    settings = LLMSettings(provider="ollama", model="m", base_url="http://127.0.0.1:9/v1")
    client = make_client(settings, cache=CacheSettings(dir=tmp_path / "a"), max_in_flight=1, cache_dir=tmp_path / "b")
    assert client.folder == tmp_path / "b"


def test_an_unknown_provider_is_an_llm_error():
    with pytest.raises(LLMError, match="unknown LLM provider 'palm'"):
        make_client(LLMSettings(provider="palm", model="m"), cache=None, max_in_flight=1)


def test_a_rerun_through_the_whole_chain_makes_no_requests(openai_server, tmp_path):
    settings = LLMSettings(provider="openai", model="test-model", base_url=f"{openai_server.root}/v1", max_retries=0)
    requests = [chat("one"), chat("two")]

    async def run_all():
        client = make_client(settings, cache=CacheSettings(dir=tmp_path), max_in_flight=2)
        return await asyncio.gather(*(client.complete(r) for r in requests))

    first = asyncio.run(run_all())
    second = asyncio.run(run_all())
    assert openai_server.count == 2
    assert [r.text for r in first] == [r.text for r in second]
    assert all(r.cached for r in second) and not any(r.cached for r in first)
