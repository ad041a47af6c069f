"""Decoding a recorded conversation straight into event records: the path a production log takes.

The general loader (`load.py` with `parse.py`) reads JSON into dicts and then
builds each event in Python, checking every field with a message that names
it. Here msgspec decodes a tracker line directly into the tagged event
classes of `model.py`, in C, and one pass fills in what the JSON does not say
(index, turn, the tracker form's other spellings). Whatever it does not
accept (a field of the wrong type, a null where the fast types want a value,
an event type or a field it has not met yet) makes it return None, and the
general loader reads the line again. So errors and warnings are worded in one
place, and the two paths can differ only in speed.

The known event types refuse fields they do not read. A field the general
loader found harmless (Rasa's `parse_data` on a user event: not one edit from
a field the type reads, see `typos.py`) is learned: the decoder then reads
that type into a subclass that takes the field (and drops it), so later lines
stay fast, and a misspelt field always sends its line the general way, where
it is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

import msgspec
from msgspec.structs import force_setattr

from .model import EVENT_CLASSES, BotMessage, Event, ToolRun, UserMessage, opens_turn
from .parse import EventFieldError, _buttons
from .typos import KNOWN_FIELDS, NameWarning, field_hint, type_hint

#: At most this many other event types (`action`, `slot`, ...) are learned; more go the general way.
MAX_LEARNED_TYPES = 256
#: At most this many harmless fields of known types (`parse_data`, `input_channel`, ...) are learned.
MAX_LEARNED_FIELDS = 256


class Decoded(msgspec.Struct, gc=False):
    """One tracker line, decoded: its events, conversation id, the scenario it names, and probable typos."""

    events: tuple[Event, ...]
    conversation_id: str | None
    scenario: str | None
    warnings: list[NameWarning] | None


class TrackerDecoder:
    """Decodes `{"events": [...], "sender_id"?: ...}` lines; learns the other event types and fields it is shown."""

    def __init__(self) -> None:
        self._learned: dict[str, type[Event]] = {}
        self._learned_classes: frozenset[type[Event]] = frozenset()
        self._suspects: dict[type[Event], str] = {}  # learned types one edit from a known one -> that one
        self._extras: dict[str, list[str]] = {}  # known type -> harmless fields learned for it
        self._canonical: dict[type[Event], tuple[type[Event], Any]] = {}  # a subclass taking extras -> (its class, a copier)
        self._build()

    def _build(self) -> None:
        known = []
        self._canonical = {}
        for kind, cls in EVENT_CLASSES.items():
            extras = self._extras.get(kind)
            if extras:
                wider = _taking(cls, extras)
                self._canonical[wider] = (cls, _copier(cls))
                cls = wider
            known.append(cls)
        classes = (*known, *self._learned.values())
        tracker = msgspec.defstruct(
            "Tracker",
            [
                ("events", list[Union[classes]]),  # type: ignore[valid-type]
                ("sender_id", Any, None),
                ("conversation_id", Any, None),
                ("scenario", Any, None),
                ("event", Any, msgspec.UNSET),  # an event object, not a tracker: the general loader says so
            ],
            gc=False,
        )
        self._decoder = msgspec.json.Decoder(tracker)
        self._learned_classes = frozenset(self._learned.values())

    def learn(self, events: Sequence[Event], recorded: Sequence[Any]) -> None:
        """Take what the general loader read from a line (its events and their objects as recorded): plain
        event types become decodable here, and so do the harmless fields of known types."""
        new = {e.type for e in events if type(e) is Event and e.type not in self._learned and e.type not in EVENT_CLASSES}
        room = MAX_LEARNED_TYPES - len(self._learned)
        changed = False
        for name in sorted(new)[: max(room, 0)]:
            cls = msgspec.defstruct(f"Recorded{len(self._learned)}", [("type", str, name)], bases=(Event,), tag=name, kw_only=True)
            self._learned[name] = cls
            if type_hint(name):
                self._suspects[cls] = type_hint(name)
            changed = True
        changed = self._learn_fields(recorded) or changed
        if changed:
            self._build()

    def _learn_fields(self, recorded: Sequence[Any]) -> bool:
        room = MAX_LEARNED_FIELDS - sum(len(v) for v in self._extras.values())
        changed = False
        for obj in recorded:
            kind = obj.get("event") if isinstance(obj, dict) else None
            fields = KNOWN_FIELDS.get(kind) if isinstance(kind, str) else None
            if fields is None or obj.keys() <= fields:
                continue
            known = self._extras.setdefault(kind, [])
            for name in obj:
                if room > 0 and name not in fields and name not in known and field_hint(kind, name) is None:
                    known.append(name)
                    room -= 1
                    changed = True
        return changed

    def decode(self, data: bytes) -> Decoded | None:
        """One tracker line, or None to let the general loader read it."""
        try:
            tracker = self._decoder.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None  # nesting past msgspec's depth: orjson's limit and message apply, as on any other line
        if tracker.event is not msgspec.UNSET:
            return None
        scenario = tracker.scenario
        if scenario is not None and type(scenario) is not str:
            return None
        warnings: list[NameWarning] = []
        events = self._finish(tracker.events, warnings)
        if events is None:
            return None
        cid = tracker.sender_id if type(tracker.sender_id) is str else None
        if cid is None and type(tracker.conversation_id) is str:
            cid = tracker.conversation_id
        return Decoded(events, cid, scenario, warnings or None)

    def _finish(self, events: list[Event], warnings: list[NameWarning]) -> tuple[Event, ...] | None:
        """Index, turn and the tracker form's spellings, as `parse.py` would give them; None when they are invalid."""
        learned = self._learned_classes
        canonical = self._canonical
        turn = 0
        for i, event in enumerate(events):
            cls = type(event)
            if canonical and cls in canonical:  # read with a learned field: the record is the known type's own
                cls, copy = canonical[cls]
                event = events[i] = copy(event)
            if cls is UserMessage:
                text = event.text
                if text is None:
                    force_setattr(event, "text", "")
                elif opens_turn(text):
                    turn += 1
            elif cls is BotMessage:
                if not _finish_bot(event):
                    return None
            elif cls is ToolRun:
                skill_id = event.metadata.get("skill_id") if event.metadata else None
                if skill_id is not None:
                    if type(skill_id) is not str:
                        return None
                    force_setattr(event, "skill_id", skill_id)
            elif cls in learned:  # any other type is a plain `Event`, as the general loader makes it
                if cls in self._suspects:
                    warnings.append(NameWarning(i, event.type, self._suspects[cls]))
                events[i] = Event(type=event.type, index=i, turn=turn, timestamp=event.timestamp, metadata=event.metadata)
                continue
            force_setattr(event, "index", i)
            force_setattr(event, "turn", turn)
        return tuple(events)


