"""The canonical conversation record: typed events with their index and turn.

Every part of dialogcheck (checks, judge, simulation, reports) reads this
model. Events are parsed once into small frozen records; turns and an index by
event type are computed once when the conversation is built, so a check scans
only the events it cares about.

Events are `msgspec.Struct`s rather than dataclasses: a frozen dataclass
builds itself field by field through `object.__setattr__` (3.5 µs for a tool
run), a struct in C (0.14 µs), and `gc=False` keeps millions of them out of
the garbage collector's scans. Checking a production log builds one per line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import msgspec

#: Mantle's lifecycle tools: recorded as `tool_executed`, never counted as tool runs.
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
    """A frozen record built in C (see the module docstring)."""


class Event(Record):
    """Fields every event has. `raw` keeps the object as recorded."""

    type: str
    index: int
    turn: int
    timestamp: float | None
    metadata: Mapping[str, Any]
    raw: Mapping[str, Any]

    kind: ClassVar[str] = "event"

    @property
    def where(self) -> str:
        return f"event {self.index} (turn {self.turn})"


class UserMessage(Event):
    text: str = ""

    kind: ClassVar[str] = "user"

    @property
    def opens_turn(self) -> bool:
        return opens_turn(self.text)


class Button(Record):
    title: str | None
    payload: str | None = None


class BotMessage(Event):
    text: str = ""
    utter_name: str | None = None
    buttons: tuple[Button, ...] = ()

    kind: ClassVar[str] = "bot"


class SkillEvent(Event):
    """`skill_activated`, `_completed`, `_cancelled`, `_interrupted`, `_resumed`."""

    skill_id: str = ""
    step_id: str | None = None

    kind: ClassVar[str] = "skill"


class BlockEvent(Event):
    """`ordered_block_entered`, `_completed`, `_cancelled`, `_interrupted`, `_resumed`."""

    skill_id: str = ""
    block_id: str = ""
    step_id: str | None = None

    kind: ClassVar[str] = "block"


class MemorySet(Event):
    key: str = ""
    value: Any = None

    kind: ClassVar[str] = "memory_set"


class MemoryCleared(Event):
    key: str = ""

    kind: ClassVar[str] = "memory_cleared"


class ToolRun(Event):
    """A `tool_executed` event. `counted` is false for framework tools."""

    tool_name: str = ""
    arguments: Mapping[str, Any] = msgspec.field(default_factory=dict)
    source: str = "local"
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


def opens_turn(text: str | None) -> bool:
    """A user message opens a turn unless it is blank or a `/command`."""
    stripped = (text or "").strip()
    return bool(stripped) and not stripped.startswith("/")


@dataclass(frozen=True)
class Conversation:
    """An ordered list of events plus the indexes checks need.

    `events[i].index == i`. Turn 0 holds every event before the first real
    user message; each such message opens the next turn.
    """

    events: tuple[Event, ...]
    source: str = "<memory>"
    conversation_id: str | None = None

    @cached_property
    def by_type(self) -> Mapping[str, Sequence[Event]]:
        index: dict[str, list[Event]] = {}
        for event in self.events:
            bucket = index.get(event.type)
            if bucket is None:
                index[event.type] = [event]
            else:
                bucket.append(event)
        return index

    def of_type(self, *types: str) -> Sequence[Event]:
        """Events of the given types, in conversation order."""
        if len(types) == 1:
            return self.by_type.get(types[0], ())
        merged = [e for t in types for e in self.by_type.get(t, ())]
        merged.sort(key=lambda e: e.index)
        return merged

    @cached_property
    def tool_runs(self) -> Sequence[ToolRun]:
        return self.by_type.get("tool_executed", ())  # type: ignore[return-value]

    @cached_property
    def counted_tool_runs(self) -> Sequence[ToolRun]:
        """The tool log: `tool_executed` events that are not framework tools."""
        return [run for run in self.tool_runs if run.counted]

    @cached_property
    def bot_messages(self) -> Sequence[BotMessage]:
        return self.by_type.get("bot", ())  # type: ignore[return-value]

    @property
    def turn_count(self) -> int:
        return self.events[-1].turn + 1 if self.events else 1

    def __len__(self) -> int:
        return len(self.events)

    @classmethod
    def from_events(cls, events: Iterable[Event], source: str = "<memory>", conversation_id: str | None = None) -> Conversation:
        return cls(tuple(events), source, conversation_id)
