"""Decoding a recorded conversation straight into event records: the path a production log takes.

The general loader (`load.py` with `parse.py`) reads JSON into dicts and then
builds each event in Python, checking every field with a message that names
it. Here msgspec decodes a tracker line directly into the tagged event
classes of `model.py`, in C, and one pass fills in what the JSON does not say
(index, turn, the tracker form's other spellings). Whatever it does not
accept (a field of the wrong type, a null where the fast types want a value,
an event type it has not met yet) makes it return None, and the general
loader reads the line again. So errors are worded in one place, and the two
paths can differ only in speed.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec.structs import force_setattr

from .model import EVENT_CLASSES, BotMessage, Event, ToolRun, UserMessage, opens_turn
from .parse import EventFieldError, _buttons

#: At most this many other event types (`action`, `slot`, ...) are learned; more go the general way.
MAX_LEARNED_TYPES = 256


class TrackerDecoder:
    """Decodes `{"events": [...], "sender_id"?: ...}` lines; learns the other event types it is shown."""

    def __init__(self) -> None:
        self._learned: dict[str, type[Event]] = {}
        self._learned_classes: frozenset[type[Event]] = frozenset()
        self._build()

    def _build(self) -> None:
        classes = (*EVENT_CLASSES.values(), *self._learned.values())
        tracker = msgspec.defstruct(
            "Tracker",
            [
                ("events", list[Union[classes]]),  # type: ignore[valid-type]
                ("sender_id", Any, None),
                ("conversation_id", Any, None),
                ("event", Any, msgspec.UNSET),  # an event object, not a tracker: the general loader says so
            ],
            gc=False,
        )
        self._decoder = msgspec.json.Decoder(tracker)
        self._learned_classes = frozenset(self._learned.values())

    def learn(self, events: Any) -> None:
        """Add the plain event types among `events` (built by the general loader) to what is decoded here."""
        new = {e.type for e in events if type(e) is Event and e.type not in self._learned and e.type not in EVENT_CLASSES}
        room = MAX_LEARNED_TYPES - len(self._learned)
        if not new or room <= 0:
            return
        for name in sorted(new)[:room]:
            self._learned[name] = msgspec.defstruct(
                f"Recorded{len(self._learned)}", [("type", str, name)], bases=(Event,), tag=name, kw_only=True
            )
        self._build()

    def decode(self, data: bytes) -> tuple[tuple[Event, ...], str | None] | None:
        """The events and conversation id of one tracker line, or None to let the general loader read it."""
        try:
            tracker = self._decoder.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None  # nesting past msgspec's depth: orjson's limit and message apply, as on any other line
        if tracker.event is not msgspec.UNSET:
            return None
        events = self._finish(tracker.events)
        if events is None:
            return None
        cid = tracker.sender_id if type(tracker.sender_id) is str else None
        if cid is None and type(tracker.conversation_id) is str:
            cid = tracker.conversation_id
        return events, cid

    def _finish(self, events: list[Event]) -> tuple[Event, ...] | None:
        """Index, turn and the tracker form's spellings, as `parse.py` would give them; None when they are invalid."""
        learned = self._learned_classes
        turn = 0
        for i, event in enumerate(events):
            cls = type(event)
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
                events[i] = Event(type=event.type, index=i, turn=turn, timestamp=event.timestamp, metadata=event.metadata)
                continue
            force_setattr(event, "index", i)
            force_setattr(event, "turn", turn)
        return tuple(events)


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
