"""What the provider clients share: one SDK client per event loop, built without its own retries.

Under --safe-env (`LLMSettings.allowed_env`) the SDK must find nothing in the
environment by itself: it is given its key and its address explicitly (so it
never reads OPENAI_BASE_URL, ANTHROPIC_BASE_URL, their key variables or a
profile on disk), and the headers it would send are looked at once, when the
client is built: one that carries the value of an environment variable
--allow-env does not name (OPENAI_ORG_ID, *_CUSTOM_HEADERS, ...) stops the
setup with an error that names the variable.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

from .._redact import MIN_SECRET_CHARS, hold
from ..config import LLMSettings, key_env_refused
from .base import ChatRequest, LLMError

#: What reading an answer of the wrong shape raises: the SDKs build their models leniently, so a
#: server that answers `{}` or `[]` with status 200 surfaces only when a field is read.
SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError)
#: Local servers take any key, but the SDKs insist on one; it is no credential.
PLACEHOLDER_KEY = "not-needed"
_CREDENTIAL_HEADERS = ("authorization", "x-api-key")


def wrong_shape(request: ChatRequest, kind: str, error: BaseException) -> LLMError:
    """The error for a 200 answer that is JSON but not what the API sends."""
    return LLMError(f"{request.describe()} answered JSON that is not {kind} ({type(error).__name__}: {error})")


def env_key(settings: LLMSettings, name: str | None) -> str | None:
    """The value of the key variable `name`, when the settings may send it to their endpoint (else None).

    `api_key_env` refused under --safe-env is a load error already; settings built by hand get the same words.
    """
    if not name:
        return None
    if not settings.may_send_env(name):
        if name == settings.api_key_env:
            raise LLMError(key_env_refused(settings, name))
        return None
    return os.environ.get(name) or None


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
        if api_key != PLACEHOLDER_KEY:
            hold(api_key)
        if settings.allowed_env is not None:
            self._refuse_env_headers(self._build())

    @property
    def secrets(self) -> tuple[str, ...]:
        """The credentials this client sends, so error text that quotes them can be redacted."""
        found = [self._api_key]
        if self._sdk is not None:  # the SDK may have found its own key (ANTHROPIC_API_KEY, an auth token)
            found += [getattr(self._sdk, "api_key", None), getattr(self._sdk, "auth_token", None)]
        return tuple(s for s in found if isinstance(s, str) and s)

    def _build(self) -> Any:
        safe = self.settings.allowed_env is not None
        return self._sdk_class(
            api_key=self._api_key,
            base_url=self.settings.endpoint if safe else self.settings.base_url,
            timeout=self.settings.timeout,
            max_retries=0,
        )

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._loop is not loop:
            self._sdk = self._build()
            self._loop = loop
            hold(*(s for s in self.secrets if s != PLACEHOLDER_KEY))
        return self._sdk

    def _refuse_env_headers(self, sdk: Any) -> None:
        """`LLMError` when a header the SDK would send carries the value of a variable --safe-env keeps in."""
        headers: dict[str, Any] = {**getattr(sdk, "default_headers", {}), **getattr(sdk, "auth_headers", {})}
        ours = {name.lower() for name in self.settings.headers}  # checked when the config was read
        for header, value in headers.items():
            if not isinstance(value, str) or header.lower() in ours or self._is_our_credential(header, value):
                continue
            name = _variable_in(value, self.settings)
            if name is not None:
                raise LLMError(
                    f"--safe-env: the {self.settings.provider} SDK would send the value of ${name} (its `{header}` header) "
                    f"to {self.settings.endpoint}, and only variables named by --allow-env may leave the process: "
                    f"pass --allow-env {name} to send it, or unset it"
                )

    def _is_our_credential(self, header: str, value: str) -> bool:
        return bool(self._api_key) and header.lower() in _CREDENTIAL_HEADERS and value in (self._api_key, f"Bearer {self._api_key}")


def _variable_in(value: str, settings: LLMSettings, environ: Mapping[str, str] = os.environ) -> str | None:
    """The first environment variable whose value `value` holds and the settings may not send (short values are skipped)."""
    for name, text in environ.items():
        if any(part in value for part in _carried(text)) and not settings.may_send_env(name):
            return name
    return None


def _carried(text: str) -> list[str]:
    """What a variable's value may put in a header: the whole value, and each `Name: value` line's value (*_CUSTOM_HEADERS)."""
    parts = [text, *(line.partition(":")[2].strip() for line in text.splitlines() if ":" in line)]
    return [part for part in parts if len(part) >= MIN_SECRET_CHARS]
