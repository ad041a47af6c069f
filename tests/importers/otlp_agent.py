"""Traces made by the real instrumentation packages, for the `otlp` importer's tests.

A small agent loop asks the `openai` SDK, pointed at a loopback fake OpenAI
server, about the weather: the server answers first with a tool call, then
with text. The loop is instrumented either by `opentelemetry-instrumentation-
openai-v2` (the GenAI conventions; the loop adds the `execute_tool` span
through `opentelemetry-util-genai`, as the conventions say a tool run is
recorded) or by `openinference-instrumentation-openai`. Its spans are encoded
as OTLP/JSON by the SDK's JSON encoder (`opentelemetry-exporter-otlp-json-common`),
one export a line, as they end: what the Collector's file exporter writes.
Each run is in a subprocess, as the instrumentors patch the SDK for good.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

USER_TEXT = "What's the weather in Paris?"
TOOL_ARGUMENTS = {"city": "Paris"}
TOOL_RESULT = "sunny, 24C"
ANSWER = "It is sunny in Paris, 24C."
CONVERSATION_ID = "conv-weather-1"


def _completion(message: dict, finish: str) -> dict:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class _FakeOpenAI(BaseHTTPRequestHandler):
    """Chat completions: a tool call while no tool result was sent, then the answer."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if any(m.get("role") == "tool" for m in body["messages"]):
            answer = _completion({"role": "assistant", "content": ANSWER}, "stop")
        else:
            call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps(TOOL_ARGUMENTS)}}
            answer = _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class FakeOpenAIServer:
    def __enter__(self) -> str:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def make_trace(convention: str, out: Path, base_url: str, *, tool_fails: bool = False) -> Path:
    """Run the agent loop once in a subprocess, instrumented by `convention` ("genai" or "openinference")."""
    env = {
        **os.environ,
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
        "OPENAI_API_KEY": "test-key",
    }
    args = [sys.executable, __file__, convention, str(out), base_url, "fail" if tool_fails else "ok"]
    subprocess.run(args, check=True, env=env, timeout=120)
    return out


def _agent_loop(convention: str, out: Path, base_url: str, tool_fails: bool) -> None:
    import openai
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class JsonLines(SpanExporter):
        def export(self, spans):
            with out.open("a") as handle:
                handle.write(json.dumps(encode_spans(spans).to_dict()) + "\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLines()))
    trace.set_tracer_provider(provider)
    tracer = trace.get_tracer("weather-agent")
    if convention == "genai":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=base_url)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    messages: list[dict] = [{"role": "user", "content": USER_TEXT}]
    root_attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": CONVERSATION_ID}
    if convention != "genai":
        root_attributes = {"openinference.span.kind": "AGENT", "session.id": CONVERSATION_ID}
    with tracer.start_as_current_span("invoke_agent weather", attributes=root_attributes):
        for _ in range(3):
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools).choices[0].message
            messages.append(reply.model_dump(exclude_none=True))
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                result = _run_tool(convention, tracer, call, tool_fails)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    provider.shutdown()


def _run_tool(convention: str, tracer, call, fails: bool) -> str:
    """The tool run, recorded as its convention says: GenAI `execute_tool` through util-genai, or an OpenInference TOOL span."""
    arguments = json.loads(call.function.arguments)
    result = "error: weather service down" if fails else TOOL_RESULT
    if convention == "genai":
        from opentelemetry.util.genai.handler import TelemetryHandler
        from opentelemetry.util.genai.types import Error

        invocation = TelemetryHandler(tracer_provider=None).tool(call.function.name)
        invocation.tool_call_id = call.id
        invocation.arguments = arguments
        if fails:
            invocation.fail(Error(message=result, type=RuntimeError))
        else:
            invocation.tool_result = result
            invocation.stop()
        return result
    from opentelemetry.trace import Status, StatusCode

    with tracer.start_as_current_span(f"tool {call.function.name}") as span:
        span.set_attributes({"openinference.span.kind": "TOOL", "tool.name": call.function.name,
                             "input.value": call.function.arguments, "output.value": result})
        if fails:
            span.set_status(Status(StatusCode.ERROR, result))
    return result


if __name__ == "__main__":
    _agent_loop(sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "fail")
