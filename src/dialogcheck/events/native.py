"""Typed events back to native event objects and JSON lines (SPEC section 1): the one encoder.

An event read from a record keeps the object it was read from (`Conversation.raw_events`), unknown
fields and key order included, and is written as it came. An event made in code (the simulated
user's message, the agent's reply as a `bot` event) has no such object: `native_object` writes the
tracker form, which reads back (`parse.py`) as the same event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec
import orjson

from .model import NOT_RECORDED, BotMessage, Conversation, Event, ToolRun, UserMessage

#: Fields written in a form of their own (the tracker form's nested spellings), or never written.
_NOT_WRITTEN_AS_IS = {*NOT_RECORDED, "timestamp", "metadata", "data"}


def native_object(event: Event) -> dict[str, Any]:
    """The native object `event` reads back from: `event`, `timestamp`, its own fields, then `metadata` and `data`.

    Optional fields at their default are left out; `text` of a message is always written.
    """
    obj: dict[str, Any] = {"event": event.type}
    if event.timestamp is not None:
        obj["timestamp"] = event.timestamp
    data: dict[str, Any] = {}
    if isinstance(event, BotMessage):
        obj["text"] = event.text
        _spell(obj, event.metadata, "utter_action", "utter_name", event.utter_name)
        if event.buttons:
            data["buttons"] = [{"title": button.title, "payload": button.payload} for button in event.buttons]
    elif isinstance(event, UserMessage):
        obj["text"] = event.text
    else:
        for field in msgspec.structs.fields(event):
            if field.name in _NOT_WRITTEN_AS_IS or (isinstance(event, ToolRun) and field.name == "skill_id"):
                continue
            value = getattr(event, field.name)
            if field.required or value != _default(field):
                obj[field.encode_name] = msgspec.to_builtins(value)
        if isinstance(event, ToolRun):
            _spell(obj, event.metadata, "skill_id", "skill_id", event.skill_id)
    if event.metadata:
        obj["metadata"] = dict(event.metadata)
    if data:
        obj["data"] = data
    return obj


def _default(field: msgspec.structs.FieldInfo) -> Any:
    return field.default_factory() if field.default is msgspec.NODEFAULT else field.default


def _spell(obj: dict[str, Any], metadata: dict[str, Any], nested: str, top: str, value: str | None) -> None:
    """Write `value` as the shorthand `top`, unless the metadata already holds it as `nested` (the tracker form),
    so an event reads back with the metadata it has."""
    if value is not None and metadata.get(nested) != value:
        obj[top] = value


def event_lines(objects: Iterable[Mapping[str, Any]]) -> bytes:
    """Native event objects as JSONL, one a line."""
    return b"".join(orjson.dumps(obj) + b"\n" for obj in objects)


def conversation_lines(conversation: Conversation) -> bytes:
    """A conversation's events as JSONL (`run_N.events.jsonl`): each as recorded, or in its native form when made in code."""
    return event_lines(conversation.raw_events)
