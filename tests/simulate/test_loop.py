"""The simulation loop keeps each event as it was read where it arrived, and gives the run's typed conversation."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from dialogcheck.connectors import AgentButton, AgentMessage, AgentTurn, HttpConnector, RasaConnector
from dialogcheck.events import parse
from dialogcheck.events.model import BotMessage, ToolRun, UserMessage
from dialogcheck.events.native import conversation_lines
from dialogcheck.events.parse import EventFieldError, conversation_from_dicts
from dialogcheck.scenario.load import load_scenario
from dialogcheck.simulate.loop import SimulatedConversation, simulate
from dialogcheck.simulate.user import ScriptedUser
from tests.connectors.conftest import BUTTONS, LoopbackServer, Reply

SCENARIO = """
scenario:
  name: Replaces a card
  simulation_context: Your card is broken.
  script: [my card is broken, yes please]
"""
#: What the agent reports for "yes please": every spelling the reader takes, and a type it does not know.
REPORTED = [
    {"event": "tool_executed", "tool_name": "order_card", "arguments": {"last4": "1234"}, "source": "mcp", "mcp_server": "cards", "skill_id": "card_replace", "result": "{\"id\": 7}"},
    {"event": "memory_set", "key": "card_status", "value": {"ordered": True}, "timestamp": 5},
    {"event": "custom_thing", "anything": [1, 2], "metadata": {"origin": "agent"}},
]


def scenario(tmp_path):
    path = tmp_path / "replace.yml"
    path.write_text(SCENARIO)
    return load_scenario(path)


def agent(request):
    text = request.body["text"]
    if text is None:
        return Reply(body={"messages": [{"text": "Hi!", "utter_name": "utter_greet"}]})
    if text == "my card is broken":
        return Reply(body={"messages": [{"text": "Replace it?", "utter_name": "utter_ask", "buttons": BUTTONS}], "events": [{"event": "skill_activated", "skill_id": "card_replace"}]})
    return Reply(body={"messages": [{"text": "Ordered."}], "events": REPORTED})


def run(tmp_path, connector) -> SimulatedConversation:
    async def main():
        try:
            return await simulate(scenario(tmp_path), connector, ScriptedUser(["my card is broken", "yes please"]), SimulatedConversation("sim-1"))
        finally:
            await connector.aclose()

    return asyncio.run(main())


@pytest.fixture
def http_record(tmp_path):
    server = LoopbackServer(agent)
    try:
        yield run(tmp_path, HttpConnector(server.url + "/agent", 30.0))
    finally:
        server.stop()


def test_the_run_is_judged_on_the_events_its_events_file_holds(http_record):
    conversation = http_record.conversation("replace/run_1")
    assert (conversation.source, conversation.conversation_id) == ("replace/run_1", "sim-1")
    written = [orjson.loads(line) for line in conversation_lines(conversation).splitlines()]
    assert conversation == conversation_from_dicts(written, "replace/run_1", "sim-1")
    assert written[-4:-1] == REPORTED  # the agent's objects as it sent them, unknown fields and key order kept
    assert http_record.recorded == written  # the events file holds the agent's objects as sent


def test_events_are_numbered_across_the_turns(http_record):
    events = http_record.conversation("r").events
    assert [e.type for e in events] == ["bot", "user", "skill_activated", "bot", "user", "tool_executed", "memory_set", "custom_thing", "bot"]
    assert [e.index for e in events] == list(range(9))
    assert [e.turn for e in events] == [0, 1, 1, 1, 2, 2, 2, 2, 2]
    tool = events[5]
    assert isinstance(tool, ToolRun) and (tool.skill_id, tool.connector, tool.result) == ("card_replace", "cards", '{"id": 7}')


def test_messages_become_bot_events_in_the_tracker_form(http_record):
    ask = http_record.conversation("r").events[3]
    assert isinstance(ask, BotMessage)
    assert (ask.text, ask.utter_name, ask.metadata) == ("Replace it?", "utter_ask", {"utter_action": "utter_ask"})
    assert [(b.title, b.payload) for b in ask.buttons] == [(b["title"], b["payload"]) for b in BUTTONS]
    assert http_record.recorded[3] == {
        "event": "bot",
        "timestamp": ask.timestamp,
        "text": "Replace it?",
        "metadata": {"utter_action": "utter_ask"},
        "data": {"buttons": BUTTONS},
    }
    assert list(http_record.recorded[1]) == ["event", "timestamp", "text"]  # the user's message


def test_each_event_the_agent_sends_is_read_once(tmp_path, monkeypatch):
    read = []
    decode = parse.decode
    monkeypatch.setattr(parse, "decode", lambda obj: read.append(obj) or decode(obj))
    server = LoopbackServer(agent)
    try:
        record = run(tmp_path, HttpConnector(server.url + "/agent", 30.0))
    finally:
        server.stop()
    record.conversation("r")
    assert read == [{"event": "skill_activated", "skill_id": "card_replace"}, *REPORTED]


def test_the_agents_own_record_is_read_once_and_replaces_the_turns(tmp_path, rasa_server, monkeypatch):
    read = []
    decode = parse.decode
    monkeypatch.setattr(parse, "decode", lambda obj: read.append(obj) or decode(obj))
    record = run(tmp_path, RasaConnector(rasa_server.url, 30.0))
    conversation = record.conversation("r")
    tracker = rasa_server.app.trackers["sim-1"]
    assert list(conversation.raw_events) == record.recorded == tracker
    assert read == tracker
    assert conversation == conversation_from_dicts(tracker, "r", "sim-1")
    assert [type(e) for e in conversation.events if e.type in ("user", "bot")] == [UserMessage, BotMessage, UserMessage, BotMessage, UserMessage]


def test_an_agent_turn_reads_native_objects_given_to_it():
    turn = AgentTurn((AgentMessage("ok", None, (AgentButton("Yes"),)),), ({"event": "memory_set", "key": "k", "value": None},))
    (event,) = turn.events
    assert (event.type, event.key, event.value) == ("memory_set", "k", None)
    assert turn.recorded == ({"event": "memory_set", "key": "k", "value": None},)
    assert AgentTurn(turn.messages, turn.events) == turn  # typed events are kept, and written in their native form
    with pytest.raises(EventFieldError, match=r"^field `source` must be 'local' or 'mcp', got 'cloud'$") as info:
        AgentTurn((), ({"event": "user", "text": "a"}, {"event": "tool_executed", "tool_name": "x", "source": "cloud"}))
    assert info.value.index == 1
