"""Real HTTP servers on loopback: a fake Rasa server and a fake HTTP JSON agent, with faults on demand.

Each server records every request (method, path, JSON body). `break_with`
makes it answer with a fault instead of its app: a status, a raw body, a
delay, or hanging up without a word.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

import tests.conftest

#: The timeout of a connector whose peer answers: far past what an answer on loopback takes, even on a loaded machine.
PATIENT = 30.0
#: How long a peer that must be timed out keeps quiet (`Reply(delay=QUIET)`, until the server stops): far past any
#: timeout a test gives, so only that timeout can end the wait.
QUIET = 600.0

PROXY_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@dataclass
class Reply:
    status: int = 200
    #: bytes are sent as they are, anything else as JSON.
    body: Any = None
    delay: float = 0.0
    #: Close the connection without sending any answer.
    hang_up: bool = False


@dataclass
class Request:
    method: str
    path: str
    query: str
    body: Any
    #: The path as sent, %-escapes and all.
    raw_path: str = ""


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 refuses a burst of parallel runs


class LoopbackServer:
    def __init__(self, app: Callable[[Request], Reply]):
        self.app = app
        self.requests: list[Request] = []
        self.fault: Reply | None = None
        self.fault_path: str | None = None
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that gave up is not news
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def break_with(self, reply: Reply, path: str | None = None) -> None:
        """Answer every request (or those whose path starts with `path`) with `reply`."""
        self.fault, self.fault_path = reply, path

    def reply_to(self, request: Request) -> Reply:
        with self.lock:
            self.requests.append(request)
            fault = self.fault if self.fault_path is None or request.path.startswith(self.fault_path) else None
        return fault or self.app(request)

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts = urlsplit(self.path)
            reply = server.reply_to(Request(self.command, unquote(parts.path), parts.query, json.loads(raw) if raw else None, parts.path))
            if reply.delay:
                server.stopping.wait(reply.delay)
            if reply.hang_up:
                self.close_connection = True
                return
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client hung up (a timeout test)

    return Handler


GREETING = "Hi! I can replace a damaged card."
BUTTONS = [{"title": "Replace it", "payload": "/replace"}, {"title": "Cancel", "payload": "/cancel"}]


class FakeRasa:
    """Just enough of a Rasa server: REST webhook, GET tracker, POST tracker/events; one event list per sender."""

    def __init__(self) -> None:
        self.trackers: dict[str, list[dict]] = {}

    def _slot(self, sender: str, name: str) -> Any:
        values = [e["value"] for e in self.trackers.get(sender, []) if e["event"] == "slot" and e["name"] == name]
        return values[-1] if values else None

    def _respond(self, sender: str, text: str, events: list[dict]) -> list[dict]:
        if text == "/session_start":
            events += [{"event": "session_started"}, {"event": "action", "name": "action_listen"}]
            return [{"text": GREETING}]
        if text == "my card is broken":
            events += [
                {"event": "skill_activated", "skill_id": "card_replace"},
                {"event": "tool_executed", "tool_name": "lookup_card", "arguments": {"last4": "1234"}, "source": "local", "result": {"ok": True}},
                {"event": "memory_set", "key": "card_status", "value": "damaged"},
            ]
            return [{"text": "Shall I replace it?", "buttons": BUTTONS}]
        if text == "which language?":
            return [{"text": f"I speak {self._slot(sender, 'project.preferred_language')}."}]
        if text == "show me":
            return [{"image": "https://example.invalid/card.png"}]
        return []  # silent

    def __call__(self, request: Request) -> Reply:
        if request.method == "POST" and request.path == "/webhooks/rest/webhook":
            sender, text = request.body["sender"], request.body["message"]
            events = self.trackers.setdefault(sender, [])
            events.append({"event": "user", "text": text, "timestamp": 1.0})
            replies = self._respond(sender, text, events)
            for r in replies:
                events.append({"event": "bot", "text": r.get("text"), "data": {"buttons": r.get("buttons")}, "metadata": {}})
            return Reply(body=[{"recipient_id": sender, **r} for r in replies])
        match = re.fullmatch(r"/conversations/(.+)/tracker(/events)?", request.path)
        if match and request.method == "GET" and not match.group(2):
            return Reply(body={"sender_id": match.group(1), "events": self.trackers.get(match.group(1), [])})
        if match and request.method == "POST" and match.group(2):
            self.trackers.setdefault(match.group(1), []).extend(request.body)
            return Reply(body={"sender_id": match.group(1), "events": self.trackers[match.group(1)]})
        return Reply(404, {"status": "failure", "reason": "NotFound"})


def http_agent(request: Request) -> Reply:
    """A fake HTTP JSON agent at POST /agent: greets, offers buttons, reports its events, and can go silent."""
    if request.method != "POST" or request.path != "/agent":
        return Reply(404, {"error": "no such path"})
    text = request.body["text"]
    if text is None:
        slots = request.body.get("initial_slots") or {}
        events = [{"event": "memory_set", "key": k, "value": v} for k, v in slots.items()]
        return Reply(body={"messages": [{"text": GREETING, "utter_name": "utter_greet"}], "events": events})
    if text == "my card is broken":
        return Reply(body={
            "messages": [{"text": "Shall I replace it?", "utter_name": "utter_ask_replace", "buttons": BUTTONS}],
            "events": [{"event": "skill_activated", "skill_id": "card_replace"}],
        })
    return Reply(body={"messages": [], "events": []})


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """A proxy from the developer's shell must not sit between the connectors and loopback."""
    for name in PROXY_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def rasa_server():
    server = LoopbackServer(FakeRasa())
    yield server
    server.stop()


@pytest.fixture
def agent_server():
    server = LoopbackServer(http_agent)
    yield server
    server.stop()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    return tests.conftest.closed_port()


def talk(connector, steps: Callable[[Any], Any]) -> Any:
    """Run `steps(connector)` (a coroutine function) on a fresh loop and close the connector after."""

    async def main():
        try:
            return await steps(connector)
        finally:
            await connector.aclose()

    return asyncio.run(main())
