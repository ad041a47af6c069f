"""The canonical conversation record: typed events with their index and turn.

Every part of dialogcheck (checks, judge, simulation, reports) reads this
model. Events are read once into small frozen records (`parse.py`); turns and
an index by event type are computed once per conversation, so a check scans
only the events it cares about.

Events are `msgspec.Struct`s: the same classes are what msgspec decodes a
tracker line into (`fast.py`) and what a recorded object is converted into
(`parse.py`), so one set of field types says what every source may hold.
`gc=False` keeps the millions of events of a production log out of the garbage
collector's scans (they hold no cycles).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal

import msgspec
import orjson

from ..errors import Problem

#: Mantle's lifecycle tools: recorded as `tool_executed`, never counted as tool runs. The default of the
#: `framework_tools` setting (eval/conftest.yml, SOP files), for agents that own a tool of such a name.
FRAMEWORK_TOOLS: frozenset[str] = frozenset(
    {
        "activate",
        "complete",
        "cancel",
        "complete_skill",
        "cancel_skill",
        "set_fields",
        "correct",
        "resolve_tool_confirmation",
        "listen",
        "hangup",
    }
)

SKILL_EVENTS = ("skill_activated", "skill_completed", "skill_cancelled", "skill_interrupted", "skill_resumed")
BLOCK_EVENTS = (
    "ordered_block_entered",
    "ordered_block_completed",
    "ordered_block_cancelled",
    "ordered_block_interrupted",
    "ordered_block_resumed",
)


class Record(msgspec.Struct, frozen=True, gc=False):
    """A small frozen record, out of the garbage collector's reach (see the module docstring)."""


#: Fields the reader fills in, never read from a recorded object. Their names in the classes' JSON form keep
#: them apart from a log's own `"type"`, `"index"` or `"turn"` keys; a key spelt like one of these names is
#: not read either (`parse.py` reads only recorded names, a decoded `type` can only be its class's own, and
#: `settle` sets index and turn).
NOT_RECORDED = {name: f"(dialogcheck {name})" for name in ("type", "index", "turn")}


class Event(Record, frozen=True, tag_field="event", kw_only=True, rename=NOT_RECORDED):
    """Fields every event has.

    Each event type has its own class, tagged with the `event` value it is
    recorded under, whose `type` can be nothing else (a recorded key spelt like
    the type field's JSON name cannot change it); any other type is a plain
    `Event` naming its `type`. The known types refuse fields they do not read,
    so a decoded line is known to hold no misspelt field (`typos.py`). The
    objects as recorded are kept on the `Conversation` (`raw_events`).
    """

    type: str
    index: int = 0
    turn: int = 0
    timestamp: int | float | None = None
    metadata: dict[str, Any] = {}

    kind: ClassVar[str] = "event"


class UserMessage(Event, frozen=True, tag="user", kw_only=True, forbid_unknown_fields=True):
    type: Literal["user"] = "user"
    text: str | None = ""  # null reads as "" (`parse.settle` sees to it)

    kind: ClassVar[str] = "user"

    @property
    def opens_turn(self) -> bool:
        return opens_turn(self.text)


class Button(Record, frozen=True):
    title: str | None = None
    payload: str | None = None


class BotMessage(Event, frozen=True, tag="bot", kw_only=True, forbid_unknown_fields=True):
    type: Literal["bot"] = "bot"
    text: str | None = ""  # null reads as "" (`parse.settle` sees to it)
    utter_name: str | None = None
    buttons: tuple[Button, ...] = ()
    data: dict[str, Any] | None = None  # the tracker form's `data.buttons`, read by the loader

    kind: ClassVar[str] = "bot"


class SkillEvent(Event, frozen=True, kw_only=True):
    """`skill_activated`, `_completed`, `_cancelled`, `_interrupted`, `_resumed`."""

    skill_id: str
    step_id: str | None = None

    kind: ClassVar[str] = "skill"


class BlockEvent(Event, frozen=True, kw_only=True):
    """`ordered_block_entered`, `_completed`, `_cancelled`, `_interrupted`, `_resumed`."""

    skill_id: str
    block_id: str
    step_id: str | None = None

    kind: ClassVar[str] = "block"


