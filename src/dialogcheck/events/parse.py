"""Read native event objects (tracker form or shorthand, docs/concepts.md, the conversation record) into typed events: the one way in.

Files (`load.py`, and the fast decoder of `fast.py`), agents' answers
(`connectors/`) and the events importers convert from other formats are all
read here, in two steps, each written once:

1. `decode`: msgspec converts the fields an event's type reads into its class
   (`model.py`), the classes and field types the fast decoder reads JSON text
   into. A null reads as the field's default; a name the type does not read
   is not read (`typos.py` warns when it looks like a typo).
2. `settle`: the tracker form's other spellings (`metadata.utter_action`,
   `data.buttons`, `metadata.skill_id`, a null `text`) are read, and the event
   gets its index and turn. The fast decoder settles its events here too.

An object msgspec refuses is gone over field by field, in a fixed order, for
an `EventFieldError` that names the field (`_explain`); the file loader adds
the position. No file is read here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

import msgspec
from msgspec.structs import force_setattr

from ..errors import Problem
from .model import (
    BLOCK_EVENTS,
    EVENT_CLASSES,
    NOT_RECORDED,
    SKILL_EVENTS,
    BotMessage,
    Button,
    Conversation,
    Event,
    ToolRun,
    UserMessage,
    opens_turn,
)
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


# ----------------------------------------------------------------------------- step 1: decode


class _Reads(msgspec.Struct, frozen=True):
    """What is read of an object of one event type: its class, the names read, and those that must be there."""

    cls: type[Event]
    names: frozenset[str]
    required: frozenset[str]
    #: The names an object converted as it is may hold: those read, and its `event`.
    whole: frozenset[str]


def _reads(cls: type[Event]) -> _Reads:
    fields = [f for f in msgspec.structs.fields(cls) if f.name not in NOT_RECORDED]
    names = frozenset(f.encode_name for f in fields)
    return _Reads(cls, names, frozenset(f.encode_name for f in fields if f.required), names | {"event"})


_READS: dict[str, _Reads] = {kind: _reads(cls) for kind, cls in EVENT_CLASSES.items()}
#: Any other type: a plain `Event`, whose type is the `event` value.
_PLAIN = _reads(Event)
#: The key the plain `Event`'s type is converted from (never a recorded one: see `NOT_RECORDED`).
_TYPE_KEY = NOT_RECORDED["type"]


def _kind(obj: Any) -> str:
    if not isinstance(obj, dict):
        raise EventFieldError("event", f"an event must be a JSON object, got {json_type(obj)}")
    kind = obj.get("event")
    if kind is None:
        raise EventFieldError("event", "field `event` is missing: every event names its type")
    if not isinstance(kind, str):
        raise EventFieldError("event", f"field `event` must be a string, got {json_type(kind)}")
    return kind


def _values(kind: str, obj: dict[str, Any], reads: _Reads) -> dict[str, Any]:
    """The values `obj` gives the fields its type reads. A null of a field with a default is left out (it reads
    as the default), and so is a top-level spelling that a nested one overrides (it is not read)."""
    values = {name: value for name, value in obj.items() if name in reads.names and (value is not None or name in reads.required)}
    metadata = obj.get("metadata")
    if kind == "bot":
        if isinstance(metadata, dict) and metadata.get("utter_action") is not None:
            values.pop("utter_name", None)
        data = obj.get("data")
        if isinstance(data, dict) and "buttons" in data:
            values.pop("buttons", None)
    elif kind == "tool_executed" and isinstance(metadata, dict) and metadata.get("skill_id") is not None:
        values.pop("skill_id", None)
    return values


def decode(obj: Any) -> Event:
    """`obj` as the typed event of its type, not settled yet (see `settle`); `EventFieldError` when it is invalid."""
    kind = _kind(obj)
    reads = _READS.get(kind)
    if reads is None:
        values = _values(kind, obj, _PLAIN)
        values[_TYPE_KEY] = kind
        reads = _PLAIN
    elif obj.keys() <= reads.whole:
        try:
            return msgspec.convert(obj, reads.cls)  # the common case: every name read, no null to default
        except msgspec.ValidationError:
            values = _values(kind, obj, reads)
    else:
        values = _values(kind, obj, reads)
    try:
        return msgspec.convert(values, reads.cls)
    except msgspec.ValidationError as err:
        _explain(kind, obj)
        raise EventFieldError("event", f"the event cannot be read: {err}") from None


# ----------------------------------------------------------------------------- step 2: settle


def _spelled(metadata: Mapping[str, Any], key: str) -> str | None:
    """`metadata[key]`, a field's tracker-form spelling: None when absent or null, else it must be a string."""
    value = metadata.get(key) if metadata else None
    if value is None or type(value) is str:
        return value
    raise EventFieldError(key, f"field `metadata.{key}` must be a string, got {json_type(value)}")


def _buttons(obj: Mapping[str, Any], data: Mapping[str, Any]) -> tuple[Button, ...]:
    """`data.buttons` when `data` has them, else the shorthand `buttons`."""
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


