"""Builds the client a role uses: provider, wrapped in retries, then the in-flight limit, then the cache.

The cache is outermost so a hit neither waits for a slot nor counts as an attempt.
"""

from __future__ import annotations

from pathlib import Path

from ..config import OPENAI_COMPATIBLE, CacheSettings, LLMSettings
from ..errors import LoadError
from .base import ChatClient, LLMError
from .cache import CachedClient
from .limit import LimitedClient


def provider_client(settings: LLMSettings) -> ChatClient:
    """The bare SDK client for `settings.provider` (imported only here, so each SDK stays optional)."""
    if settings.provider in OPENAI_COMPATIBLE:
        from .openai_client import OpenAIClient

        return OpenAIClient(settings)
    if settings.provider == "anthropic":
        from .anthropic_client import AnthropicClient

        return AnthropicClient(settings)
    raise LLMError(f"unknown LLM provider {settings.provider!r}")


def make_client(
    settings: LLMSettings,
    *,
    cache: CacheSettings | None,
    max_in_flight: int,
    use_cache: bool = True,
    cache_dir: Path | None = None,
    replay: bool = False,
) -> ChatClient:
    """`cache_dir` (a command-line folder, used wherever it is) wins over `cache.dir`, and turns the cache on; `use_cache=False` turns it off.

    `replay` answers every call from the cache folder (`cache_dir`, else `cache.dir` even when the config turns the
    cache off) and sends none. `cache.dir` is refused (`LoadError`) when a link takes it out of its project.

    Under --safe-env (`settings.allowed_env`) the project's own cache is neither read nor written: the branch under
    test may have committed answers there, and they would decide its verdicts. Only `cache_dir` is used then, and
    `replay` without it is a `LoadError`.
    """
    provider = provider_client(settings)  # first, so a missing SDK is the error the user sees
    if settings.allowed_env is not None and cache_dir is None:
        if replay:
            raise LoadError.one(
                "--replay under --safe-env needs --cache-dir DIR: the project's answer cache is not read under --safe-env "
                "(the branch under test may have committed its answers)",
                str(cache.dir if cache is not None else CacheSettings().dir),
            )
        use_cache = False
    from .retry import RetryingClient  # tenacity comes with the SDK extras

    client: ChatClient = RetryingClient(provider, max_retries=settings.max_retries, timeout=settings.timeout)
    client = LimitedClient(client, max_in_flight)
    if replay:
        return CachedClient(client, cache_dir if cache_dir is not None else (cache or CacheSettings()).folder(), replay=True)
    if not use_cache:
        return client
    folder = cache_dir if cache_dir is not None else (cache.folder() if cache is not None and cache.enabled else None)
    return CachedClient(client, folder) if folder is not None else client
