"""Anthropic's Messages API via the `anthropic` SDK.

System messages go to the `system` parameter, the rest stay in order. A
JSON answer is asked for by the prompt alone, so the text comes back as
is. The SDK's retries are off: `RetryingClient` owns the policy. The
Messages API takes no sampling seed, so a request's `seed` is not sent.
"""

from __future__ import annotations

import os
from typing import Any

from ..config import LLMSettings
from .base import ChatRequest, ChatResponse, LLMError, Usage
from .sdk import PLACEHOLDER_KEY, SHAPE_ERRORS, SdkClient, env_key, wrong_shape

MISSING_SDK = "the anthropic provider needs the anthropic package: pip install 'dialogcheck[anthropic]'"
DEFAULT_MAX_TOKENS = 1024


def resolve_api_key(settings: LLMSettings) -> str | None:
    """`api_key`, else the variable `api_key_env` names; None lets the SDK look (ANTHROPIC_API_KEY, profiles).

    Under --safe-env the SDK may look nowhere: ANTHROPIC_API_KEY is read here, for Anthropic's own API
    (or when --allow-env names it), and a server of the config's choosing gets the placeholder.
    """
    key = settings.api_key or env_key(settings, settings.api_key_env)
    if key:
        return key
    if settings.allowed_env is not None:
        key = env_key(settings, "ANTHROPIC_API_KEY")
        if key or settings.base_url:
            return key or PLACEHOLDER_KEY
        raise LLMError(
            "no API key for the anthropic provider: set $ANTHROPIC_API_KEY, or name a variable with `api_key_env` and --allow-env"
            " (with --safe-env the SDK's own credential sources are not read)"
        )
    if settings.base_url and not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        return PLACEHOLDER_KEY
    return None


class AnthropicClient(SdkClient):
    """One Messages call per `complete`; `max_tokens` (or `max_completion_tokens`) from the options, else 1024."""

    def __init__(self, settings: LLMSettings):
        try:
            from anthropic import AsyncAnthropic
        except ImportError as err:
            raise LLMError(MISSING_SDK) from err
        super().__init__(settings, AsyncAnthropic, resolve_api_key(settings))

    async def complete(self, request: ChatRequest) -> ChatResponse:
        options = dict(request.options)
        # The Messages API requires a bound: the role's (ask_json sets it), else the config's, else 1024.
        bound = options.pop("max_tokens", None)
        alternative = options.pop("max_completion_tokens", None)
        max_tokens = int(bound or alternative or DEFAULT_MAX_TOKENS)
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        messages = [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"]
        call: dict[str, Any] = {"system": system} if system else {}
        try:
            message = await self._client().messages.create(
                model=request.model,
                max_tokens=max_tokens,
                messages=messages,
                # Through the body: this SDK has no `temperature` keyword, and servers differ anyway.
                extra_body=options or None,
                extra_headers=dict(request.headers) or None,
                **call,
            )
        except TypeError as err:
            if "authentication" not in str(err):
                raise
            raise LLMError(f"no API key for the anthropic provider: set `api_key_env` or $ANTHROPIC_API_KEY ({err})") from err
        try:
            return self._response(message, request)
        except SHAPE_ERRORS as err:
            raise wrong_shape(request, "a Messages API answer", err) from None

    def _response(self, message: Any, request: ChatRequest) -> ChatResponse:
        usage = message.usage
        return ChatResponse(
            text="".join(block.text for block in message.content if getattr(block, "type", None) == "text"),
            model=message.model or request.model,
            truncated=getattr(message, "stop_reason", None) == "max_tokens",
            usage=Usage(
                # Cached prompt tokens are counted apart by Anthropic; the input is all three.
                input_tokens=(usage.input_tokens or 0)
                + (getattr(usage, "cache_creation_input_tokens", None) or 0)
                + (getattr(usage, "cache_read_input_tokens", None) or 0),
                output_tokens=usage.output_tokens or 0,
            ),
        )
