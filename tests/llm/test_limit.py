"""The in-flight limit, measured where it matters: at the server."""

import asyncio

import pytest

from dialogcheck.config import LLMSettings
from dialogcheck.llm.limit import LimitedClient
from dialogcheck.llm.openai_client import OpenAIClient
from tests.llm.conftest import Answer, chat


def limited(server, n: int) -> LimitedClient:
    settings = LLMSettings(provider="openai", model="test-model", base_url=f"{server.root}/v1", timeout=60.0, max_retries=0)
    return LimitedClient(OpenAIClient(settings), n)


async def _together(client, count: int):
    return await asyncio.gather(*(client.complete(chat(f"question {i}")) for i in range(count)))


def held_until_full(n: int, wave: int) -> Answer:
    """An answer held until `n` requests are in flight, or the last request of its wave of `wave` has arrived, so
    the limit is reached however slowly the client sends; then 0.15 s more, in which a client past its limit
    sends the requests it holds back."""
    return Answer(delay=0.15, until=lambda server: server.in_flight >= n or server.count % wave == 0)


@pytest.mark.parametrize("n", [1, 3])
def test_at_most_n_requests_reach_the_server_at_once(openai_server, n):
    openai_server.answer(held_until_full(n, 7))
    responses = asyncio.run(_together(limited(openai_server, n), 7))
    assert len(responses) == openai_server.count == 7
    assert openai_server.max_in_flight == n


def test_the_limit_works_across_event_loops(openai_server):
    openai_server.answer(held_until_full(2, 3))
    client = limited(openai_server, 2)
    for _ in range(2):
        asyncio.run(_together(client, 3))
    assert openai_server.count == 6 and openai_server.max_in_flight == 2


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        LimitedClient(object(), 0)
