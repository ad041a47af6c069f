"""A request's `seed` on the wire: sent to OpenAI-compatible servers, never to Anthropic's API (which has none)."""

import asyncio
from dataclasses import replace

from dialogcheck.llm.anthropic_client import AnthropicClient
from dialogcheck.llm.openai_client import OpenAIClient
from tests.llm import test_anthropic_client, test_openai_client
from tests.llm.conftest import chat


def test_an_openai_compatible_server_gets_the_seed(openai_server):
    client = OpenAIClient(test_openai_client.settings(openai_server))
    asyncio.run(client.complete(replace(chat(temperature=0.7), seed=42)))
    asyncio.run(client.complete(chat(temperature=0.7)))
    seeded, plain = openai_server.bodies
    assert seeded["seed"] == 42 and seeded["temperature"] == 0.7
    assert "seed" not in plain


def test_anthropic_gets_no_seed(anthropic_server):
    client = AnthropicClient(test_anthropic_client.settings(anthropic_server))
    asyncio.run(client.complete(replace(chat(provider="anthropic", model="claude-test"), seed=42)))
    assert "seed" not in anthropic_server.bodies[0]


def test_a_later_sample_moves_the_seed_on_within_its_range():
    from dialogcheck.config import SEED_RANGE
    from dialogcheck.llm.structured import sample_seed

    assert (sample_seed(None, 0), sample_seed(7, 0)) == (None, 7)  # the first sample asks as the caller asked
    assert (sample_seed(None, 2), sample_seed(7, 2)) == (2, 9)
    assert sample_seed(SEED_RANGE - 1, 2) == 1  # wraps, never a seed the server refuses
