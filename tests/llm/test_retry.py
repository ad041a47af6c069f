"""Retries against a real server: which failures are retried, how long we wait, and what is raised at the end."""

import asyncio
import email.utils
import functools
import time
from types import SimpleNamespace

import pytest
from tenacity import AsyncRetrying

from dialogcheck.config import LLMSettings
from dialogcheck.llm import LLMError, retry
from dialogcheck.llm.openai_client import OpenAIClient
from dialogcheck.llm.retry import RetryingClient, retry_after_seconds
from tests.llm.conftest import Answer, chat, error_body, openai_body


def client(base_url: str, *, max_retries: int = 2, timeout: float = 60.0, backoff: float = 0.01) -> RetryingClient:
    settings = LLMSettings(provider="openai", model="test-model", base_url=base_url, timeout=timeout, max_retries=max_retries)
    return RetryingClient(OpenAIClient(settings), max_retries=max_retries, timeout=timeout, backoff_base=backoff)


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The seconds the retry policy waits between attempts, recorded instead of slept: what a test asserts is the
    wait asked for, which a loaded machine does not change, not the time that passed."""
    asked: list[float] = []

    async def record(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(retry, "AsyncRetrying", functools.partial(AsyncRetrying, sleep=record))
    return asked


def test_first_time_success_takes_one_attempt(openai_server):
    response = asyncio.run(client(f"{openai_server.root}/v1").complete(chat()))
    assert (response.text, response.attempts, openai_server.count) == ("hello", 1, 1)


def test_429_waits_for_retry_after_then_succeeds(openai_server, waits):
    openai_server.answer(Answer(429, error_body("slow down"), {"Retry-After": "7"}), Answer(body=openai_body("ok")))
    response = asyncio.run(client(f"{openai_server.root}/v1").complete(chat()))
    assert (response.text, response.attempts, openai_server.count) == ("ok", 2, 2)
    assert waits == [7.0]  # the server's wait, not our 0.01 s backoff


def test_retry_after_ms_wins(openai_server, waits):
    openai_server.answer(Answer(429, error_body(), {"retry-after-ms": "250", "Retry-After": "30"}), Answer())
    asyncio.run(client(f"{openai_server.root}/v1").complete(chat()))
    assert waits == [0.25]


def test_a_retry_after_past_the_cap_waits_the_cap(openai_server, waits):
    openai_server.answer(Answer(429, error_body(), {"Retry-After": "3600"}), Answer())
    response = asyncio.run(client(f"{openai_server.root}/v1").complete(chat()))
    assert (response.attempts, waits) == (2, [retry.MAX_RETRY_AFTER])


def test_500s_until_the_retry_limit(openai_server, waits):
    openai_server.answer(Answer(500, error_body("kaput")))
    with pytest.raises(LLMError) as caught:
        asyncio.run(client(f"{openai_server.root}/v1", max_retries=3).complete(chat()))
    assert openai_server.count == 4 and len(waits) == 3  # a wait before each retry, none after the last attempt
    message = str(caught.value)
    assert message.startswith("openai model 'test-model' failed after 4 attempts: HTTP 500:"), message
    assert "kaput" in message


def test_500_then_success_counts_attempts(openai_server):
    openai_server.answer(Answer(503, error_body()), Answer(502, error_body()), Answer(body=openai_body("fine")))
    response = asyncio.run(client(f"{openai_server.root}/v1", max_retries=2).complete(chat()))
    assert (response.text, response.attempts, openai_server.count) == ("fine", 3, 3)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_4xx_are_not_retried(openai_server, status):
    openai_server.answer(Answer(status, error_body("bad request")))
    with pytest.raises(LLMError, match=rf"failed after 1 attempt: HTTP {status}:"):
        asyncio.run(client(f"{openai_server.root}/v1", max_retries=3).complete(chat()))
    assert openai_server.count == 1


def test_a_slow_answer_times_out_after_retries(openai_server, waits):
    openai_server.answer(Answer(delay=60))  # a minute late: only the limit of each attempt ends this test in under one
    started = time.monotonic()
    with pytest.raises(LLMError, match=r"failed after 2 attempts: timed out after 0.3 s"):
        asyncio.run(client(f"{openai_server.root}/v1", max_retries=1, timeout=0.3).complete(chat()))
    elapsed = time.monotonic() - started
    # The client made two attempts with one wait between; the server saw each that reached it before its limit
    # (on a loaded machine the second may time out on the way), never a third.
    assert len(waits) == 1 and 1 <= openai_server.count <= 2
    assert elapsed >= 0.59, elapsed  # each attempt had its whole limit (a loaded machine only adds to this)


def test_connection_refused_is_retried_then_reported(closed_port, waits):
    with pytest.raises(LLMError, match=r"failed after 3 attempts: Connection error"):
        asyncio.run(client(f"http://127.0.0.1:{closed_port}/v1", max_retries=2).complete(chat()))
    assert len(waits) == 2


def test_the_sdk_does_not_retry_on_its_own(openai_server):
    openai_server.answer(Answer(500, error_body()))
    settings = LLMSettings(provider="openai", model="test-model", base_url=f"{openai_server.root}/v1", max_retries=5)
    with pytest.raises(Exception):  # noqa: B017 - how the SDK gives up is not under test, the count of its requests is
        asyncio.run(OpenAIClient(settings).complete(chat()))
    assert openai_server.count == 1


def test_a_bug_is_not_dressed_up_as_a_provider_error():
    class Broken:
        async def complete(self, request):
            raise KeyError("oops")

    with pytest.raises(KeyError):
        asyncio.run(RetryingClient(Broken(), max_retries=3, backoff_base=0.01).complete(chat()))


def test_backoff_grows_from_the_base(waits):
    class Failing:
        async def complete(self, request):
            raise TimeoutError

    with pytest.raises(LLMError, match="failed after 4 attempts: timed out"):
        asyncio.run(RetryingClient(Failing(), max_retries=3, backoff_base=0.05, backoff_max=0.15).complete(chat()))
    # base * 2**retry, capped at backoff_max, plus up to one base of jitter
    grown = [0.05, 0.1, 0.15]
    assert all(low <= wait <= low + 0.05 + 1e-9 for low, wait in zip(grown, waits, strict=True)), waits


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        (None, None),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "junk", "retry-after": "3"}, 3.0),
        ({"retry-after": "3600"}, 60.0),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "nan"}, None),
    ],
)
def test_retry_after_parsing(headers, expected):
    assert retry_after_seconds(headers) == expected


def test_retry_after_as_an_http_date(monkeypatch):
    now = 1_800_000_000.0
    monkeypatch.setattr(retry, "time", SimpleNamespace(time=lambda: now))  # the clock the date is read against
    in_ten = email.utils.formatdate(now + 10, usegmt=True)
    assert retry_after_seconds({"retry-after": in_ten}) == 10.0
    assert retry_after_seconds({"retry-after": email.utils.formatdate(now - 100, usegmt=True)}) == 0.0
    assert retry_after_seconds({"retry-after": in_ten}, cap=5.0) == 5.0