class MemorySet(Event, frozen=True, tag="memory_set", kw_only=True, forbid_unknown_fields=True):
    type: Literal["memory_set"] = "memory_set"
    key: str
    value: Any

    kind: ClassVar[str] = "memory_set"


class MemoryCleared(Event, frozen=True, tag="memory_cleared", kw_only=True, forbid_unknown_fields=True):
    type: Literal["memory_cleared"] = "memory_cleared"
    key: str

    kind: ClassVar[str] = "memory_cleared"


class ToolRun(Event, frozen=True, tag="tool_executed", kw_only=True, forbid_unknown_fields=True):
    """A `tool_executed` event. `counted` is false for framework tools."""

    type: Literal["tool_executed"] = "tool_executed"
    tool_name: str
    source: Literal["local", "mcp"]
    arguments: dict[str, Any] = {}
    result: Any = None
    is_error: bool = False
    error_message: str | None = None
    mcp_server: str | None = None
    skill_id: str | None = None

    kind: ClassVar[str] = "tool"

    @property
    def counted(self) -> bool:
        return self.tool_name not in FRAMEWORK_TOOLS

    @property
    def connector(self) -> str | None:
        """The MCP server, else the catalog named in metadata (SOP name resolution)."""
        if self.mcp_server is not None:
            return self.mcp_server
        catalog = self.metadata.get("catalog")
        return catalog if isinstance(catalog, str) else None

    @property
    def label(self) -> str:
        where = f"mcp:{self.mcp_server}" if self.source == "mcp" else "local"
        return f"{self.tool_name} ({where})"


def _tagged(base: type[Event], name: str) -> type[Event]:
    """The class of events recorded as `name`: `base` with that tag and `type`."""
    return msgspec.defstruct(  # type: ignore[return-value]  # a subclass of `base`, which msgspec's stubs cannot say
        "".join(part.title() for part in name.split("_")),
        [("type", Literal[name], name)],
        bases=(base,),
        tag=name,
        kw_only=True,
        forbid_unknown_fields=True,
        module=__name__,
    )


#: The class of every event type with fields of its own, by its `event` value.
EVENT_CLASSES: dict[str, type[Event]] = {
    "user": UserMessage,
    "bot": BotMessage,
    "memory_set": MemorySet,
    "memory_cleared": MemoryCleared,
    "tool_executed": ToolRun,
    **{name: _tagged(SkillEvent, name) for name in SKILL_EVENTS},
    **{name: _tagged(BlockEvent, name) for name in BLOCK_EVENTS},
}
globals().update({cls.__name__: cls for cls in EVENT_CLASSES.values()})  # importable by name, so they pickle


def opens_turn(text: str | None) -> bool:
    """A user message opens a turn unless it is blank or a `/command`."""
    stripped = (text or "").strip()
    return bool(stripped) and not stripped.startswith("/")


@dataclass(frozen=True)
class World:
    """The state an environment (`eval/environments/NAME.yml`) held for one conversation: what it began with and
    what the agent's calls left, as JSON bytes (never shared, never changed), and how to replay calls.

    `replay(calls)` is the state a list of `{tool, arguments}` calls leaves on a fresh copy of `initial`, the
    faults off (tau-bench's grading rule); None when the environment that made the state is not at hand.
    """

    name: str
    initial_json: bytes
    final_json: bytes
    replay: Callable[[Sequence[Mapping[str, Any]]], Any] | None = field(default=None, repr=False, compare=False)
    #: The sha256 of the environment that made the states ("": not known), so a replay is made by that one only.
    digest: str = ""

    @property
    def initial(self) -> Any:
        """The starting state (a fresh copy each time)."""
        return orjson.loads(self.initial_json)

    @property
    def final(self) -> Any:
        """The state the conversation ended with (a fresh copy each time)."""
        return orjson.loads(self.final_json)


