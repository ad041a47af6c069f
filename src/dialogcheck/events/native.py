"""Typed events back to native JSON lines (docs/concepts.md, the conversation record): the one encoder of events files.

An event read from a record keeps the object it was read from (`Conversation.raw_events`), unknown
fields and key order included, and is written as it came. An event made in code (the simulated
user's message, the agent's reply as a `bot` event) has no such object: `model.native_object` gives
its tracker form, which reads back (`parse.py`) as the same event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from .model import Conversation


def event_lines(objects: Iterable[Mapping[str, Any]]) -> bytes:
    """Native event objects as JSONL, one a line."""
    return b"".join(orjson.dumps(obj) + b"\n" for obj in objects)


def conversation_lines(conversation: Conversation) -> bytes:
    """A conversation's events as JSONL (`run_N.events.jsonl`): each as recorded, or in its native form when made in code."""
    return event_lines(conversation.raw_events)
