"""The seam between the simulation loop and the agent under test.

Every connector (Rasa/Mantle server, generic HTTP JSON agent, Python
callable) answers the same three calls with plain data. A connector that
cannot reach or understand the agent raises `AgentError`: the run is then
errored (a harness failure), never failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


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
    """What the agent said and did in answer to one message (or to the opening)."""

    messages: tuple[AgentMessage, ...] = ()
    #: Native event objects (SPEC section 1) this turn produced; user and bot events may be left out.
    events: tuple[Mapping[str, Any], ...] = field(default=())

    @property
    def has_text(self) -> bool:
        return any(m.text.strip() for m in self.messages)


class AgentError(Exception):
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


class AgentSetupError(ValueError):
    """The agent is named wrongly (bad URL, unimportable module, missing function).

    Raised when a connector is built, before any run, so the CLI can report it
    as bad input (exit 2) rather than as one errored run per scenario.
    """


class AgentConnector(Protocol):
    async def check_reachable(self) -> None:
        """Raise `AgentError` when the agent cannot be reached at all; checked once, before a batch starts."""
        ...

    async def open(self, conversation_id: str, initial_slots: Mapping[str, Any]) -> AgentTurn:
        """Start a new conversation (and apply initial memory before the first turn)."""
        ...

    async def send(self, conversation_id: str, text: str) -> AgentTurn:
        """Send one user message; return the agent's answer for that turn."""
        ...

    async def recorded_events(self, conversation_id: str) -> Sequence[Mapping[str, Any]] | None:
        """The agent's own full record of the conversation (a Rasa tracker), or None to use the turns."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
