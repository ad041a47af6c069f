"""Turn plain event objects (tracker form or shorthand) into typed events.

Pure functions over dicts: no files here. A field of the wrong type raises
`EventFieldError` naming the field; the file loader adds the position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .model import (
    BLOCK_EVENTS,
    EVENT_CLASSES,
    SKILL_EVENTS,
    BotMessage,
    Button,
    Conversation,
    Event,
    MemoryCleared,
    MemorySet,
    ToolRun,
    UserMessage,
    opens_turn,
)
from ..errors import Problem
from .typos import KNOWN_FIELDS, NameWarning, name_warnings

_JSON_TYPE_NAMES = {str: "a string", bool: "a boolean", dict: "an object", list: "a list"}


class EventFieldError(ValueError):
    """A field of an event object is missing or has the wrong type."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def _string(obj: Mapping[str, Any], name: str, *, required: bool = True, where: str = "") -> str | None:
    label = f"{where}{name}"
    if name not in obj:
        if required:
            raise EventFieldError(name, f"field `{label}` is missing")
        return None
    value = obj[name]
    if isinstance(value, str):
        return value
    if value is None and not required:
        return None
    raise EventFieldError(name, f"field `{label}` must be a string, got {json_type(value)}")


#: The `{}` of an absent `metadata` or `arguments`: one shared object, never mutated.
_EMPTY: dict[str, Any] = {}


def _mapping(obj: Mapping[str, Any], name: str, where: str = "") -> Mapping[str, Any]:
    value = obj.get(name)
    if value is None:
        return _EMPTY
    if type(value) is not dict and not isinstance(value, dict):
        raise EventFieldError(name, f"field `{where}{name}` must be an object, got {json_type(value)}")
    return value


def _optional_string(obj: Mapping[str, Any], name: str) -> str | None:
    """`_string(..., required=False)` for the common case in one lookup (the hot path of loading)."""
    value = obj.get(name)
    if value is None or type(value) is str:
        return value
    return _string(obj, name, required=False)


def _text(obj: Mapping[str, Any]) -> str:
    """`text` of a message; null reads as empty (a bot message with only buttons)."""
    value = obj.get("text")
    if value is None or isinstance(value, str):
        return value or ""
    raise EventFieldError("text", f"field `text` must be a string or null, got {json_type(value)}")


def _buttons(obj: Mapping[str, Any], data: Mapping[str, Any]) -> tuple[Button, ...]:
    if "buttons" in data:
        raw, where = data["buttons"], "data.buttons"
    else:
        raw, where = obj.get("buttons"), "buttons"
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise EventFieldError("buttons", f"field `{where}` must be a list, got {json_type(raw)}")
    buttons = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise EventFieldError("buttons", f"field `{where}[{i}]` must be an object, got {json_type(item)}")
        title = _string(item, "title", required=False, where=f"{where}[{i}].")
        payload = _string(item, "payload", required=False, where=f"{where}[{i}].")
        buttons.append(Button(title, payload))
    return tuple(buttons)


def _common(obj: Mapping[str, Any]) -> tuple[float | None, Mapping[str, Any]]:
    timestamp = obj.get("timestamp")
    if timestamp is not None and type(timestamp) is not float and (isinstance(timestamp, bool) or not isinstance(timestamp, (int, float))):
        raise EventFieldError("timestamp", f"field `timestamp` must be a number, got {json_type(timestamp)}")
    return timestamp, _mapping(obj, "metadata")


def _user(obj, kind, common):
    return UserMessage(**common, text=_text(obj))


def _bot(obj, kind, common):
    data = _mapping(obj, "data")
    meta = common["metadata"]
    utter = meta.get("utter_action") if meta else None
    if utter is None:
        utter = _optional_string(obj, "utter_name")
    elif not isinstance(utter, str):
        raise EventFieldError("utter_action", f"field `metadata.utter_action` must be a string, got {json_type(utter)}")
    return BotMessage(**common, text=_text(obj), utter_name=utter, buttons=_buttons(obj, data))


