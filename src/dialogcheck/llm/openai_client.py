"""Any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, a gateway) via the `openai` SDK.

One attempt per call: the SDK's retries are off because `RetryingClient`
owns the policy. The SDK is imported when a client is built, so
`import dialogcheck` works without it.

Servers differ in how a JSON answer may be asked for: llama-cpp-python
refuses `json_schema` (HTTP 500), some vLLM and Ollama builds refuse
`response_format` altogether (HTTP 400). A refusal that names the format
steps down once, json_schema -> json_object -> the prompt alone, and the
step that worked is remembered for that endpoint and model for the rest of
the process (the warning on the `dialogcheck` logger says so once). Until a
first JSON answer has shown what works, requests to that endpoint and model
wait for it one at a time, so a first wave sent together costs one refusal,
not one each.

Every request carries an output bound: `max_tokens` (what llama.cpp, vLLM,
Ollama and OpenAI's older models read) from the request's options, where the
role's default is set unless the config gives `max_tokens` or
`max_completion_tokens` (OpenAI's newer models) itself.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from typing import Any

from ..config import LLMSettings
from .base import ChatRequest, ChatResponse, LLMError, Usage
from .retry import refuses_format
from .sdk import PLACEHOLDER_KEY, SHAPE_ERRORS, SdkClient, env_key, wrong_shape

MISSING_SDK = "the openai provider needs the openai package: pip install 'dialogcheck[openai]'"


def resolve_api_key(settings: LLMSettings) -> str:
    """`api_key`, else the variable `api_key_env` names, else OPENAI_API_KEY; a placeholder for a custom `base_url`.

    Under --safe-env OPENAI_API_KEY is read only for OpenAI's own API (or when --allow-env names it).
    """
    key = settings.api_key or env_key(settings, settings.api_key_env) or env_key(settings, "OPENAI_API_KEY")
    if key:
        return key
    if settings.base_url:
        return PLACEHOLDER_KEY
    named = f"${settings.api_key_env} or " if settings.api_key_env else ""
    raise LLMError(f"no API key for the {settings.provider} provider: set {named}$OPENAI_API_KEY, or give `base_url` for a local server")


def response_format(schema: Any, mode: str) -> dict[str, Any] | None:
    """How a JSON answer is asked of the server (`structured_output`); None leaves it to the prompt."""
    if schema is None or mode == "none":
        return None
    if mode == "json_object":
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": dict(schema)}}


#: The ways of asking for JSON, from the strictest; a refusal steps to the next.
FORMAT_STEPS = ("json_schema", "json_object", "none")
#: What worked, by (endpoint, model), for the rest of the process.
_working_format: dict[tuple[str | None, str], str] = {}
_format_lock = threading.Lock()
#: The (endpoint, model) pairs a JSON answer came from: what works there is known.
_answered: set[tuple[str | None, str]] = set()
#: Per event loop, the lock the first JSON requests of an endpoint and model take turns on.
_probe_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str | None, str], asyncio.Lock]] = weakref.WeakKeyDictionary()
logger = logging.getLogger("dialogcheck")


def working_format(endpoint: str | None, model: str, configured: str) -> str:
    """The format to ask with: the one a refusal stepped down to, else the configured one."""
    return _working_format.get((endpoint, model), configured)


def format_known(endpoint: str | None, model: str) -> bool:
    """Whether a JSON answer, or a refusal, has shown which format this endpoint and model take."""
    key = (endpoint, model)
    return key in _answered or key in _working_format


def _probe_lock(endpoint: str | None, model: str) -> asyncio.Lock:
    locks = _probe_locks.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault((endpoint, model), asyncio.Lock())


def step_down(endpoint: str | None, model: str, refused: str) -> str:
    """Remember the format after `refused` for this endpoint and model (saying so once); returns the one to use now."""
    following = FORMAT_STEPS[FORMAT_STEPS.index(refused) + 1]
    key = (endpoint, model)
    with _format_lock:
        current = _working_format.get(key)
        if current is not None and FORMAT_STEPS.index(current) >= FORMAT_STEPS.index(following):
            return current  # another request stepped down already (and said so)
        _working_format[key] = following
    shown = "the prompt alone" if following == "none" else f"response_format {following}"
    logger.warning(
        "dialogcheck: %s model %r refused response_format %s; asking with %s from now on (set `structured_output: %s` to skip the refusal)",
        endpoint or "the server",
        model,
        refused,
        shown,
        following,
    )
    return following


def _cost(usage: Any) -> float | None:
    """Some gateways (OpenRouter, LiteLLM) add `usage.cost`; the SDK keeps it as an extra field."""
    value = getattr(usage, "cost", None)
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


class OpenAIClient(SdkClient):
    """One chat-completions call per `complete`, with the model, messages and options of the request."""

    def __init__(self, settings: LLMSettings):
        try:
            from openai import AsyncOpenAI
        except ImportError as err:
            raise LLMError(MISSING_SDK) from err
        super().__init__(settings, AsyncOpenAI, resolve_api_key(settings))

    async def complete(self, request: ChatRequest) -> ChatResponse:
        endpoint = self.settings.endpoint
        probing = request.json_schema is not None and self.settings.structured_output != "none"
        if probing and not format_known(endpoint, request.model):
            async with _probe_lock(endpoint, request.model):  # the first answer learns the format; the others wait for it
                if not format_known(endpoint, request.model):
                    return await self._complete(request)
        return await self._complete(request)

    async def _complete(self, request: ChatRequest) -> ChatResponse:
        endpoint = self.settings.endpoint
        mode = working_format(endpoint, request.model, self.settings.structured_output)
        while True:
            try:
                completion = await self._create(request, response_format(request.json_schema, mode))
                break
            except Exception as error:
                if request.json_schema is None or mode == "none" or not refuses_format(error):
                    raise
                mode = step_down(endpoint, request.model, mode)
        if request.json_schema is not None:
            _answered.add((endpoint, request.model))
        try:
            return self._response(completion, request)
        except SHAPE_ERRORS as err:
            raise wrong_shape(request, "a chat completion", err) from None

    async def _create(self, request: ChatRequest, fmt: dict[str, Any] | None) -> Any:
        extra: dict[str, Any] = {} if fmt is None else {"response_format": fmt}
        if request.seed is not None:
            extra["seed"] = request.seed
        return await self._client().chat.completions.create(
            model=request.model,
            messages=[{"role": m.role, "content": m.content} for m in request.messages],
            # Through the body, so server-specific options (top_k, min_p, ...) pass too.
            extra_body=dict(request.options) or None,
            extra_headers=dict(request.headers) or None,
            **extra,
        )

    def _response(self, completion: Any, request: ChatRequest) -> ChatResponse:
        if not completion.choices:
            raise LLMError(f"{request.provider} model {request.model!r} answered with no choices")
        usage = completion.usage
        return ChatResponse(
            text=completion.choices[0].message.content or "",
            truncated=getattr(completion.choices[0], "finish_reason", None) == "length",
            model=completion.model or request.model,
            usage=Usage(
                input_tokens=(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=(usage.completion_tokens or 0) if usage else 0,
                cost=_cost(usage),
            ),
        )