def _settle_bot(event: BotMessage) -> None:
    if event.text is None:
        force_setattr(event, "text", "")  # a bot message with only buttons
    utter = _spelled(event.metadata, "utter_action")
    if utter is not None:
        force_setattr(event, "utter_name", utter)
    if event.data is not None:
        if "buttons" in event.data:
            force_setattr(event, "buttons", _buttons({}, event.data))
        force_setattr(event, "data", None)  # read: nothing else of it is kept on the event


def settle(
    events: list[Event], start: int = 0, turn: int = 0, *, records: Mapping[type, Callable[[Any], Event]] = MappingProxyType({})
) -> int:
    """Finish decoded events in place, each as the event at its index in `events`, from `start` on, after an
    event of turn `turn`: its other spellings read, its index set, and its turn, the next one when it is a user
    message that opens a turn. Returns the turn of the last. One loop over a whole conversation, as the fast
    decoder settles a line's events at once; an event of a class in `records` (one only that decoder reads
    into) is first replaced by the record `records[class]` makes of it."""
    for index in range(start, len(events)):
        event = events[index]
        cls = type(event)
        if cls in records:
            event = events[index] = records[cls](event)
            cls = type(event)
        # `cls is X` narrows no type for mypy, and an isinstance() per event would cost the hot loop: hence the ignores.
        if cls is UserMessage:
            if event.text is None:  # type: ignore[attr-defined]  # a UserMessage
                force_setattr(event, "text", "")
            elif opens_turn(event.text):  # type: ignore[attr-defined]  # a UserMessage
                turn += 1
        elif cls is BotMessage:
            _settle_bot(event)  # type: ignore[arg-type]  # a BotMessage
        elif cls is ToolRun and event.metadata:
            skill_id = _spelled(event.metadata, "skill_id")
            if skill_id is not None:
                force_setattr(event, "skill_id", skill_id)
        force_setattr(event, "index", index)
        force_setattr(event, "turn", turn)
    return turn


# ----------------------------------------------------------------------------- why an object is refused


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


def _mapping(obj: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = obj.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EventFieldError(name, f"field `{name}` must be an object, got {json_type(value)}")
    return value


def _text(obj: Mapping[str, Any]) -> None:
    value = obj.get("text")
    if value is not None and not isinstance(value, str):
        raise EventFieldError("text", f"field `text` must be a string or null, got {json_type(value)}")


def _explain_bot(obj: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    data = _mapping(obj, "data")
    if _spelled(metadata, "utter_action") is None:
        _string(obj, "utter_name", required=False)
    _text(obj)
    _buttons(obj, data)


def _explain_skill(obj: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    _string(obj, "skill_id")
    _string(obj, "step_id", required=False)


def _explain_block(obj: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    _string(obj, "skill_id")
    _string(obj, "block_id")
    _string(obj, "step_id", required=False)


def _explain_memory_set(obj: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    if "value" not in obj:
        raise EventFieldError("value", "field `value` is missing")
    _string(obj, "key")


def _explain_tool(obj: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    source = _string(obj, "source")
    if source not in ("local", "mcp"):
        raise EventFieldError("source", f"field `source` must be 'local' or 'mcp', got {source!r}")
    is_error = obj.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        raise EventFieldError("is_error", f"field `is_error` must be a boolean, got {json_type(is_error)}")
    if _spelled(metadata, "skill_id") is None:
        _string(obj, "skill_id", required=False)
    _string(obj, "tool_name")
    _mapping(obj, "arguments")
    _string(obj, "error_message", required=False)
    _string(obj, "mcp_server", required=False)


_EXPLAIN: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], object]] = {
    "user": lambda obj, metadata: _text(obj),
    "bot": _explain_bot,
    "memory_set": _explain_memory_set,
    "memory_cleared": lambda obj, metadata: _string(obj, "key"),
    "tool_executed": _explain_tool,
    **dict.fromkeys(SKILL_EVENTS, _explain_skill),
    **dict.fromkeys(BLOCK_EVENTS, _explain_block),
}


def _explain(kind: str, obj: Mapping[str, Any]) -> None:
    """Raise the `EventFieldError` of the first field, in a fixed order, that makes `obj` unreadable."""
    timestamp = obj.get("timestamp")
    if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, (int, float))):
        raise EventFieldError("timestamp", f"field `timestamp` must be a number, got {json_type(timestamp)}")
    metadata = _mapping(obj, "metadata")
    explain = _EXPLAIN.get(kind)
    if explain is not None:
        explain(obj, metadata)


# ----------------------------------------------------------------------------- whole conversations


class EventReader:
    """Reads event objects one at a time into a conversation's order, noting probable typos in their names."""

    def __init__(self) -> None:
        self.turn = 0
        self.events: list[Event] = []
        self.warnings: list[NameWarning] = []

    def add(self, obj: Any) -> Event:
        """Read one recorded object as the next event."""
        self.events.append(decode(obj))
        try:
            self.turn = settle(self.events, len(self.events) - 1, self.turn)
        except EventFieldError:
            self.events.pop()  # not read: the next object takes its place
            raise
        event = self.events[-1]
        fields = KNOWN_FIELDS.get(event.type)
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
            err.index = i  # type: ignore[attr-defined]  # the failing event's index, read by the caller
            raise
        recorded.append(obj)
    warnings = tuple(Problem(w.message) for w in reader.warnings)  # no file: the caller knows where they came from
    return Conversation(tuple(reader.events), source, conversation_id, recorded, warnings=warnings)
