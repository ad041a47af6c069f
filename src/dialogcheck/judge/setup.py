"""Build the judge a project asks for in `eval/conftest.yml` (or none, when it asks for none)."""

from __future__ import annotations

from pathlib import Path

from ..config import ProjectConfig
from ..llm.factory import make_client
from ..llm.templates import Templates
from .chat_judge import ChatJudge


def judge_from_config(
    config: ProjectConfig | None,
    *,
    use_cache: bool = True,
    cache_dir: Path | None = None,
    max_in_flight: int | None = None,
    replay: bool = False,
) -> ChatJudge | None:
    """The LLM judge of `evaluation.llm`, behind retries, the in-flight limit and the disk cache.

    Raises `LLMError` when the provider's SDK is not installed.
    """
    if config is None or config.evaluation.llm is None:
        return None
    settings = config.evaluation.llm
    client = make_client(
        settings,
        cache=config.cache,
        max_in_flight=max_in_flight or config.evaluation.max_concurrent_llm_calls,
        use_cache=use_cache,
        cache_dir=cache_dir,
        replay=replay,
    )
    return ChatJudge(client, settings, Templates(config.evaluation.prompts), samples=config.evaluation.samples)
