"""`--replay`, shared by `check` and `run`: every LLM call answered from the cache, none sent."""

from __future__ import annotations

import click

REPLAY_OPTION = click.option(
    "--replay", is_flag=True,
    help="Answer every LLM call (judge and simulated user) from the answer cache and send none; a call the cache "
    "cannot answer is an error naming the call and the first message that differs from the nearest cached one.",
)


def refuse_replay_without_cache(replay: bool, no_cache: bool) -> None:
    """--replay reads only the cache, so --no-cache with it is a usage error."""
    if replay and no_cache:
        raise click.UsageError("--replay answers every LLM call from the cache: it cannot go with --no-cache")
