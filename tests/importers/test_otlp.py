"""`otlp`: OpenTelemetry GenAI and OpenInference traces as conversations, and verdicts back as telemetry.

The traces of the first tests are made by the real instrumentation packages
(`otlp_agent.py`); the others are small OTLP/JSON documents that pin one rule
each (the GenAI conventions' own test cases for message parts, grouping,
de-duplication, the older event form, MCP, bad input).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dialogcheck.errors import LoadError
from dialogcheck.events.trace import trace_context
from dialogcheck.importers import guess_format, import_file
from tests.importers.otlp_agent import ANSWER, CONVERSATION_ID, TOOL_ARGUMENTS, TOOL_RESULT, USER_TEXT, FakeOpenAIServer, make_trace

DIALOGCHECK = [str(Path(sys.executable).with_name("dialogcheck"))]
SOP = """\
sop:
  id: weather
  name: Weather questions
  steps:
    - id: look_up
      label: Look the weather up
      evaluator: {type: tool_called, toolSlug: get_weather}
    - id: booked
      label: Book a table
      evaluator: {type: tool_called, toolSlug: book_table}
"""


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("traces")
    with FakeOpenAIServer() as url:
        return {
            "genai": make_trace("genai", folder / "genai.jsonl", url),
            "openinference": make_trace("openinference", folder / "openinference.jsonl", url),
            "genai-failing": make_trace("genai", folder / "genai_failing.jsonl", url, tool_fails=True),
        }


def events_of(path: Path) -> list[dict]:
    (imported,) = import_file(path, "otlp")
    return [dict(e) for e in imported.events]


def dialogcheck(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*DIALOGCHECK, *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("convention", ["genai", "openinference"])
def test_an_instrumented_agent_loop_is_one_conversation_of_three_events(traces, convention):
    (imported,) = import_file(traces[convention], "otlp")
    events = [dict(e) for e in imported.events]
    assert imported.conversation_id == CONVERSATION_ID
    assert [e["event"] for e in events] == ["user", "tool_executed", "bot"]
    assert events[0]["text"] == USER_TEXT and events[2]["text"] == ANSWER
    tool = events[1]
    assert (tool["tool_name"], tool["arguments"], tool["result"], tool["is_error"]) == ("get_weather", TOOL_ARGUMENTS, TOOL_RESULT, False)
    first = [json.loads(line) for line in traces[convention].read_text().splitlines()][-1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert first["name"] == "invoke_agent weather"  # the root span ends last
    assert trace_context(imported.conversation) == (first["traceId"], first["spanId"])
    assert all(e["metadata"]["trace_id"] == first["traceId"] for e in events)


def test_a_failed_tool_span_is_an_error(traces):
    tool = events_of(traces["genai-failing"])[1]
    assert tool["is_error"] is True and tool["error_message"]


def test_check_with_an_sop_and_the_verdicts_as_telemetry(traces, tmp_path):
    from opentelemetry.proto_json.collector.logs.v1.logs_service import ExportLogsServiceRequest
    from opentelemetry.proto_json.collector.trace.v1.trace_service import ExportTraceServiceRequest

    sop = tmp_path / "sop.yml"
    sop.write_text(SOP)
    logs, sessions = tmp_path / "verdicts.jsonl", tmp_path / "sessions.jsonl"
    done = dialogcheck("check", "--sop", sop, "--input-format", "otlp", traces["genai"], "--format", "json", "--otlp-out", logs, "--openinference-out", sessions)
    assert done.returncode == 1, done.stderr
    verdicts = {s["id"]: s["outcome"] for s in json.loads(done.stdout)["sop"]}
    assert verdicts == {"look_up": "pass", "booked": "fail"}
    (line,) = logs.read_text().splitlines()
    records = ExportLogsServiceRequest.from_dict(json.loads(line)).resource_logs[0].scope_logs[0].log_records
    root = trace_context(import_file(traces["genai"], "otlp").__next__().conversation)
    read_back = {}
    for record in records:
        attributes = {a.key: a.value for a in record.attributes}
        assert record.event_name == "gen_ai.evaluation.result"
        assert (record.trace_id.hex(), record.span_id.hex()) == root
        assert attributes["gen_ai.conversation.id"].string_value == CONVERSATION_ID
        read_back[attributes["gen_ai.evaluation.name"].string_value] = (attributes["gen_ai.evaluation.score.label"].string_value, attributes["gen_ai.evaluation.score.value"].double_value)
    assert read_back == {"SOP look_up Look the weather up": ("pass", 1.0), "SOP booked Book a table": ("fail", 0.0)}
    from openinference.semconv.trace import EvaluationAttributes as Evaluation, OpenInferenceAnnotatorKindValues, SpanAttributes

    (span,) = ExportTraceServiceRequest.from_dict(json.loads(sessions.read_text())).resource_spans[0].scope_spans[0].spans
    attributes = {a.key: a.value for a in span.attributes}
    assert (span.trace_id.hex(), span.parent_span_id.hex()) == root
    assert attributes[SpanAttributes.SESSION_ID].string_value == CONVERSATION_ID
    prefix = SpanAttributes.SESSION_EVALUATIONS
    assert [attributes[f"{prefix}.{n}.{Evaluation.EVALUATION_LABEL}"].string_value for n in (0, 1)] == ["pass", "fail"]
    assert [attributes[f"{prefix}.{n}.{Evaluation.EVALUATION_SCORE}"].double_value for n in (0, 1)] == [1.0, 0.0]
    assert attributes[f"{prefix}.1.{Evaluation.EVALUATION_NAME}"].string_value == "SOP booked Book a table"
    assert attributes[f"{prefix}.1.{Evaluation.EVALUATION_ANNOTATOR_KIND}"].string_value == OpenInferenceAnnotatorKindValues.CODE.value


class _Collector(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

        request = ExportLogsServiceRequest()
        request.ParseFromString(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append((self.path, request))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_the_verdicts_reach_an_otlp_http_collector(traces, tmp_path):
    sop = tmp_path / "sop.yml"
    sop.write_text(SOP)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Collector.received = []
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        done = dialogcheck("check", "--sop", sop, "--input-format", "otlp", traces["genai"], traces["openinference"], "--otlp-endpoint", url)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done.stderr
    records = [r for _, req in _Collector.received for rl in req.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert {path for path, _ in _Collector.received} == {"/v1/logs"}
    labels = sorted(next(a.value.string_value for a in r.attributes if a.key == "gen_ai.evaluation.score.label") for r in records)
    assert labels == ["fail", "fail", "pass", "pass"]  # two conversations, two steps each
    assert all(r.event_name == "gen_ai.evaluation.result" and len(r.trace_id) == 16 for r in records)


def test_an_unreachable_collector_is_reported(traces, tmp_path):
    sop = tmp_path / "sop.yml"
    sop.write_text(SOP)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    port = server.server_address[1]
    server.server_close()
    done = dialogcheck("check", "--sop", sop, "--input-format", "otlp", traces["genai"], "--otlp-endpoint", f"http://127.0.0.1:{port}")
    assert done.returncode == 2
    assert "the collector did not take 2 of the verdicts sent" in done.stderr


# --- small documents, one rule each ---------------------------------------------------------------------------

TRACE = "0af7651916cd43dd8448eb211c80319c"


def attr(key, value):
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def span(span_id, name, start, end=None, parent=None, trace=TRACE, events=(), status=None, **attributes):
    found = {"traceId": trace, "spanId": span_id, "name": name, "startTimeUnixNano": str(start), "endTimeUnixNano": str(end or start + 1),
             "attributes": [attr(k.replace("__", "."), v) for k, v in attributes.items()], "events": list(events)}
    if parent:
        found["parentSpanId"] = parent
    if status:
        found["status"] = status
    return found


def doc(*spans):
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}


def write(tmp_path, *docs) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def chat(span_id, start, inputs, outputs, parent="a" * 16, trace=TRACE, **extra):
    return span(span_id, "chat m", start, start + 5, parent, trace, **{"gen_ai.operation.name": "chat", "gen_ai.input.messages": inputs, "gen_ai.output.messages": outputs, **extra})


def root(start, trace=TRACE, **extra):
    return span("a" * 16, "invoke_agent", start, start + 100, trace=trace, **{"gen_ai.operation.name": "invoke_agent", **extra})


def user(text):
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def bot(text):
    return {"role": "assistant", "parts": [{"type": "text", "content": text}]}


def test_conformance_tool_call_round_trip_in_input_messages(tmp_path):
    """The conventions' round trip: the assistant's `tool_call` part, then the `tool` message's `tool_call_response`."""
    history = [user("What's the weather in Paris?"),
               {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_V", "name": "get_weather", "arguments": {"location": "Paris"}}]},
               {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_V", "response": "rainy, 57°F"}]}]
    path = write(tmp_path, doc(chat("b" * 16, 10, history, [bot("Rainy.")]), root(0)))
    events = events_of(path)
    assert [(e["event"], e.get("text"), e.get("result")) for e in events] == [
        ("user", "What's the weather in Paris?", None), ("tool_executed", None, "rainy, 57°F"), ("bot", "Rainy.", None)]
    assert events[1]["arguments"] == {"location": "Paris"}


def test_conformance_parts_the_schema_allows_are_read_or_ignored(tmp_path):
    """A text part without `content`, a blob part and a part of an unknown type are valid: nothing breaks."""
    inputs = [{"role": "user", "parts": [{"type": "text"}, {"type": "blob", "mime_type": "image/png"}]},
              {"role": "user", "parts": [{"type": "search_result", "source": "https://example.com"}, {"type": "text", "content": "hi"}]}]
    outputs = [{"role": "assistant", "parts": [{"type": "reasoning", "content": "x"}, {"type": "text", "content": "hello"}], "finish_reason": "stop"}]
    events = events_of(write(tmp_path, doc(chat("b" * 16, 10, inputs, outputs), root(0))))
    assert [(e["event"], e["text"]) for e in events] == [("user", ""), ("user", "hi"), ("bot", "hello")]


def test_conformance_parts_not_a_list_is_bad_input(tmp_path):
    outputs = [{"role": "assistant", "parts": {"type": "text", "content": "oops"}}]
    path = write(tmp_path, doc(root(0)), doc(chat("b" * 16, 10, [user("hi")], outputs)))
    with pytest.raises(LoadError) as err:
        events_of(path)
    (problem,) = err.value.problems
    assert (problem.file, problem.line) == (str(path), 2)
    assert "`gen_ai.output.messages[0].parts` must be a list of parts, got an object" in problem.message


def test_history_resent_by_every_chat_call_is_one_event_each_and_a_repeated_yes_is_two(tmp_path):
    first = [user("book it"), bot("Sure?"), user("yes")]
    second = [*first, bot("Which day?"), user("yes")]
    path = write(tmp_path, doc(chat("b" * 16, 10, first[:1], [first[1]]), chat("c" * 16, 20, first, [bot("Which day?")]),
                               chat("d" * 16, 30, second, [bot("Booked.")]), root(0)))
    assert [e.get("text") for e in events_of(path)] == ["book it", "Sure?", "yes", "Which day?", "yes", "Booked."]


def test_traces_group_by_conversation_id_else_session_else_trace(tmp_path):
    other, third = "1" * 32, "2" * 32
    path = write(tmp_path,
                 doc(chat("b" * 16, 10, [user("one")], [bot("r1")]), root(0, **{"gen_ai.conversation.id": "c1"})),
                 doc(chat("b" * 16, 210, [user("one"), bot("r1"), user("two")], [bot("r2")], trace=other), root(200, trace=other, **{"gen_ai.conversation.id": "c1"})),
                 doc(chat("b" * 16, 10, [user("alone")], [bot("r")], trace=third), root(0, trace=third)))
    found = {c.conversation_id: [e.get("text") for e in c.events] for c in import_file(path, "otlp")}
    assert found == {third: ["alone", "r"], "c1": ["one", "r1", "two", "r2"]}


def test_same_start_keeps_the_span_tree_order(tmp_path):
    parent = chat("b" * 16, 10, [user("first")], [])
    child = chat("c" * 16, 10, [user("first"), user("second")], [], parent="b" * 16)
    path = write(tmp_path, doc(child, parent, root(0)))
    assert [e["text"] for e in events_of(path)] == ["first", "second"]


def test_the_older_event_form(tmp_path):
    events = [
        {"name": "gen_ai.user.message", "timeUnixNano": "11", "attributes": [attr("content", "Weather?")]},
        {"name": "gen_ai.choice", "timeUnixNano": "12", "attributes": [
            attr("message", {"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]}),
        ]},
    ]
    later = [
        {"name": "gen_ai.user.message", "timeUnixNano": "21", "attributes": [attr("content", "Weather?")]},
        {"name": "gen_ai.assistant.message", "timeUnixNano": "21", "attributes": [
            attr("tool_calls", [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]),
        ]},
        {"name": "gen_ai.tool.message", "timeUnixNano": "21", "attributes": [attr("content", "hot"), attr("id", "c1")]},
        {"name": "gen_ai.choice", "timeUnixNano": "22", "attributes": [attr("message", {"content": "It is hot."})]},
    ]
    path = write(tmp_path, doc(span("b" * 16, "chat m", 10, 15, "a" * 16, events=events, **{"gen_ai.system": "openai"}),
                               span("c" * 16, "chat m", 20, 25, "a" * 16, events=later, **{"gen_ai.system": "openai"}), root(0)))
    found = events_of(path)
    assert [(e["event"], e.get("text"), e.get("result")) for e in found] == [("user", "Weather?", None), ("tool_executed", None, "hot"), ("bot", "It is hot.", None)]
    assert found[1]["arguments"] == {"city": "Rome"}


def test_an_mcp_tool_span_is_source_mcp_with_its_server(tmp_path):
    tool = span("c" * 16, "execute_tool lookup", 20, 30, "a" * 16, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.arguments": {"q": 1}})
    mcp = span("d" * 16, "tools/call lookup", 21, 29, "c" * 16, status={"code": 2, "message": "boom"},
               **{"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool", "server.address": "crm.local", "error.type": "tool_error"})
    found = events_of(write(tmp_path, doc(tool, mcp, root(0))))
    assert [(e["tool_name"], e["source"], e.get("mcp_server"), e["arguments"]) for e in found] == [("lookup", "mcp", "crm.local", {"q": 1})]
    plain = span("c" * 16, "execute_tool lookup", 20, 30, "a" * 16, status={"code": "STATUS_CODE_ERROR", "message": "down"}, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"})
    (event,) = events_of(write(tmp_path, doc(plain, root(0))))
    assert (event["source"], event["is_error"], event["error_message"]) == ("local", True, "down")


def test_a_json_array_of_documents_and_unknown_attributes(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps([doc(chat("b" * 16, 10, [user("hi")], [bot("hello")], **{"vendor.thing": "x"})), doc(root(0))], indent=2))
    assert [e["text"] for e in events_of(path)] == ["hi", "hello"]
    assert guess_format(json.loads(path.read_text())[0]) == "otlp"


def import_cli(path) -> subprocess.CompletedProcess:
    return dialogcheck("import", "--from", "otlp", path)


def test_bad_input_names_file_line_and_what_was_expected(tmp_path):
    good = json.dumps(doc(root(0)))
    cases = {
        "malformed": (good + "\n{\"resourceSpans\": [\n", ":2:"),
        "no span id": (json.dumps(doc({**root(0), "spanId": ""})), "`spanId` must be 16 hex digits"),
        "not otlp": (json.dumps({"hello": 1}), "expected an OTLP/JSON document: an object with `resourceSpans`"),
        "unknown convention": (json.dumps(doc(span("a" * 16, "GET /", 0, **{"http.method": "GET"}))), "no span of this file follows the GenAI semantic conventions"),
    }
    for name, (text, expected) in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.jsonl"
        path.write_text(text + "\n")
        done = import_cli(path)
        assert done.returncode == 2, (name, done.stderr)
        assert expected in done.stderr and f"{path}:" in done.stderr, (name, done.stderr)
        assert done.stdout == ""


def test_memory_holds_a_trace_only_until_its_root_span(tmp_path, monkeypatch):
    """Each trace named by no conversation id is handed out when its root span arrives, not at the end of the file."""
    from dialogcheck.importers import otlp

    docs = []
    for n in range(3):
        trace = f"{n + 1:032x}"
        docs += [doc(chat("b" * 16, 10, [user(f"q{n}")], [bot("a")], trace=trace)), doc(root(0, trace=trace))]
    path = write(tmp_path, *docs)
    held = []
    original = otlp._Reader.item

    def watching(self, item):
        held.append(sum(len(spans) for spans in self.open.values()))
        yield from original(self, item)

    monkeypatch.setattr(otlp._Reader, "item", watching)
    assert len(list(import_file(path, "otlp"))) == 3
    assert max(held) == 1


def test_traces_without_message_content_say_so(tmp_path):
    path = write(tmp_path, doc(span("b" * 16, "chat m", 10, 15, "a" * 16, **{"gen_ai.operation.name": "chat"}), root(0)))
    done = import_cli(path)
    assert done.returncode == 2
    assert f"{path}:1:" in done.stderr and "no span of this file holds a message or a tool run" in done.stderr


def test_a_conversation_goes_out_when_its_last_trace_completes(tmp_path):
    """A first pass finds each conversation's last trace: it is handed out there, not held to the end of the file."""
    one, two, alone, rootless = "1" * 32, "2" * 32, "3" * 32, "4" * 32
    path = write(tmp_path,
                 doc(chat("b" * 16, 10, [user("hi")], [bot("r1")], trace=one), root(0, trace=one, **{"session.id": "s1"})),
                 doc(chat("b" * 16, 210, [user("hi"), bot("r1"), user("more")], [bot("r2")], trace=two), root(200, trace=two, **{"session.id": "s1"})),
                 doc(chat("b" * 16, 10, [user("alone")], [bot("r")], trace=alone), root(0, trace=alone)),
                 doc(chat("b" * 16, 300, [user("x")], [bot("y")], trace=rootless, **{"session.id": "s2"})),
                 doc(chat("b" * 16, 5, [user("w")], [bot("z")], **{"session.id": "s2"}), root(0, **{"session.id": "s2"})))
    found = [(c.conversation_id, [e.get("text") for e in c.events]) for c in import_file(path, "otlp")]
    assert found == [("s1", ["hi", "r1", "more", "r2"]), (alone, ["alone", "r"]), ("s2", ["w", "z", "x", "y"])]


def _peak_bytes(path: Path) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        assert sum(1 for _ in import_file(path, "otlp")) > 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("traces_per_conversation", [1, 10])
def test_memory_stays_flat_as_the_file_grows(tmp_path, traces_per_conversation):
    """Ten times the traces, about the same peak: what is held is the traces and conversations still open."""
    peaks = []
    for n in (300, 3000):
        path = tmp_path / f"{n}.jsonl"
        with path.open("w") as handle:
            for i in range(n):
                trace = f"{i + 1:032x}"
                named = {"gen_ai.conversation.id": f"c{i // traces_per_conversation}"} if traces_per_conversation > 1 else {}
                handle.write(json.dumps(doc(chat("b" * 16, 10 * i + 1, [user(f"question {i}")], [bot("an answer " * 20)], trace=trace))) + "\n")
                handle.write(json.dumps(doc(root(10 * i, trace=trace, **named))) + "\n")
        peaks.append(_peak_bytes(path))
    assert peaks[1] < 3 * peaks[0], peaks
    assert peaks[1] < path.stat().st_size / 8, (peaks, path.stat().st_size)


def test_tool_results_pair_with_their_calls_by_id_and_a_tool_span_without_an_id_takes_its_tools_call(tmp_path):
    calls = {"role": "assistant", "parts": [{"type": "tool_call", "id": "a", "name": "x", "arguments": {}},
                                            {"type": "tool_call", "id": "b", "name": "y", "arguments": "{\"n\": 1}"}]}
    results = [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "b", "response": "rb"}]},
               {"role": "tool", "parts": [{"type": "tool_call_response", "id": "a", "response": "ra"}]}]
    spans = [chat("b" * 16, 10, [user("go")], [calls]), chat("c" * 16, 30, [user("go"), calls, *results], [bot("done")]), root(0)]
    found = events_of(write(tmp_path, doc(*spans)))
    assert [(e["event"], e.get("tool_name"), e.get("result"), e.get("arguments")) for e in found] == [
        ("user", None, None, None), ("tool_executed", "x", "ra", {}), ("tool_executed", "y", "rb", {"n": 1}), ("bot", None, None, None)]
    ran = span("d" * 16, "execute_tool x", 20, 25, "a" * 16, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x", "gen_ai.tool.call.result": "from the span"})
    found = events_of(write(tmp_path, doc(*spans[:2], ran, root(0))))
    assert [(e.get("tool_name"), e.get("result")) for e in found if e["event"] == "tool_executed"] == [("y", "rb"), ("x", "from the span")]


def test_an_agent_span_summing_up_its_model_calls_says_nothing_twice(tmp_path):
    """`invoke_agent` spans may carry the messages of the run too: read only where no span under them does."""
    messages = {"gen_ai.input.messages": [user("hi")], "gen_ai.output.messages": [bot("hello")]}
    agent = root(0, **messages)
    found = events_of(write(tmp_path, doc(chat("b" * 16, 10, [user("hi")], [bot("hello")]), agent)))
    assert [(e["event"], e["text"]) for e in found] == [("user", "hi"), ("bot", "hello")]
    alone = events_of(write(tmp_path, doc(agent)))  # an agent framework that records no model call spans
    assert [(e["event"], e["text"]) for e in alone] == [("user", "hi"), ("bot", "hello")]


def test_log_records_are_not_read_and_the_error_says_so(tmp_path):
    log = {"timeUnixNano": "1", "eventName": "gen_ai.user.message", "traceId": TRACE, "spanId": "b" * 16,
           "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hi"}}]}}}
    logs = {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {"name": "t"}, "logRecords": [log]}]}]}
    done = import_cli(write(tmp_path, logs))
    assert done.returncode == 2 and "the file holds no spans" in done.stderr and "log records (`resourceLogs`) are not read" in done.stderr
    done = import_cli(write(tmp_path, logs, doc(span("b" * 16, "chat m", 10, 15, "a" * 16, **{"gen_ai.operation.name": "chat"}), root(0))))
    assert done.returncode == 2 and "no span of this file holds a message" in done.stderr and "log records" in done.stderr



