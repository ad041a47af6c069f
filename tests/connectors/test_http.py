"""The generic HTTP JSON connector against a fake agent on loopback."""

from __future__ import annotations

import pytest

from dialogcheck.connectors import AgentButton, AgentError, AgentMessage, AgentSetupError, AgentTurn, HttpConnector
from dialogcheck.events.parse import conversation_from_dicts
from tests.connectors.conftest import BUTTONS, GREETING, PATIENT, QUIET, Reply, talk

CID = "sim-0002"


def connector(server, timeout: float = PATIENT) -> HttpConnector:
    return HttpConnector(server.url + "/agent", timeout)


def test_open_sends_null_text_and_the_initial_slots(agent_server):
    turn = talk(connector(agent_server), lambda c: c.open(CID, {"card_last4": "1234"}))
    assert agent_server.requests[0].body == {"conversation_id": CID, "text": None, "initial_slots": {"card_last4": "1234"}}
    assert turn == AgentTurn(
        messages=(AgentMessage(GREETING, "utter_greet"),),
        events=({"event": "memory_set", "key": "card_last4", "value": "1234"},),
    )


def test_a_turn_with_buttons_and_events_and_no_separate_record(agent_server):
    async def steps(c):
        await c.open(CID, {})
        return await c.send(CID, "my card is broken"), await c.recorded_events(CID)

    turn, record = talk(connector(agent_server), steps)
    assert agent_server.requests[1].body == {"conversation_id": CID, "text": "my card is broken"}
    assert turn.messages == (
        AgentMessage("Shall I replace it?", "utter_ask_replace", tuple(AgentButton(b["title"], b["payload"]) for b in BUTTONS)),
    )
    assert turn.recorded == ({"event": "skill_activated", "skill_id": "card_replace"},)
    assert turn.events == conversation_from_dicts(turn.recorded).events  # read where the answer is read
    assert record is None


def test_a_silent_agent_is_a_turn_with_no_messages(agent_server):
    turn = talk(connector(agent_server), lambda c: c.send(CID, "..."))
    assert turn == AgentTurn() and not turn.has_text


@pytest.mark.parametrize(
    ("body", "turn"),
    [
        ({"messages": [{"text": "hi"}]}, AgentTurn((AgentMessage("hi"),))),
        ({"messages": [{"text": None, "buttons": [{"title": "Yes"}]}], "events": None}, AgentTurn((AgentMessage("", None, (AgentButton("Yes"),)),))),
        ({"messages": [], "events": [{"event": "custom_thing", "anything": 1}], "extra": True}, AgentTurn((), ({"event": "custom_thing", "anything": 1},))),
    ],
)
def test_optional_parts_of_the_answer(agent_server, body, turn):
    agent_server.break_with(Reply(body=body))
    assert talk(connector(agent_server), lambda c: c.send(CID, "hi")) == turn


def error_of(server, timeout: float = PATIENT) -> str:
    with pytest.raises(AgentError) as info:
        talk(connector(server, timeout), lambda c: c.send(CID, "hello"))
    return str(info.value)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (Reply(500, {"detail": "boom"}), 'the agent answered HTTP 500 Internal Server Error: {"detail": "boom"}'),
        (Reply(404, b"Not Found"), "the agent answered HTTP 404 Not Found: Not Found"),
        (Reply(body=b"OK then"), "the answer is not JSON: OK then"),
        (Reply(body=[{"text": "hi"}]), 'expected an object {"messages": [...], "events": [...]}, got a list'),
        (Reply(body={"events": []}), "`messages` is missing (send an empty list when the agent says nothing)"),
        (Reply(body={"messages": "hi"}), "`messages` must be a list, got a string"),
        (Reply(body={"messages": ["hi"]}), "`messages[0]` must be an object, got a string"),
        (Reply(body={"messages": [{"utter_name": "utter_x"}]}), "`messages[0].text` is missing (use null for a message with only buttons)"),
        (Reply(body={"messages": [{"text": 3}]}), "`messages[0].text` must be a string or null, got a number"),
        (Reply(body={"messages": [{"text": "a", "utter_name": ["x"]}]}), "`messages[0].utter_name` must be a string or null, got a list"),
        (Reply(body={"messages": [{"text": "a", "buttons": ["Yes"]}]}), "`messages[0].buttons[0]` must be an object, got a string"),
        (Reply(body={"messages": [], "events": {}}), "`events` must be a list of event objects, got an object"),
        (Reply(body={"messages": [], "events": [{"skill_id": "x"}]}), "`events[0]`: field `event` is missing: every event names its type"),
        (Reply(body={"messages": [], "events": [{"event": 7}]}), "`events[0]`: field `event` must be a string, got a number"),
        (Reply(body={"messages": [], "events": [{"event": "skill_completed"}]}), "`events[0]`: field `skill_id` is missing"),
    ],
)
def test_faults_and_garbage(agent_server, reply, problem):
    agent_server.break_with(reply)
    assert error_of(agent_server) == f"POST {agent_server.url}/agent: {problem}"


def test_an_agent_that_keeps_quiet_is_cut_off_at_the_timeout(agent_server):
    agent_server.break_with(Reply(delay=QUIET))
    assert error_of(agent_server, 0.3) == f"POST {agent_server.url}/agent: no answer within 0.3 s (timed out)"


def test_connection_closed_without_an_answer(agent_server):
    agent_server.break_with(Reply(hang_up=True))
    assert error_of(agent_server).startswith(f"POST {agent_server.url}/agent: the agent closed the connection without answering (")


def test_connection_refused(closed_port):
    with pytest.raises(AgentError, match=r"cannot connect to the agent \(connection refused: is it running\?\)"):
        talk(HttpConnector(f"http://127.0.0.1:{closed_port}"), lambda c: c.send(CID, "hi"))


def test_one_connector_serves_two_event_loops(agent_server):
    c = connector(agent_server)
    talk(c, lambda c: c.send(CID, "a"))
    talk(c, lambda c: c.send(CID, "b"))
    assert [r.body["text"] for r in agent_server.requests] == ["a", "b"]


def test_a_bad_url_is_a_setup_error():
    with pytest.raises(AgentSetupError, match=r"^an http agent needs an http:// or https:// address, got 'agent.local/x'$"):
        HttpConnector("agent.local/x")


def test_a_pooled_connection_the_agent_had_closed_is_tried_once_more_on_another():
    """The agent reads the second request on a kept-alive connection and drops it unanswered:
    the request goes out again, on a new connection, and the turn succeeds."""
    import json
    import socket
    import threading

    answer = json.dumps({"messages": [{"text": "ok"}], "events": []}).encode()
    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer)
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[tuple[int, bytes]] = []  # (connection number, request line)

    def read_request(conn: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return b""
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(body) < length:
            body += conn.recv(65536)
        return head.split(b"\r\n")[0]

    def serve() -> None:
        for number in (1, 2):
            conn, _ = listener.accept()
            with conn:
                while request := read_request(conn):
                    seen.append((number, request))
                    if number == 1 and len(seen) == 2:
                        break  # the second request on the first connection: closed, never answered
                    conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    c = HttpConnector(f"http://127.0.0.1:{listener.getsockname()[1]}", 5.0)

    async def two_turns(c):
        return [await c.send(CID, "a"), await c.send(CID, "b")]

    turns = talk(c, two_turns)
    listener.close()
    assert [m.text for turn in turns for m in turn.messages] == ["ok", "ok"]
    assert [number for number, _ in seen] == [1, 1, 2]
