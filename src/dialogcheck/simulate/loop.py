"""One simulated conversation: the user speaks, the agent answers, until a stop rule ends it.

Stop rules (SPEC section 6): the user says done (its last message is still
sent), the user sends an empty message, the agent sends no text for a turn,
or `max_turns` user messages were sent. The events are the agent's own record
when it keeps one (a Rasa tracker), else the turns as recorded here: each
user message, the events the agent reported, then its messages as `bot` events.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..connectors.base import AgentConnector, AgentTurn
from ..llm.base import Usage
from ..scenario.model import Scenario
from .user import SimulatedUser

ENDED_DONE = "the user said done"
ENDED_EMPTY = "the user sent an empty message"
ENDED_SILENT = "the agent sent no text"
ENDED_MAX_TURNS = "max_turns reached"


@dataclass
class SimulatedConversation:
    """What a simulation produced; filled in as it goes, so a run cut short keeps what happened."""

    conversation_id: str
    events: list[Mapping[str, Any]] = field(default_factory=list)
    transcript: list[tuple[str, str]] = field(default_factory=list)
    #: Seconds the agent took to answer each user message, in order.
    latencies: list[float] = field(default_factory=list)
    ended_because: str | None = None
    user_usage: Usage | None = None

    def transcript_text(self) -> str:
        return "\n".join(f"{who}: {text}" for who, text in self.transcript)


def _bot_event(message) -> dict[str, Any]:
    event: dict[str, Any] = {"event": "bot", "timestamp": time.time(), "text": message.text}
    if message.utter_name is not None:
        event["metadata"] = {"utter_action": message.utter_name}
    if message.buttons:
        event["data"] = {"buttons": [{"title": b.title, "payload": b.payload} for b in message.buttons]}
    return event


def record_turn(record: SimulatedConversation, user_text: str | None, turn: AgentTurn) -> None:
    """Append one exchange: the user event, the agent's events, then its messages (unless it sent bot events)."""
    reported = [dict(e) for e in turn.events]
    if user_text is not None:
        record.transcript.append(("USER", user_text))
        if not any(e.get("event") == "user" for e in reported):
            record.events.append({"event": "user", "timestamp": time.time(), "text": user_text})
    record.events.extend(reported)
    if not any(e.get("event") == "bot" for e in reported):
        record.events.extend(_bot_event(m) for m in turn.messages)
    record.transcript.extend(("AGENT", m.text) for m in turn.messages if m.text.strip())


async def simulate(
    scenario: Scenario, agent: AgentConnector, user: SimulatedUser, record: SimulatedConversation
) -> SimulatedConversation:
    """Talk until a stop rule; raises what the agent or the simulator raised (the run is then errored)."""
    cid = record.conversation_id
    record_turn(record, None, await agent.open(cid, scenario.initial_slots))
    while True:
        if len(record.latencies) >= scenario.max_turns:
            record.ended_because = ENDED_MAX_TURNS
            break
        turn = await user.next_turn(record.transcript_text())
        if turn.usage is not None:
            record.user_usage = turn.usage if record.user_usage is None else record.user_usage + turn.usage
        if not turn.message.strip():
            record.ended_because = ENDED_EMPTY
            break
        started = time.perf_counter()
        answer = await agent.send(cid, turn.message)
        record.latencies.append(time.perf_counter() - started)
        record_turn(record, turn.message, answer)
        if turn.done:
            record.ended_because = ENDED_DONE
            break
        if not answer.has_text:
            record.ended_because = ENDED_SILENT
            break
    own: Sequence[Mapping[str, Any]] | None = await agent.recorded_events(cid)
    if own is not None:
        record.events = list(own)
    return record