_OLDER = [{"name": "gen_ai.user.message", "timeUnixNano": "11", "attributes": [attr("content", 5)]}]
_CHOICE = [{"name": "gen_ai.choice", "timeUnixNano": "12", "attributes": [attr("message", {"content": 5})]}]
_OI = {"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user"}
_NOT_TEXT = {
    "gen_ai.input.messages[0].parts[1].content": chat("b" * 16, 10, [{"role": "user", "parts": [{"type": "text"}, {"type": "text", "content": 5}]}], [bot("hi")]),
    "gen_ai.user.message.content": span("b" * 16, "chat m", 10, 15, "a" * 16, events=_OLDER, **{"gen_ai.system": "openai"}),
    "gen_ai.choice.message.content": span("b" * 16, "chat m", 10, 15, "a" * 16, events=_CHOICE, **{"gen_ai.system": "openai"}),
    "llm.input_messages.0.message.content": span("b" * 16, "llm", 10, 15, "a" * 16, **{**_OI, "llm.input_messages.0.message.content": 5}),
    "llm.input_messages.0.message.contents.1.message_content.text": span("b" * 16, "llm", 10, 15, "a" * 16, **{
        **_OI, "llm.input_messages.0.message.contents.0.message_content.text": "hi", "llm.input_messages.0.message.contents.1.message_content.text": 5}),
}