class ReplayRefused(Exception):
    """What `World.replay` raises when the environment answers one of the calls with an error (an unknown tool,
    arguments that do not fit its schema, a record that is not there): an expected call that cannot be made on
    the starting state is a mistake in the scenario, so the replay must not quietly leave the state as it was."""

    def __init__(self, number: int, tool: str, reason: str):
        #: The call's place in the list, from 1.
        self.number = number
        self.tool = tool
        self.reason = reason
        super().__init__(f"expected call {number} ({tool}) was answered with an error when replayed: {reason}")


@dataclass(frozen=True)
class Conversation:
    """An ordered list of events plus the indexes checks need.

    `events[i].index == i`. Turn 0 holds every event before the first real
    user message; each such message opens the next turn. `recorded` is what
    the events were read from: their objects, or the JSON text that holds
    them (decoded again only when `raw_events` is asked for).
    """

    events: tuple[Event, ...]
    source: str = "<memory>"
    conversation_id: str | None = None
    recorded: Sequence[Mapping[str, Any]] | bytes | None = field(default=None, repr=False, compare=False)
    #: The slug of the scenario the record names (a tracker object's `scenario`), to pair it with one of several.
    scenario: str | None = None
    #: Probable typos in the record's names (`typos.py`), each at its file, line and column.
    warnings: tuple[Problem, ...] = field(default=(), repr=False, compare=False)
    #: The file and line where the record starts, for what is said about it as a whole (None: built in code).
    place: tuple[str, int] | None = field(default=None, compare=False)
    #: The environment's state before and after, when an environment answered the agent's tools (None: no state known).
    world: World | None = field(default=None, repr=False, compare=False)

    @cached_property
    def raw_events(self) -> Sequence[Mapping[str, Any]]:
        """Each event's object as recorded, unknown fields included."""
        recorded = self.recorded
        if isinstance(recorded, bytes):
            document = orjson.loads(recorded)
            return document["events"] if isinstance(document, dict) else document
        if recorded is not None:
            return recorded
        return [native_object(event) for event in self.events]

    @cached_property
    def by_type(self) -> Mapping[str, Sequence[Event]]:
        """The events of each type, in conversation order."""
        index: dict[str, list[Event]] = {}
        for event in self.events:
            index.setdefault(event.type, []).append(event)
        return index

    def of_type(self, *types: str) -> Sequence[Event]:
        """Events of the given types, in conversation order."""
        if len(types) == 1:
            return self.by_type.get(types[0], ())
        merged = [e for t in types for e in self.by_type.get(t, ())]
        merged.sort(key=lambda e: e.index)
        return merged

    @property
    def tool_runs(self) -> Sequence[ToolRun]:
        return self.by_type.get("tool_executed", ())  # type: ignore[return-value]  # the index holds only tool runs under this type

    @cached_property
    def counted_tool_runs(self) -> Sequence[ToolRun]:
        """The tool log under the default framework-tool list (`FRAMEWORK_TOOLS`)."""
        return self.tool_log(FRAMEWORK_TOOLS)

    @cached_property
    def _tool_logs(self) -> dict[frozenset[str], Sequence[ToolRun]]:
        return {}

    def tool_log(self, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> Sequence[ToolRun]:
        """The tool log: `tool_executed` events whose tool is not in `framework_tools`, in order.

        Each check passes the list its definition was loaded with; the log is built once per list and
        conversation, so the checks of one scenario share it.
        """
        logs = self._tool_logs
        log = logs.get(framework_tools)
        if log is None:
            log = logs[framework_tools] = [run for run in self.tool_runs if run.tool_name not in framework_tools]
        return log

    @property
    def bot_messages(self) -> Sequence[BotMessage]:
        return self.by_type.get("bot", ())  # type: ignore[return-value]  # the index holds only bot messages under this type

    @property
    def turn_count(self) -> int:
        return self.events[-1].turn + 1 if self.events else 1

    def __len__(self) -> int:
        return len(self.events)

    @classmethod
    def from_events(cls, events: Iterable[Event], source: str = "<memory>", conversation_id: str | None = None) -> Conversation:
        return cls(tuple(events), source, conversation_id)


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
