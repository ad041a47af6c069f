"""Real HTTP servers on loopback that speak just enough OpenAI and Anthropic to drive the real SDKs.

Each serves a script of answers (status, headers, body, delay): the next
request takes the next answer, and the last answer repeats. The server counts
requests, keeps their bodies and arrival times, and measures how many were in
flight at once. An answer can be held until the requests the server has seen
make a condition true (`until`), so a test of overlapping requests waits for
them to overlap rather than guessing how long that takes.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from dialogcheck.llm import ChatMessage, ChatRequest

ENV_THAT_REDIRECTS = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_CUSTOM_HEADERS", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_PROFILE",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
)


@dataclass
class Answer:
    status: int = 200
    #: A dict is sent as JSON, a str as it is, None as the server's usual success answer; a callable makes
    #: the body from the request's (a judge that answers the criterion it is asked, say).
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    #: Held (before `delay`) until this is true of the server, re-asked at each arrival; None holds nothing.
    until: Callable[[ScriptedServer], bool] | None = None


#: The longest an `until` holds an answer: a bound on a hang, far past a loaded machine's slowest request.
HOLD_BOUND = 120.0


def openai_body(text: str = "hello", *, model: str = "test-model", prompt_tokens: int = 11, completion_tokens: int = 7, cost: float | None = None) -> dict:
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    if cost is not None:
        usage["cost"] = cost
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage,
    }


def anthropic_body(text: str = "hello", *, model: str = "claude-test", input_tokens: int = 13, output_tokens: int = 5, cache_read: int = 0) -> dict:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, "cache_read_input_tokens": cache_read},
    }


CRITERION_ID = re.compile(r"^## Criterion (\S+)$", re.MULTILINE)


def asked_criterion(request: dict) -> str:
    """The id of the criterion a judge request asks about (the built-in prompt names it)."""
    found = CRITERION_ID.search(request["messages"][0]["content"])
    return found.group(1) if found else "criterion"


def judge_text(request: dict, verdict: str = "PASS", rationale: str = "fine") -> str:
    """The text of a judge's answer to the criterion `request` (an OpenAI or Anthropic body) asks about."""
    return json.dumps({"criterion": asked_criterion(request), "verdict": verdict, "rationale": rationale, "evidence": {}})


def judge_says(verdict: str = "PASS", rationale: str = "it asked first", *, turns=(), events=(), **usage: Any):
    """A body maker: the judge's answer to whichever criterion the request asks, as the prompt wants it."""

    def body(request: dict) -> dict:
        answer = {"criterion": asked_criterion(request), "verdict": verdict, "rationale": rationale, "evidence": {"turns": list(turns), "events": list(events)}}
        return openai_body(json.dumps(answer), **usage)

    return body


def error_body(message: str = "boom") -> dict:
    return {"error": {"message": message, "type": "server_error"}}


class ScriptedServer:
    def __init__(self, path: str, default_body: dict):
        self.path = path
        self.default_body = default_body
        self.script: list[Answer] = []
        self.bodies: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        #: Notified (under `lock`) at each arrival and at stop, for the answers held by `until`.
        self.arrived = threading.Condition(self.lock)
        self.stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self), bind_and_activate=False)
        self.httpd.request_queue_size = 128  # the default 5 refuses a burst of parallel requests
        self.httpd.server_bind()
        self.httpd.server_activate()
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that gave up is not news
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def count(self) -> int:
        return len(self.bodies)

    def answer(self, *answers: Answer) -> None:
        self.script = list(answers)

    def next_answer(self) -> Answer:
        with self.lock:
            if not self.script:
                return Answer()
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def stop(self) -> None:
        with self.arrived:
            self.stopping.set()
            self.arrived.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = json.loads(raw or b"{}")
            with server.lock:
                server.bodies.append(request)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server.times.append(time.monotonic())
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
                server.arrived.notify_all()
            try:
                self._reply(server.next_answer() if self.path == server.path else Answer(404, error_body("no such path")), request)
            except OSError:
                pass  # the client hung up (a timeout test)
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _reply(self, answer: Answer, request: dict) -> None:
            if answer.until is not None:
                with server.arrived:
                    server.arrived.wait_for(lambda: server.stopping.is_set() or answer.until(server), HOLD_BOUND)
            if answer.delay:
                server.stopping.wait(answer.delay)
            body = server.default_body if answer.body is None else answer.body
            body = body(request) if callable(body) else body
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """No key, base URL, custom header or proxy from the developer's shell may reach the SDKs."""
    for name in ENV_THAT_REDIRECTS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def _serve(path: str, body: dict):
    server = ScriptedServer(path, body)
    server.thread.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai_server():
    yield from _serve("/v1/chat/completions", openai_body())


@pytest.fixture
def anthropic_server():
    yield from _serve("/v1/messages", anthropic_body())


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chat(text: str = "Is the sky blue?", *, provider: str = "openai", model: str = "test-model", system: str | None = None, **options: Any) -> ChatRequest:
    messages = ((ChatMessage("system", system),) if system else ()) + (ChatMessage("user", text),)
    return ChatRequest(provider=provider, model=model, messages=messages, options=options)