def _skill(obj, kind, common):
    return EVENT_CLASSES[kind](**common, skill_id=_string(obj, "skill_id"), step_id=_optional_string(obj, "step_id"))


def _block(obj, kind, common):
    return EVENT_CLASSES[kind](
        **common,
        skill_id=_string(obj, "skill_id"),
        block_id=_string(obj, "block_id"),
        step_id=_optional_string(obj, "step_id"),
    )


def _memory_set(obj, kind, common):
    if "value" not in obj:
        raise EventFieldError("value", "field `value` is missing")
    return MemorySet(**common, key=_string(obj, "key"), value=obj["value"])


def _memory_cleared(obj, kind, common):
    return MemoryCleared(**common, key=_string(obj, "key"))


def _tool(obj, kind, common):
    source = _string(obj, "source")
    if source not in ("local", "mcp"):
        raise EventFieldError("source", f"field `source` must be 'local' or 'mcp', got {source!r}")
    is_error = obj.get("is_error", False)
    if is_error is None:
        is_error = False
    elif not isinstance(is_error, bool):
        raise EventFieldError("is_error", f"field `is_error` must be a boolean, got {json_type(is_error)}")
    meta = common["metadata"]
    skill_id = meta.get("skill_id") if meta else None
    if skill_id is None:
        skill_id = _optional_string(obj, "skill_id")
    elif not isinstance(skill_id, str):
        raise EventFieldError("skill_id", f"field `metadata.skill_id` must be a string, got {json_type(skill_id)}")
    return ToolRun(
        **common,
        tool_name=_string(obj, "tool_name"),
        arguments=_mapping(obj, "arguments"),
        source=source,
        result=obj.get("result"),
        is_error=is_error,
        error_message=_optional_string(obj, "error_message"),
        mcp_server=_optional_string(obj, "mcp_server"),
        skill_id=skill_id,
    )


def _other(obj, kind, common):
    return Event(type=kind, **common)


_BUILDERS: dict[str, Callable[..., Event]] = {
    "user": _user,
    "bot": _bot,
    "memory_set": _memory_set,
    "memory_cleared": _memory_cleared,
    "tool_executed": _tool,
    **{name: _skill for name in SKILL_EVENTS},
    **{name: _block for name in BLOCK_EVENTS},
}


class EventReader:
    """Builds typed events one at a time, tracking the turn they fall in, and noting probable typos in names."""

    def __init__(self) -> None:
        self.turn = 0
        self.events: list[Event] = []
        self.warnings: list[NameWarning] = []

    def add(self, obj: Any) -> Event:
        if not isinstance(obj, dict):
            raise EventFieldError("event", f"an event must be a JSON object, got {json_type(obj)}")
        kind = obj.get("event")
        if kind is None:
            raise EventFieldError("event", "field `event` is missing: every event names its type")
        if not isinstance(kind, str):
            raise EventFieldError("event", f"field `event` must be a string, got {json_type(kind)}")
        if kind == "user" and opens_turn(obj.get("text") if isinstance(obj.get("text"), str) else None):
            self.turn += 1
        ts, meta = _common(obj)
        common = {"index": len(self.events), "turn": self.turn, "timestamp": ts, "metadata": meta}
        event = _BUILDERS.get(kind, _other)(obj, kind, common)
        self.events.append(event)
        fields = KNOWN_FIELDS.get(kind)
        if fields is None or not obj.keys() <= fields:
            self.warnings.extend(name_warnings(event.index, obj))
        return event


def conversation_from_dicts(
    objects: Iterable[Any], source: str = "<memory>", conversation_id: str | None = None
) -> Conversation:
    """Build a conversation from event objects; raises `EventFieldError` with the failing index in `.index`."""
    reader = EventReader()
    recorded = []
    for i, obj in enumerate(objects):
        try:
            reader.add(obj)
        except EventFieldError as err:
            err.index = i  # type: ignore[attr-defined]
            raise
        recorded.append(obj)
    warnings = tuple(Problem(w.message) for w in reader.warnings)  # no file: the caller knows where they came from
    return Conversation(tuple(reader.events), source, conversation_id, recorded, warnings=warnings)