def _copier(cls: type[Event]) -> Any:
    """A function making a `cls` of an instance of a subclass, its own fields copied.

    Written out as `cls(type=e.type, index=e.index, ...)` once per class, as dataclasses write their
    `__init__`: a user event of a Rasa tracker (which carries `parse_data`) is copied so, ten times cheaper
    than through a dict of its fields, which made the copy most of what learning fields cost.
    """
    fields = ", ".join(f"{name}=e.{name}" for name in cls.__struct_fields__)
    return eval(f"lambda e: cls({fields})", {"cls": cls})  # noqa: S307 - the field names are the class's own


def _taking(cls: type[Event], extras: list[str]) -> type[Event]:
    """`cls` widened to accept `extras` (kept as raw JSON, under names that cannot clash with its own)."""
    fields = [(f"extra_{i}", msgspec.Raw, msgspec.field(default=msgspec.UNSET, name=name)) for i, name in enumerate(extras)]
    return msgspec.defstruct(f"{cls.__name__}Taking", fields, bases=(cls,), tag=cls.__struct_config__.tag, kw_only=True, forbid_unknown_fields=True, gc=False)


def _finish_bot(event: BotMessage) -> bool:
    if event.text is None:
        force_setattr(event, "text", "")
    if event.metadata:
        utter = event.metadata.get("utter_action")
        if utter is not None:
            if type(utter) is not str:
                return False
            force_setattr(event, "utter_name", utter)
    data = event.data
    if data is not None:
        if "buttons" in data:
            try:
                force_setattr(event, "buttons", _buttons({}, data))
            except EventFieldError:
                return False
        force_setattr(event, "data", None)  # read; the record is the same as the general loader's
    return True
