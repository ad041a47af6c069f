"""One simulated conversation: the user speaks, the agent answers, until a stop rule ends it.

Stop rules (docs/running-scenarios.md): the user says done (its last message is still
sent), the user sends an empty message, the agent sends no text for a turn,
or `max_turns` user messages were sent. The events are the agent's own record
when it keeps one (a Rasa tracker), else the turns as recorded here: each
user message, the events the agent reported, then its messages as `bot` events.
Each event is read once, where it arrives, and kept typed with the object it
is recorded as, so the run is judged on the events its events file holds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from ..connectors.base import AgentConnector, AgentMessage, AgentTurn
from ..environment.run import AgentEnvironment, RunEnvironment
from ..events.model import BotMessage, Button, Conversation, Event, UserMessage, native_object, opens_turn
from ..events.parse import conversation_from_dicts
from ..events.transcript import TranscriptLine
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
    transcript: list[TranscriptLine] = field(default_factory=list)
    #: Seconds the agent took to answer each user message, in order.
    latencies: list[float] = field(default_factory=list)
    ended_because: str | None = None
    #: The events so far, each with its place (index and turn) in the conversation.
    typed_events: list[Event] = field(default_factory=list)
    #: Each event as recorded: the agent's own object, or the native form of one made here.
    recorded: list[Mapping[str, Any]] = field(default_factory=list)
    #: The calls the run's environment answered, each with the turn it was answered in (`world.merge_calls`).
    calls: list[tuple[int, Mapping[str, Any]]] = field(default_factory=list)
    _turn: int = field(default=0, repr=False)

    def take_calls(self, environment: RunEnvironment | None) -> None:
        """Keep the calls `environment` answered since last asked, as calls of the current turn."""
        if environment is not None:
            self.calls.extend((self._turn, call) for call in environment.events_since(len(self.calls)))

    def add(self, event: Event, recorded: Mapping[str, Any]) -> None:
        """Append an event already read, as the next one of the conversation."""
        if type(event) is UserMessage and opens_turn(event.text):
            self._turn += 1
        index = len(self.typed_events)
        if event.index != index or event.turn != self._turn:
            event = replace(event, index=index, turn=self._turn)
        self.typed_events.append(event)
        self.recorded.append(recorded)

    def adopt(self, record: Conversation) -> None:
        """Take the agent's own record of the conversation in place of the turns recorded here."""
        self.typed_events = list(record.events)
        self.recorded = list(record.raw_events)
        self._turn = self.typed_events[-1].turn if self.typed_events else 0

    def conversation(self, source: str) -> Conversation:
        """The run's conversation, to judge: its events as read, named `source`."""
        return Conversation(tuple(self.typed_events), source, self.conversation_id, tuple(self.recorded))


def _user_event(text: str) -> UserMessage:
    return UserMessage(text=text, timestamp=time.time())


def _bot_event(message: AgentMessage) -> BotMessage:
    """The `bot` event of an agent's message, as the tracker form records it (`metadata.utter_action`)."""
    return BotMessage(
        text=message.text,
        utter_name=message.utter_name,
        buttons=tuple(Button(b.title, b.payload) for b in message.buttons),
        metadata={} if message.utter_name is None else {"utter_action": message.utter_name},
        timestamp=time.time(),
    )


def record_turn(record: SimulatedConversation, user_text: str | None, turn: AgentTurn) -> None:
    """Append one exchange: the user event, the agent's events, then its messages (unless it sent bot events)."""
    if user_text is not None:
        record.transcript.append(TranscriptLine("user", user_text))
        if not any(e.type == "user" for e in turn.events):
            user = _user_event(user_text)
            record.add(user, native_object(user))
    for event, recorded in zip(turn.events, turn.recorded):
        record.add(event, recorded)
    if not any(e.type == "bot" for e in turn.events):
        for message in turn.messages:
            bot = _bot_event(message)
            record.add(bot, native_object(bot))
    record.transcript.extend(TranscriptLine("agent", m.text) for m in turn.messages if m.text.strip())


async def simulate(
    scenario: Scenario,
    agent: AgentConnector,
    user: SimulatedUser,
    record: SimulatedConversation,
    environment: RunEnvironment | None = None,
    handle: AgentEnvironment | None = None,
) -> SimulatedConversation:
    """Talk until a stop rule; raises what the agent or the simulator raised (the run is then errored).

    With an `environment`, the agent is handed `handle` (the connector's `environment` keyword, on opening and
    on every message) and the calls the environment answers are kept with their turns (`record.calls`)."""
    cid = record.conversation_id
    given = {"environment": handle} if handle is not None else {}
    opening = await agent.open(cid, scenario.initial_slots, **given)
    record_turn(record, None, opening)
    record.take_calls(environment)
    while True:
        if len(record.latencies) >= scenario.max_turns:
            record.ended_because = ENDED_MAX_TURNS
            break
        turn = await user.next_turn(tuple(record.transcript))
        if not turn.message.strip():
            record.ended_because = ENDED_EMPTY
            break
        started = time.perf_counter()
        answer = await agent.send(cid, turn.message, **given)
        record.latencies.append(time.perf_counter() - started)
        record_turn(record, turn.message, answer)
        record.take_calls(environment)
        if turn.done:
            record.ended_because = ENDED_DONE
            break
        if not answer.has_text:
            record.ended_because = ENDED_SILENT
            break
    own = await agent.recorded_events(cid)
    if own is not None:
        record.adopt(own if isinstance(own, Conversation) else conversation_from_dicts(own, source=cid, conversation_id=cid))
    return record
