"""Decoding a recorded conversation straight into event records: the path a production log takes.

msgspec decodes a tracker line in C into the event classes of `model.py`, the
classes the general reader (`parse.py`) converts objects into, and the line's
events are then settled by the general reader's own `settle` (their index,
turn and the tracker form's other spellings). Whatever it does not accept (a
field of the wrong type, a null where a class wants a value, an event type or
a field it has not met yet) makes it return None, and the general reader reads
the line again. So errors and warnings are worded in one place, and the two
paths can differ only in speed.

Where msgspec reads JSON text differently from orjson, which reads it for the
general reader, the line goes the general way too: an integer orjson cannot
hold exactly (it reads one of 19 digits or more as a float, msgspec as an
exact int). A key spelt like the name the type field goes by in the classes'
JSON form cannot set an event's type: each class's `type` is the one value
it is tagged with.

The known event types refuse fields they do not read. A field the general
reader found harmless (Rasa's `parse_data` on a user event: not one edit from
a field the type reads, see `typos.py`) is learned: the decoder then reads
that type into a subclass that takes the field (and drops it), so later lines
stay fast, and a misspelt field always sends its line the general way, where
it is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Union, cast

import msgspec

from .model import EVENT_CLASSES, NOT_RECORDED, Event
from .parse import EventFieldError, settle
from .typos import KNOWN_FIELDS, NameWarning, field_hint, type_hint

#: The keys the fields the reader fills in go by in the classes' JSON form: never learned as harmless.
_NOT_RECORDED_KEYS = frozenset(NOT_RECORDED.values())
#: At most this many other event types (`action`, `slot`, ...) are learned; more go the general way.
MAX_LEARNED_TYPES = 256
#: At most this many harmless fields of known types (`parse_data`, `input_channel`, ...) are learned.
MAX_LEARNED_FIELDS = 256
#: A line's shape: digits as "0", an exponent's marks "e", "E" and "+" as "e", anything else as "x"; a run of
#: `_LONG_RUN` in it is a run of as many digits, and a `_BIG_EXPONENT` an exponent of three digits or more.
_SHAPES = bytes(48 if 48 <= byte <= 57 else 101 if byte in b"eE+" else 120 for byte in range(256))
#: orjson reads an integer of this many digits or more as a float when it is past 64 bits; msgspec keeps it exact.
_LONG_RUN = b"0" * 19
#: orjson refuses a number past a double's range (`1e400`, bad input); msgspec may skip it unread in a key it ignores.
#: With or without its sign (`1e+400` is shaped "0ee000"), one search finds it.
_BIG_EXPONENT = b"e000"
#: What may stand before a JSON number (with white space between): a number, not digits inside a string.
_BEFORE_NUMBER = frozenset(b":,[")
_WHITE = frozenset(b" \t\r\n")


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
        self._suspects: dict[type[Event], str] = {}  # learned types one edit from a known one -> that one
        self._extras: dict[str, list[str]] = {}  # known type -> harmless fields learned for it
        #: A class only this decoder reads into (a learned type's, a known type's taking extras) -> a copier of
        #: its events into the record of their type: a plain `Event`, as the general reader makes it, or the known class.
        self._records: dict[type[Event], Callable[[Any], Event]] = {}
        self._build()

    def _build(self) -> None:
        known = []
        self._records = dict.fromkeys(self._learned.values(), _copier(Event))
        for kind, cls in EVENT_CLASSES.items():
            extras = self._extras.get(kind)
            if extras:
                wider = _taking(cls, extras)
                self._records[wider] = _copier(cls)
                cls = wider
            known.append(cls)
        classes = (*known, *self._learned.values())
        tracker = msgspec.defstruct(
            "Tracker",
            [
                ("events", list[Union[classes]]),  # type: ignore[valid-type]  # a union of classes built at run time
                ("sender_id", Any, None),
                ("conversation_id", Any, None),
                ("scenario", Any, None),
                ("event", Any, msgspec.UNSET),  # an event object, not a tracker: the general loader says so
            ],
            gc=False,
        )
        self._decoder = msgspec.json.Decoder(tracker)

    def learn(self, events: Sequence[Event], recorded: Sequence[Any]) -> None:
        """Take what the general loader read from a line (its events and their objects as recorded): plain
        event types become decodable here, and so do the harmless fields of known types."""
        new = {e.type for e in events if type(e) is Event and e.type not in self._learned and e.type not in EVENT_CLASSES}
        room = MAX_LEARNED_TYPES - len(self._learned)
        changed = False
        for name in sorted(new)[: max(room, 0)]:
            cls = cast("type[Event]", msgspec.defstruct(f"Recorded{len(self._learned)}", [("type", Literal[name], name)], bases=(Event,), tag=name, kw_only=True))
            self._learned[name] = cls
            if hint := type_hint(name):
                self._suspects[cls] = hint
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
            if fields is None or not isinstance(kind, str) or obj.keys() <= fields:  # `fields` is None unless `kind` is a str
                continue
            known = self._extras.setdefault(kind, [])
            for name in obj:
                if room > 0 and name not in fields and name not in known and name not in _NOT_RECORDED_KEYS and field_hint(kind, name) is None:
                    known.append(name)
                    room -= 1
                    changed = True
        return changed

    def decode(self, data: bytes) -> Decoded | None:
        """One tracker line, or None to let the general loader read it."""
        if _may_hold_a_number_read_apart(data):
            return None
        try:
            tracker: Any = self._decoder.decode(data)  # an instance of the tracker class `_build` made
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
        """The events settled as the general reader settles them (`parse.settle`), each the record of its type;
        None when it would read them otherwise."""
        suspects = self._suspects
        if suspects:
            warnings.extend(NameWarning(i, event.type, suspects[type(event)]) for i, event in enumerate(events) if type(event) in suspects)
        try:
            settle(events, records=self._records)
        except EventFieldError:
            return None
        return tuple(events)


def _may_hold_a_number_read_apart(data: bytes) -> bool:
    """Whether `data` may hold a number the two readers read apart: an integer of 19 digits or more, or one with a
    positive exponent of three digits or more (a number starts after `:`, `,` or `[`, never inside a string)."""
    shape = data.translate(_SHAPES)
    at = shape.find(_LONG_RUN)
    while at >= 0:
        if _starts_a_number(data, at):
            return True
        at = shape.find(_LONG_RUN, at + len(_LONG_RUN))  # within the same run, digits stand before: no start
    at = shape.find(_BIG_EXPONENT)
    while at >= 0:
        start = at
        while start > 0 and (shape[start - 1] in b"0e" or data[start - 1] == 46):  # the mantissa, its point and the "e"
            start -= 1
        if shape[start] == 48 and _starts_a_number(data, start):  # a mantissa's first digit
            return True
        at = shape.find(_BIG_EXPONENT, at + 1)
    return False


def _starts_a_number(data: bytes, start: int) -> bool:
    """Whether the digits at `start` begin a JSON number: after a delimiter, an optional minus sign and white space."""
    before = start - 1
    if before >= 0 and data[before] == 45:  # a minus sign
        before -= 1
    while before >= 0 and data[before] in _WHITE:
        before -= 1
    return before >= 0 and data[before] in _BEFORE_NUMBER


def _copier(cls: type[Event]) -> Any:
    """A function making a `cls` of an instance of a subclass, its own fields copied.

    Written out as `cls(type=e.type, index=e.index, ...)` once per class, as dataclasses write their
    `__init__`, so copying an event read with a learned field (every user event of a Rasa tracker carries
    `parse_data`) is one call, not a dict of its fields built and unpacked.
    """
    fields = ", ".join(f"{name}=e.{name}" for name in cls.__struct_fields__)
    return eval(f"lambda e: cls({fields})", {"cls": cls})  # noqa: S307 - the field names are the class's own


def _taking(cls: type[Event], extras: list[str]) -> type[Event]:
    """`cls` widened to accept `extras` (kept as raw JSON, under names that cannot clash with its own)."""
    fields = [(f"extra_{i}", msgspec.Raw, msgspec.field(default=msgspec.UNSET, name=name)) for i, name in enumerate(extras)]
    taking = msgspec.defstruct(f"{cls.__name__}Taking", fields, bases=(cls,), tag=cls.__struct_config__.tag, kw_only=True, forbid_unknown_fields=True, gc=False)
    return cast("type[Event]", taking)
