"""A server that refuses the requested `response_format`: the client steps down once, remembers, and says so once.

The servers here are written for the test and behave as the real ones do:
llama-cpp-python refuses `json_schema` with HTTP 500 naming it, and some
vLLM and Ollama builds refuse `response_format` with HTTP 400.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dialogcheck.config import LLMSettings
from dialogcheck.llm import LLMError
from dialogcheck.llm.factory import make_client
from tests.cli.test_batch_text import command as dialogcheck
from tests.llm.conftest import chat, error_body, judge_says
from tests.llm.test_check_with_judge import project

SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["PASS", "FAIL"]}}, "required": ["verdict"]}
PASS = judge_says("PASS", "turn 1: the agent asked before ordering", turns=[1])


class FormatServer:
    """Answers chat completions, refusing every `response_format` type in `refused` with `status`."""

    def __init__(self, refused: tuple[str, ...], status: int, message: str, answer=PASS):
        self.refused, self.status, self.message, self.answer = refused, status, message, answer
        self.formats: list[str | None] = []
        #: Seconds a refusal waits before it is sent.
        self.delay = 0.0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def count(self) -> int:
        return len(self.formats)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                kind = (body.get("response_format") or {}).get("type")
                with server.lock:
                    server.formats.append(kind)
                if kind in server.refused:
                    time.sleep(server.delay)
                    self._send(server.status, error_body(server.message))
                else:
                    self._send(200, server.answer(body))

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def __enter__(self) -> FormatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def llama_cpp() -> FormatServer:
    """llama-cpp-python's server: only `json_object`; `json_schema` is an internal error that names it."""
    return FormatServer(("json_schema",), 500, "Error: response_format type 'json_schema' is not supported, use json_object")


def no_response_format() -> FormatServer:
    """A server that knows no `response_format` at all and says so with a 400."""
    return FormatServer(("json_schema", "json_object"), 400, "unknown field: response_format")


def settings(server: FormatServer, **changes) -> LLMSettings:
    values = {"provider": "openai_compatible", "model": "m", "base_url": f"{server.root}/v1", "timeout": 60.0, "max_retries": 3}
    return LLMSettings(**{**values, **changes})


def ask(client, n: int = 1, model: str = "m"):
    async def asks():
        return [await client.complete(replace(chat(model=model), json_schema=SCHEMA)) for _ in range(n)]

    return asyncio.run(asks())


def test_a_500_that_refuses_json_schema_steps_down_to_json_object_once_and_is_not_retried(caplog):
    with llama_cpp() as server, caplog.at_level(logging.WARNING, logger="dialogcheck"):
        responses = ask(make_client(settings(server), cache=None, max_in_flight=1), 3)
    assert [json.loads(r.text)["verdict"] for r in responses] == ["PASS"] * 3
    assert server.formats == ["json_schema", "json_object", "json_object", "json_object"]
    assert [r.attempts for r in responses] == [1, 1, 1]
    notices = [r.getMessage() for r in caplog.records if r.name == "dialogcheck"]
    assert len(notices) == 1 and "refused response_format json_schema; asking with response_format json_object" in notices[0]


def test_a_400_that_refuses_response_format_steps_down_to_the_prompt_alone(caplog):
    with no_response_format() as server, caplog.at_level(logging.WARNING, logger="dialogcheck"):
        ask(make_client(settings(server), cache=None, max_in_flight=1), 2)
    assert server.formats == ["json_schema", "json_object", None, None]
    notices = [r.getMessage() for r in caplog.records if r.name == "dialogcheck"]
    assert len(notices) == 2 and "asking with the prompt alone" in notices[1]


def test_what_worked_is_remembered_per_endpoint_and_model_for_the_process():
    with llama_cpp() as server:
        ask(make_client(settings(server), cache=None, max_in_flight=1))
        ask(make_client(settings(server), cache=None, max_in_flight=1))  # a new client: the process remembers
        ask(make_client(settings(server), cache=None, max_in_flight=1), model="other")  # another model: asked afresh
    assert server.formats == ["json_schema", "json_object", "json_object", "json_schema", "json_object"]


def test_a_500_that_does_not_name_the_format_is_still_retried_and_a_plain_request_never_steps_down():
    with FormatServer(("json_schema", "json_object", None), 500, "out of memory") as server:
        with pytest.raises(LLMError, match="failed after 2 attempts: HTTP 500: .*out of memory"):
            ask(make_client(settings(server, max_retries=1), cache=None, max_in_flight=1))
    assert server.formats == ["json_schema", "json_schema"]


def test_a_refusal_that_names_the_format_is_not_retried_even_as_a_500():
    with FormatServer(("json_schema", "json_object", None), 500, "response_format is required") as server:
        with pytest.raises(LLMError, match="failed after 1 attempt: HTTP 500"):
            ask(make_client(settings(server, structured_output="none"), cache=None, max_in_flight=1))
    assert server.formats == [None]


def test_check_judges_criteria_against_a_llama_cpp_style_server(tmp_path):
    with llama_cpp() as server:
        scenario, conversation = project(tmp_path, server, "  max_concurrent_llm_calls: 1\n")
        result = dialogcheck("check", "--format", "json", "--no-cache", "--scenario", scenario, conversation)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert [c["outcome"] for c in document["criteria"]] == ["pass"]
    assert document["sop"][0]["outcome"] == "pass"
    assert server.formats.count("json_schema") == 1  # refused once, never retried
    assert server.count == 3
    assert result.stderr.count("refused response_format json_schema") == 1