@pytest.mark.parametrize("what", list(_NOT_TEXT))
def test_a_text_that_is_not_a_string_is_bad_input_in_every_form(tmp_path, what):
    """Never an empty message: a text part's `content`, an older event's `content` and OpenInference's `content`
    or `text` that are not strings are reported at their span, as a wrong `parts` is; null or no text is no text."""
    path = write(tmp_path, doc(root(0)), doc(_NOT_TEXT[what]))
    with pytest.raises(LoadError) as err:
        events_of(path)
    (problem,) = err.value.problems
    assert (problem.file, problem.line, problem.message) == (str(path), 2, f"span {_NOT_TEXT[what]['name']!r} (spanId {'b' * 16}): `{what}` must be a string, got a number")


# --- the span tree: one pass over parent ids, a cycle refused ---------------------------------------------------


def tool_span(n, parent, name=None, **extra):
    return span(f"{n:016x}", f"execute_tool {name or f't{n}'}", 10 + n, 20 + n, f"{parent:016x}" if parent else None,
                **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name or f"t{n}", **extra})


_CHAINS = {
    "tools each of its own name": lambda n: [tool_span(i, i - 1) for i in range(1, n + 1)],
    "tools of one name": lambda n: [tool_span(i, i - 1, "lookup") for i in range(1, n + 1)],
    "tools under http spans": lambda n: [span(f"{i:016x}", "GET /", 10 + i, parent=f"{i - 1:016x}" if i > 1 else None, **{"http.method": "GET"})
                                         if i % 2 else tool_span(i, i - 1) for i in range(1, n + 1)],
    "chat spans": lambda n: [chat(f"{i:016x}", 10 + i, [user(f"q{i}")], [bot(f"a{i}")], parent=f"{i - 1:016x}" if i > 1 else None)
                             for i in range(1, n + 1)],
}


