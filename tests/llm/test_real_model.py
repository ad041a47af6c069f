"""An optional check against a real model server; skipped unless one is named in the environment.

Run it with a local OpenAI-compatible server (Ollama, vLLM, llama.cpp):

    DIALOGCHECK_TEST_LLM_BASE_URL=http://localhost:11434/v1 DIALOGCHECK_TEST_LLM_MODEL=qwen3 \\
        .venv/bin/python -m pytest tests/llm/test_real_model.py
"""

import asyncio
import os

import pytest

from dialogcheck.checks.judged import JudgeRequest
from dialogcheck.config import LLMSettings
from dialogcheck.events import load_conversation
from dialogcheck.judge.chat_judge import ChatJudge
from dialogcheck.llm.factory import make_client
from tests.conftest import EXAMPLE

BASE_URL = os.environ.get("DIALOGCHECK_TEST_LLM_BASE_URL")
MODEL = os.environ.get("DIALOGCHECK_TEST_LLM_MODEL")

pytestmark = pytest.mark.skipif(not (BASE_URL and MODEL), reason="set DIALOGCHECK_TEST_LLM_BASE_URL and _MODEL")


@pytest.fixture(autouse=True)
def _clean_env():
    """The loopback fixtures of this folder clear proxy and key variables; a real server needs none cleared."""


def test_a_real_model_judges_an_obvious_criterion():
    settings = LLMSettings(provider="openai_compatible", model=MODEL, base_url=BASE_URL, timeout=120, options={"temperature": 0})
    judge = ChatJudge(make_client(settings, cache=None, max_in_flight=1), settings)
    conversation = load_conversation(EXAMPLE / "conversations" / "damaged_card_express.jsonl")
    holds = asyncio.run(judge.judge(conversation, JudgeRequest("The agent ordered a replacement card")))
    fails = asyncio.run(judge.judge(conversation, JudgeRequest("The agent transferred money to another account")))
    assert (holds.passed, fails.passed) == (True, False), (holds.reasoning, fails.reasoning)
