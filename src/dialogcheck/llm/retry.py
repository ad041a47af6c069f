"""Retries with backoff around a provider client, so a busy or flaky server costs time, not a verdict.

Both SDKs' own retries are switched off: one policy here covers OpenAI and
Anthropic alike. Retried: 408, 429, 5xx, connection errors and timeouts.
A server's `Retry-After` / `retry-after-ms` wins over our backoff (capped);
other 4xx fail at once, and so does any status whose body refuses the request
itself (it names `response_format` or `json_schema`: llama-cpp-python says so
with a 500, and asking again would get the same answer). Whatever fails for
good becomes an `LLMError`.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import NamedTuple

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from .._redact import redact
from .._shown import counted
from .base import ChatClient, ChatRequest, ChatResponse, LLMError

#: First backoff in seconds, doubled per retry (with jitter); tests pass a tiny one.
DEFAULT_BACKOFF_BASE = 1.0
DEFAULT_BACKOFF_MAX = 30.0
#: The longest a server's Retry-After may make us wait.
MAX_RETRY_AFTER = 60.0
RETRY_STATUS = frozenset({408, 429})
#: Words of an error body that refuse how a JSON answer was asked for, not a passing trouble.
_FORMAT_WORDS = ("response_format", "json_schema", "json_object")


class _SDKErrors(NamedTuple):
    any: tuple[type[BaseException], ...]
    status: tuple[type[BaseException], ...]
    connection: tuple[type[BaseException], ...]


def _sdk_errors() -> _SDKErrors:
    """The error classes of the SDKs already imported (one not imported raised nothing; importing anthropic takes seconds)."""
    found = _SDKErrors((), (), ())
    for name, base in (("openai", "OpenAIError"), ("anthropic", "AnthropicError")):
        sdk = sys.modules.get(name)
        if sdk is None:
            continue
        # APITimeoutError is a subclass of APIConnectionError in both.
        found = _SDKErrors(
            (*found.any, getattr(sdk, base)),
            (*found.status, sdk.APIStatusError),
            (*found.connection, sdk.APIConnectionError),
        )
    return found


def _status(error: BaseException) -> int | None:
    return error.status_code if isinstance(error, _sdk_errors().status) else None  # type: ignore[attr-defined]  # the SDK's status errors carry a status code


def refuses_format(error: BaseException) -> bool:
    """Whether an HTTP error (any 4xx or 5xx) refuses the requested `response_format`: its body names it."""
    status = _status(error)
    if status is None or status < 400:
        return False
    said = f"{getattr(error, 'message', '')} {getattr(error, 'body', '')}".lower()
    return any(word in said for word in _FORMAT_WORDS)


def is_retryable(error: BaseException) -> bool:
    """429, 408, 5xx, a refused or dropped connection, or a timeout; never a refusal of the request's format."""
    status = _status(error)
    if status is not None:
        return not refuses_format(error) and (status in RETRY_STATUS or status >= 500)
    return isinstance(error, (TimeoutError, *_sdk_errors().connection))


def retry_after_seconds(headers: Mapping[str, str] | None, cap: float = MAX_RETRY_AFTER) -> float | None:
    """The wait a server asks for: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date."""
    if not headers:
        return None
    delay: float | None = None
    if (millis := headers.get("retry-after-ms")) is not None:
        delay = _number(millis)
        delay = None if delay is None else delay / 1000
    if delay is None and (value := headers.get("retry-after")) is not None:
        delay = _number(value)
        if delay is None:
            try:
                delay = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError, OverflowError):
                return None
    return None if delay is None else min(max(delay, 0.0), cap)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and value != float("inf") else None


def _describe(error: BaseException, timeout: float | None, secrets: tuple[str, ...] = ()) -> str:
    """The failure in a few words; whatever the server quoted back is redacted before it is cut short."""
    status = _status(error)
    message = str(getattr(error, "message", None) or error or type(error).__name__)
    if error.__cause__ is not None and str(error.__cause__) and status is None:
        message += f" ({error.__cause__})"
    message = redact(message, secrets)
    message = message if len(message) <= 300 else message[:300] + "..."
    if status is not None:
        return f"HTTP {status}: {message}"
    if isinstance(error, json.JSONDecodeError):
        return f"the server's answer is not JSON ({error})"
    if isinstance(error, TimeoutError) or "Timeout" in type(error).__name__:
        return f"timed out after {timeout:g} s (`timeout`, the limit of each attempt)" if timeout else "timed out"
    return message


class RetryingClient:
    """Retry `inner` up to `max_retries` times after the first attempt; each attempt has `timeout` seconds."""

    def __init__(
        self,
        inner: ChatClient,
        *,
        max_retries: int,
        timeout: float | None = None,
        backoff_base: float | None = None,
        backoff_max: float | None = None,
        max_retry_after: float = MAX_RETRY_AFTER,
    ):
        self.inner = inner
        self.max_retries = max_retries
        self.timeout = timeout
        # Read at construction, not definition, so tests can lower the module defaults.
        self.backoff_base = DEFAULT_BACKOFF_BASE if backoff_base is None else backoff_base
        self.backoff_max = DEFAULT_BACKOFF_MAX if backoff_max is None else backoff_max
        self.max_retry_after = max_retry_after
        self._backoff = wait_exponential(multiplier=self.backoff_base, max=self.backoff_max) + wait_random(0, self.backoff_base)

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        response = getattr(error, "response", None)
        asked = retry_after_seconds(getattr(response, "headers", None), self.max_retry_after)
        return asked if asked is not None else self._backoff(state)

    async def _attempt(self, request: ChatRequest) -> ChatResponse:
        # The SDK's timeout is per read; this bounds the whole attempt.
        if self.timeout is None:
            return await self.inner.complete(request)
        async with asyncio.timeout(self.timeout):
            return await self.inner.complete(request)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        attempts = 0
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            retry=retry_if_exception(is_retryable),
            wait=self._wait,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    response = await self._attempt(request)
        except LLMError:
            raise
        except Exception as error:
            # A body that is not JSON (a proxy's error page) reaches us as the SDK's json.JSONDecodeError.
            if not isinstance(error, (TimeoutError, json.JSONDecodeError, *_sdk_errors().any)):
                raise  # a bug, not a provider failure: let it show as itself
            tries = counted(attempts, "attempt")
            secrets = tuple(getattr(self.inner, "secrets", ()))
            raise LLMError(
                f"{request.describe()} failed after {tries}: {_describe(error, self.timeout, secrets)}"
            ) from error
        return replace(response, attempts=attempts)

