"""What the provider clients share: one SDK client per event loop, built without its own retries."""

from __future__ import annotations

import asyncio
from typing import Any

from ..config import LLMSettings
from .base import ChatRequest, LLMError

#: What reading an answer of the wrong shape raises: the SDKs build their models leniently, so a
#: server that answers `{}` or `[]` with status 200 surfaces only when a field is read.
SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError)


def wrong_shape(request: ChatRequest, kind: str, error: BaseException) -> LLMError:
    """The error for a 200 answer that is JSON but not what the API sends."""
    return LLMError(f"{request.describe()} answered JSON that is not {kind} ({type(error).__name__}: {error})")


class SdkClient:
    """Holds an SDK client class and builds one instance per running event loop.

    The SDK's connection pool belongs to one loop; a new loop gets a new
    client. `max_retries=0`: retries are dialogcheck's own (`llm.retry`).
    """

    def __init__(self, settings: LLMSettings, sdk_class: type, api_key: str | None):
        self.settings = settings
        self._api_key = api_key
        self._sdk_class = sdk_class
        self._sdk: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def secrets(self) -> tuple[str, ...]:
        """The credentials this client sends, so error text that quotes them can be redacted."""
        found = [self._api_key]
        if self._sdk is not None:  # the SDK may have found its own key (ANTHROPIC_API_KEY, an auth token)
            found += [getattr(self._sdk, "api_key", None), getattr(self._sdk, "auth_token", None)]
        return tuple(s for s in found if isinstance(s, str) and s)

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._loop is not loop:
            self._sdk = self._sdk_class(
                api_key=self._api_key,
                base_url=self.settings.base_url,
                timeout=self.settings.timeout,
                max_retries=0,
            )
            self._loop = loop
        return self._sdk