@pytest.mark.parametrize("chain", list(_CHAINS))
def test_a_chain_of_spans_each_the_child_of_the_last_is_read_with_a_few_parent_id_reads_a_span(tmp_path, monkeypatch, chain):
    """Every walk over parent ids is one pass over the trace, not one walk to the root a span: the spans count
    how often their `parentSpanId` is read, and a chain of 3,000 reads it a few times a span (a walk to the root
    from every tool span read it 4.5 million times)."""
    from dialogcheck.importers import otlp_spans

    reads = [0]

    class CountingSpan(otlp_spans.Span):
        def __getattribute__(self, name):
            if name == "parent_id":
                reads[0] += 1
            return object.__getattribute__(self, name)

    monkeypatch.setattr(otlp_spans, "Span", CountingSpan)
    n = 3000
    events = events_of(write(tmp_path, doc(*_CHAINS[chain](n))))
    assert len(events) == {"tools of one name": 1, "tools under http spans": n // 2, "chat spans": 2}.get(chain, n)  # nested chat spans: the innermost speaks
    assert 0 < reads[0] <= 10 * n, reads


def test_a_span_under_a_span_no_convention_names_is_read(tmp_path):
    """An HTTP span between the agent's spans (an instrumented client inside a tool run) is passed over, not a crash."""
    http = span("c" * 16, "GET /weather", 12, 18, "a" * 16, **{"http.method": "GET"})
    tool = span("d" * 16, "execute_tool lookup", 13, 17, "c" * 16, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"})
    assert [e["tool_name"] for e in events_of(write(tmp_path, doc(http, tool, root(0))))] == ["lookup"]


#: Traces whose parent ids form a cycle, with the cycle the error must name (ids by number).
_CYCLES = {
    "a span its own parent": ([root(0), tool_span(1, 1)], "1 -> 1", 1),
    "a tool span under two spans each the other's parent": (
        [root(0), chat(f"{2:016x}", 12, [user("q")], [bot("a")], parent=f"{3:016x}"),
         chat(f"{3:016x}", 13, [user("q")], [bot("a")], parent=f"{2:016x}"), tool_span(4, 2)], "2 -> 3 -> 2", 1),
    "a whole trace, no root": ([tool_span(i, i - 1 if i > 1 else 10) for i in range(1, 11)], "1 -> a -> 9 -> ... -> 2 -> 1", 0),
}


def test_parent_ids_in_a_cycle_are_bad_input_naming_the_span_and_the_cycle(tmp_path):
    """A cycle has no root to order its spans from: refused at the `parentSpanId` of its first span in the file,
    never a loop without end, nor a guessed order. Run in a process of its own, bounded, so a loop cannot hang the suite."""
    paths = {}
    for name, (spans, _, _) in _CYCLES.items():
        paths[name] = tmp_path / f"{name.replace(' ', '_')}.jsonl"
        paths[name].write_text(json.dumps(doc(root(0, trace="9" * 32)), separators=(",", ":")) + "\n"
                               + json.dumps(doc(*spans), separators=(",", ":")) + "\n")
    script = ("import sys\nfrom dialogcheck.errors import LoadError\nfrom dialogcheck.importers import import_file\n"
              "for path in sys.argv[1:]:\n    try:\n        list(import_file(path, 'otlp'))\n        print('imported')\n"
              "    except LoadError as err:\n        print(err.problems[0])\n")
    done = subprocess.run([sys.executable, "-c", script, *map(str, paths.values())], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = dict(zip(_CYCLES, done.stdout.splitlines()))
    for name, (_spans, cycle, _at) in _CYCLES.items():
        first = f"{int(cycle.split()[0], 16):016x}"
        shown = " -> ".join(part if part == "..." else f"{int(part, 16):016x}" for part in cycle.split(" -> "))
        text = paths[name].read_text().splitlines()[1]
        column = text.index('"parentSpanId":', text.index(f'"spanId":"{first}"')) + len('"parentSpanId":') + 1
        size = len(cycle.split(" -> ")) - 1 if "..." not in cycle else 10
        assert said[name] == (f"{paths[name]}:2:{column}: the parents of span {first} form a cycle of {size} span{'s' if size > 1 else ''} "
                              f"({shown}, each arrow to the span's parent): expected the spans of a trace to form a tree under `parentSpanId`"), name


def test_a_span_id_written_twice_in_a_tree_of_tool_spans_is_no_crash(tmp_path):
    """An exporter that writes one span twice, the copy naming the span as its parent: never a crash,
    and a tool span of the same name elsewhere in the trace is a run of its own."""
    once, again, other = tool_span(1, None, "lookup"), tool_span(1, 1, "lookup"), tool_span(3, None, "lookup")
    events = events_of(write(tmp_path, doc(once, again, other)))
    assert [e["metadata"]["span_id"] for e in events] == [f"{1:016x}", f"{1:016x}", f"{3:016x}"]  # each copy, as any span
