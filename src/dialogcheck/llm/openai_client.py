"""Any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, a gateway) via the `openai` SDK.

One attempt per call: the SDK's retries are off because `RetryingClient`
owns the policy. The SDK is imported when a client is built, so
`import dialogcheck` works without it.
"""

from __future__ import annotations

from typing import Any

from ..config import LLMSettings
from .base import ChatRequest, ChatResponse, LLMError, Usage
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
        extra: dict[str, Any] = {}
        if (fmt := response_format(request.json_schema, self.settings.structured_output)) is not None:
            extra["response_format"] = fmt
        if request.seed is not None:
            extra["seed"] = request.seed
        completion = await self._client().chat.completions.create(
            model=request.model,
            messages=[{"role": m.role, "content": m.content} for m in request.messages],
            # Through the body, so server-specific options (top_k, min_p, ...) pass too.
            extra_body=dict(request.options) or None,
            extra_headers=dict(request.headers) or None,
            **extra,
        )
        try:
            return self._response(completion, request)
        except SHAPE_ERRORS as err:
            raise wrong_shape(request, "a chat completion", err) from None

    def _response(self, completion: Any, request: ChatRequest) -> ChatResponse:
        if not completion.choices:
            raise LLMError(f"{request.provider} model {request.model!r} answered with no choices")
        usage = completion.usage
        return ChatResponse(
            text=completion.choices[0].message.content or "",
            model=completion.model or request.model,
            usage=Usage(
                input_tokens=(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=(usage.completion_tokens or 0) if usage else 0,
                cost=_cost(usage),
            ),
        )
