"""The Rasa connector against a fake Rasa server on loopback: real HTTP, real faults."""

from __future__ import annotations

import pytest

from dialogcheck.connectors import AgentButton, AgentError, AgentMessage, AgentSetupError, AgentTurn, RasaConnector
from dialogcheck.events.parse import conversation_from_dicts
from tests.connectors.conftest import BUTTONS, GREETING, PATIENT, QUIET, Reply, talk

CID = "sim-0001"
SLOTS = {"project.preferred_language": "en", "card_last4": "1234"}


def test_open_sends_session_start_then_sets_the_initial_slots_in_one_request(rasa_server):
    turn = talk(RasaConnector(rasa_server.url, PATIENT), lambda c: c.open(CID, SLOTS))
    assert turn == AgentTurn(messages=(AgentMessage(GREETING),))
    first, second = rasa_server.requests
    assert (first.method, first.path, first.body) == ("POST", "/webhooks/rest/webhook", {"sender": CID, "message": "/session_start"})
    assert (second.method, second.path) == ("POST", f"/conversations/{CID}/tracker/events")
    assert second.body == [
        {"event": "slot", "name": "project.preferred_language", "value": "en"},
        {"event": "slot", "name": "card_last4", "value": "1234"},
    ]


def test_open_without_initial_slots_touches_no_tracker(rasa_server):
    talk(RasaConnector(rasa_server.url, PATIENT), lambda c: c.open(CID, {}))
    assert [r.path for r in rasa_server.requests] == ["/webhooks/rest/webhook"]


def test_a_conversation_with_buttons_and_the_tracker_record(rasa_server):
    async def steps(c):
        await c.open(CID, SLOTS)
        language = await c.send(CID, "which language?")
        broken = await c.send(CID, "my card is broken")
        return language, broken, await c.recorded_events(CID)

    language, broken, record = talk(RasaConnector(rasa_server.url + "/", PATIENT), steps)
    assert language.messages == (AgentMessage("I speak en."),)  # the slots were set before the first turn
    assert broken.messages == (
        AgentMessage("Shall I replace it?", None, tuple(AgentButton(b["title"], b["payload"]) for b in BUTTONS)),
    )
    assert broken.events == ()  # the REST channel reports no events: the tracker does
    assert [e["event"] for e in record.raw_events] == [e.type for e in record.events] == [
        "user", "session_started", "action", "bot", "slot", "slot", "user", "bot",
        "user", "skill_activated", "tool_executed", "memory_set", "bot",
    ]
    assert record == conversation_from_dicts(record.raw_events, CID, CID)  # read once, as a file of them would be
    assert [(e.index, e.turn) for e in record.events][-2:] == [(11, 2), (12, 2)]  # `/session_start` opens no turn
    get = rasa_server.requests[-1]
    assert (get.method, get.path, get.query) == ("GET", f"/conversations/{CID}/tracker", "include_events=ALL")


def test_conversations_are_kept_apart_by_sender(rasa_server):
    async def steps(c):
        await c.open("sim-a", {})
        await c.open("sim-b", {})
        await c.send("sim-a", "my card is broken")
        return await c.recorded_events("sim-a"), await c.recorded_events("sim-b")

    a, b = talk(RasaConnector(rasa_server.url, PATIENT), steps)
    assert (len(a), a.conversation_id, len(b), b.conversation_id) == (9, "sim-a", 4, "sim-b")


def test_an_image_only_message_reads_as_empty_text(rasa_server):
    turn = talk(RasaConnector(rasa_server.url, PATIENT), lambda c: c.send(CID, "show me"))
    assert turn.messages == (AgentMessage(""),) and not turn.has_text


def test_a_silent_agent_is_a_turn_with_no_messages(rasa_server):
    turn = talk(RasaConnector(rasa_server.url, PATIENT), lambda c: c.send(CID, "hello?"))
    assert turn == AgentTurn() and not turn.has_text


def error_of(server, steps, timeout: float = PATIENT) -> str:
    with pytest.raises(AgentError) as info:
        talk(RasaConnector(server.url, timeout), steps)
    return str(info.value)


def send(c):
    return c.send(CID, "hello")


def test_timeout(rasa_server):
    rasa_server.break_with(Reply(delay=QUIET))  # only the timeout can end the wait
    message = error_of(rasa_server, send, 0.3)
    assert message == f"POST {rasa_server.url}/webhooks/rest/webhook: no answer within 0.3 s (timed out)"


