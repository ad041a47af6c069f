"""The one-method seam every LLM call goes through.

A `ChatRequest` is the whole request: provider, model, options and messages,
so it is also the cache key. Provider clients, the disk cache and the
concurrency limit all implement `ChatClient`, and wrap one another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from .._redact import redact_url
from ..errors import DialogcheckError


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system", "user" or "assistant"
    content: str


@dataclass(frozen=True)
class ChatRequest:
    provider: str
    model: str
    messages: tuple[ChatMessage, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    #: A JSON schema the answer must follow, or None for free text.
    json_schema: Mapping[str, Any] | None = None
    #: Where the request goes (an OpenAI-compatible base_url); part of the identity of the answer.
    endpoint: str | None = None
    #: Extra HTTP headers (`extra_headers`): credentials, so the identity keeps only their hash.
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Asks the provider to sample repeatably, where it can (OpenAI-compatible `seed`; Anthropic has none).
    seed: int | None = None
    #: Which of several samples of the same question this is (0: the first, or the only one); a later sample is
    #: another request, so the cache keeps an answer for each.
    sample: int = 0
    #: Which repeat of a run asks (1: the first, or the only one). Never sent: repeats of a run are asked apart
    #: even without a seed (the cache would otherwise answer repeat 2 as it answered repeat 1), and each is
    #: cached, so a rerun reproduces every repeat.
    repeat: int = 1

    def describe(self) -> str:
        """How an error names the request: provider, model and, without its password, the endpoint."""
        where = f" at {redact_url(self.endpoint)}" if self.endpoint else ""
        return f"{self.provider} model {self.model!r}{where}"

    def identity(self) -> bytes:
        """Canonical bytes of everything that decides the answer (the cache key is its hash).

        Stored beside the cached answer, so it holds no credential: the endpoint without its
        `user:password@` part, and the headers only as a hash.
        """
        identity: dict[str, Any] = {
            "provider": self.provider,
            "endpoint": redact_url(self.endpoint),
            "model": self.model,
            "options": dict(self.options),
            "json_schema": self.json_schema,
            "messages": [[m.role, m.content] for m in self.messages],
        }
        if self.seed is not None:  # only then: the key of a request without one stays what it was
            identity["seed"] = self.seed
        if self.sample:
            identity["sample"] = self.sample
        if self.repeat > 1:
            identity["repeat"] = self.repeat
        if self.headers:
            headers = orjson.dumps(sorted((name.lower(), value) for name, value in self.headers.items()))
            identity["headers_sha256"] = hashlib.sha256(headers).hexdigest()
        return orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    #: In US dollars, where the provider reports it.
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens, cost)

    def to_dict(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "cost": self.cost}


@dataclass(frozen=True)
class ChatResponse:
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    #: How many attempts the provider call took (1 when it worked the first time).
    attempts: int = 1
    #: The model stopped at the request's output bound (`max_tokens`): the answer is cut short.
    truncated: bool = False


class LLMError(DialogcheckError):
    """A call that failed for good: retries used up, a timeout, a refused request.

    A harness error: whatever depended on the answer is `error`, never pass.
    """


class ChatClient(Protocol):
    async def complete(self, request: ChatRequest) -> ChatResponse: ...
