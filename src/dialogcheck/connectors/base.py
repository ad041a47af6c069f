"""The seam between the simulation loop and the agent under test.

Every connector (Rasa/Mantle server, generic HTTP JSON agent, Python
callable) answers the same three calls with plain data, its events read into
typed events where the answer is read. A connector that cannot reach or
understand the agent raises `AgentError`: the run is then errored (a harness
failure), never failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import DialogcheckError
from ..events.model import Conversation, Event, native_object
from ..events.parse import EventFieldError, EventReader


@dataclass(frozen=True)
class AgentButton:
    title: str | None
    payload: str | None = None


@dataclass(frozen=True)
class AgentMessage:
    text: str
    utter_name: str | None = None
    buttons: tuple[AgentButton, ...] = ()


@dataclass(frozen=True)
class AgentTurn:
    """What the agent said and did in answer to one message (or to the opening).

    `events` are the events (docs/concepts.md, the conversation record) this turn produced, typed; user and bot events may be left
    out. A connector written in Python may give them as native event objects instead: they are read as the
    turn is made (`events.parse`), and one that cannot be read raises `EventFieldError` naming its field.
    """

    messages: tuple[AgentMessage, ...] = ()
    events: tuple[Event, ...] = ()
    #: Each event as the agent recorded it, what `run_N.events.jsonl` holds (made from `events` when not given).
    recorded: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if len(self.recorded) != len(self.events) or not all(isinstance(event, Event) for event in self.events):
            events, recorded = read_events(self.events)
            object.__setattr__(self, "events", events)
            object.__setattr__(self, "recorded", recorded)

    @property
    def has_text(self) -> bool:
        return any(m.text.strip() for m in self.messages)


def read_events(items: Iterable[Event | Mapping[str, Any]]) -> tuple[tuple[Event, ...], tuple[dict[str, Any], ...]]:
    """Typed events and the native objects they are recorded as, from either: a typed event is kept and
    written in its native form, a native object is read (a copy of it kept). `EventFieldError` when one
    cannot be read, its position in `.index`."""
    reader = EventReader()
    events: list[Event] = []
    recorded: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if isinstance(item, Event):
            events.append(item)
            recorded.append(native_object(item))
            continue
        try:
            events.append(reader.add(item))
        except EventFieldError as err:
            err.index = i  # type: ignore[attr-defined]  # the failing event's index, read by the caller
            raise
        recorded.append(dict(item))
    return tuple(events), tuple(recorded)


class AgentError(DialogcheckError):
    """The agent could not be reached or answered something unreadable (a harness failure)."""


def safe_text(text: str) -> str:
    """`text` with any lone surrogate written as its escape (`\\ud800`), so a results file can hold it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe(err: BaseException) -> str:
    """`Type: message` (just `Type` without a message), as text any results file can hold."""
    try:
        message = str(err)
    except Exception:  # noqa: BLE001 - an agent's exception whose __str__ breaks
        message = "(its message cannot be read)"
    return safe_text(f"{type(err).__name__}: {message}" if message else type(err).__name__)


class AgentSetupError(DialogcheckError, ValueError):
    """The agent is named wrongly (bad URL, unimportable module, missing function).

    Raised when a connector is built, before any run, so the CLI can report it
    as bad input (exit 2) rather than as one errored run per scenario.
    """


class AgentConnector(Protocol):
    async def check_reachable(self) -> None:
        """Raise `AgentError` when the agent cannot be reached at all; checked once, before a batch starts."""
        ...

    async def open(self, conversation_id: str, initial_slots: Mapping[str, Any], **given: Any) -> AgentTurn:
        """Start a new conversation (and apply initial memory before the first turn).

        For a scenario with an environment, `open` and `send` are given `environment=` (an
        `environment.AgentEnvironment`: the run's tools, `call`, and the addresses they are served at); a connector
        of its own that takes no such keyword serves no scenario with an environment."""
        ...

    async def send(self, conversation_id: str, text: str, **given: Any) -> AgentTurn:
        """Send one user message; return the agent's answer for that turn."""
        ...

    async def recorded_events(self, conversation_id: str) -> Conversation | Sequence[Mapping[str, Any]] | None:
        """The agent's own full record of the conversation (a Rasa tracker), already read or as native event
        objects; None to use the turns."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