def test_http_500_quotes_status_and_body(rasa_server):
    rasa_server.break_with(Reply(500, b"Internal   boom\n trace"))
    assert error_of(rasa_server, send) == (
        f"POST {rasa_server.url}/webhooks/rest/webhook: the agent answered HTTP 500 Internal Server Error: Internal boom trace"
    )


def test_a_long_error_body_is_cut(rasa_server):
    rasa_server.break_with(Reply(503, b"x" * 1000))
    assert error_of(rasa_server, send).endswith("Service Unavailable: " + "x" * 200 + "…")


def test_connection_closed_without_an_answer(rasa_server):
    rasa_server.break_with(Reply(hang_up=True))
    message = error_of(rasa_server, send)
    assert message.startswith(f"POST {rasa_server.url}/webhooks/rest/webhook: the agent closed the connection without answering")


def test_connection_refused(closed_port):
    with pytest.raises(AgentError) as info:
        talk(RasaConnector(f"http://127.0.0.1:{closed_port}", PATIENT), send)
    assert str(info.value) == (
        f"POST http://127.0.0.1:{closed_port}/webhooks/rest/webhook: cannot connect to the agent (connection refused: is it running?)"
    )


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>Bad Gateway</html>", "the answer is not JSON: <html>Bad Gateway</html>"),
        (b"", "the answer is not JSON: (empty body)"),
        ({"text": "hi"}, "expected a JSON list of messages, got an object"),
        (["hi"], "`[0]` must be a message object, got a string"),
        ([{"recipient_id": CID, "text": 5}], "`[0].text` must be a string or null, got a number"),
        ([{"text": "hi", "buttons": {"title": "x"}}], "`[0].buttons` must be a list, got an object"),
        ([{"text": "hi", "buttons": [{"title": 1}]}], "`[0].buttons[0].title` must be a string or null, got a number"),
    ],
)
def test_garbage_answers(rasa_server, body, problem):
    rasa_server.break_with(Reply(body=body))
    assert error_of(rasa_server, send) == f"POST {rasa_server.url}/webhooks/rest/webhook: {problem}"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"sender_id": CID}, "the tracker has no `events` list"),
        ({"sender_id": CID, "events": None}, "the tracker has no `events` list"),
        ({"events": {"event": "user"}}, "`events` must be a list of event objects, got an object"),
        ([], "expected a tracker object, got a list"),
        ({"events": [{"event": "user", "text": "hi"}, 3]}, "`events[1]`: an event must be a JSON object, got a number"),
        ({"events": [{"text": "hi"}]}, "`events[0]`: field `event` is missing: every event names its type"),
        (
            {"events": [{"event": "tool_executed", "tool_name": "t", "source": "cloud"}]},
            "`events[0]`: field `source` must be 'local' or 'mcp', got 'cloud'",
        ),
    ],
)
def test_bad_trackers(rasa_server, body, problem):
    rasa_server.break_with(Reply(body=body), path="/conversations/")
    message = error_of(rasa_server, lambda c: c.recorded_events(CID))
    assert message == f"GET {rasa_server.url}/conversations/{CID}/tracker?include_events=ALL: {problem}"


def test_a_failure_to_set_the_initial_slots_is_an_agent_error(rasa_server):
    rasa_server.break_with(Reply(403, {"status": "failure", "reason": "NotAuthenticated"}), path="/conversations/")
    message = error_of(rasa_server, lambda c: c.open(CID, SLOTS))
    assert message == (
        f"POST {rasa_server.url}/conversations/{CID}/tracker/events: the agent answered HTTP 403 Forbidden: "
        '{"status": "failure", "reason": "NotAuthenticated"}'
    )


def test_the_conversation_id_is_quoted_in_tracker_paths(rasa_server):
    talk(RasaConnector(rasa_server.url, PATIENT), lambda c: c.open("a b/c", {"x": 1}))
    assert rasa_server.requests[-1].raw_path == "/conversations/a%20b%2Fc/tracker/events"


@pytest.mark.parametrize("url", ["localhost:5005", "ftp://host", "http://", "", None])
def test_a_bad_url_is_a_setup_error(url):
    with pytest.raises(AgentSetupError, match="a rasa agent needs an http:// or https:// address, got"):
        RasaConnector(url)
