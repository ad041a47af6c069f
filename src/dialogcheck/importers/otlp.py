"""`otlp`: OpenTelemetry traces of GenAI agents (GenAI semantic conventions or OpenInference) as conversations.

Accepted files: OTLP/JSON as the Collector's file exporter writes it (one
`{"resourceSpans": [...]}` a line), one such document, or a JSON list of
them. What each span says is read by `otlp_conventions`; this module groups
spans into conversations and turns what they said into native events.

- **Grouping.** A trace belongs to the conversation its spans name in
  `gen_ai.conversation.id`, else `session.id`; a trace that names none is a
  conversation of its own, named by its trace id.
- **Order.** Within a trace, by time: the messages sent to a model at the
  start of its span, its answer at the end, a tool run at its start; spans
  that start together keep the span tree's order (a parent before its
  children, siblings by start). Traces of one conversation follow each other
  by the start of their root span.
- **Events.** A `user` message is a `user` event, an assistant's text a `bot`
  event; a tool span (GenAI `execute_tool`, OpenInference `TOOL`) is a
  `tool_executed` event with its arguments, result and `is_error` (span status
  error, or `error.type`), `source: mcp` and `mcp_server` when it carries
  `mcp.*` attributes. A tool call no tool span ran is a `tool_executed` event
  whose result is the tool message answering its call id. Every chat call
  re-sends the history: a message already seen in the conversation is not
  seen again (counted, so a user who says "yes" twice says it twice).
- **Trace context.** Each event's `metadata` holds the `trace_id` and
  `span_id` of the span it came from; the first event's also holds the
  `root_span_id` of its trace, where verdicts exported as telemetry hang.
- **Memory.** The file is read twice. The first pass keeps only ids: for
  each conversation named by an id, the trace that completes it last. The
  second converts: the spans of a trace are held until its root span arrives
  (the SDK ends a root span last, so a file written as spans end holds it
  after its children) or the file ends, then the trace is reduced to events;
  a conversation's events (never its spans) are held until its last trace
  is reduced, and it is handed out there. So what is held is the traces and
  conversations still open, plus one id pair per named conversation.

Spans that follow neither convention (HTTP, database, ...) are ignored, and
so are attributes no convention here names; a file none of whose spans
follows one is bad input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LoadError
from ..events.trace import ROOT_SPAN_ID, SPAN_ID, TRACE_ID
from ._build import Draft, ImportedConversation, convert_items
from ._chat import tool_event
from ._records import Item, ItemProblem, JsonPath, file_items
from .otlp_conventions import CONVERSATION_KEYS, GENAI, OPENINFERENCE, Message, SpanSays, ToolRun, conversation_key, convention, read_span
from .otlp_spans import Span, document_spans, raw_attribute, raw_spans

_LOGS_HINT = (
    "log records (`resourceLogs`) are not read: messages recorded as log events (the GenAI conventions before 1.37) "
    "must be on the spans, as with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only"
)
_END = object()  # the value of the item after the last, where what is still held is handed out


@dataclass
class _Block:
    """The events one trace added to a conversation, kept apart so traces can be put in time order."""

    start: int
    trace_id: str
    root_span_id: str
    entries: list[tuple[dict[str, Any], Item, JsonPath]] = field(default_factory=list)


@dataclass
class _Thread:
    """A conversation being read: its events so far, trace by trace, and what de-duplication needs."""

    key: str
    blocks: list[_Block] = field(default_factory=list)
    seen: Counter = field(default_factory=Counter)
    #: Tool calls still waiting for their result message, by call id.
    waiting: dict[str | None, list[dict[str, Any]]] = field(default_factory=dict)
    #: Call ids a tool span ran: their call and result messages make no event of their own.
    ran: set[str] = field(default_factory=set)

    @property
    def has_events(self) -> bool:
        return any(block.entries for block in self.blocks)

    def draft(self) -> Draft:
        draft = Draft(self.key)
        for block in sorted(self.blocks, key=lambda b: b.start):
            for event, item, path in block.entries:
                draft.add(event, item, path)
        if draft.events:
            draft.events[0]["metadata"][ROOT_SPAN_ID] = min(self.blocks, key=lambda b: b.start).root_span_id
        return draft


def _tree_order(spans: list[Span]) -> dict[str, int]:
    """Each span's place in a depth-first walk of the trace (a parent before its children, siblings by start)."""
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[Span]] = {}
    for span in spans:
        children.setdefault(span.parent_id if span.parent_id in ids else None, []).append(span)
    order: dict[str, int] = {}
    stack = sorted(children.get(None, []), key=lambda s: (s.start, s.span_id), reverse=True)
    while stack:
        span = stack.pop()
        if span.span_id in order:
            continue
        order[span.span_id] = len(order)
        stack.extend(sorted(children.get(span.span_id, []), key=lambda s: (s.start, s.span_id), reverse=True))
    for span in spans:  # a cycle of parents (a broken exporter) keeps file order
        order.setdefault(span.span_id, len(order))
    return order


def _said(span: Span) -> SpanSays:
    try:
        return read_span(span)
    except ItemProblem as err:
        raise LoadError([span.item.problem(str(err), err.path)]) from None


def _tool_spans(spans: list[Span], says: dict[str, SpanSays]) -> None:
    """An MCP client span under the `execute_tool` span of the same tool is the same run: one event, source mcp."""
    by_id = {s.span_id: s for s in spans}
    for span in spans:
        run = says[span.span_id].tool
        parent = by_id.get(span.parent_id or "")
        while run is not None and parent is not None:
            outer = says.get(parent.span_id)
            if outer is not None and outer.tool is not None and outer.tool.name == run.name:
                outer.tool.mcp_server = outer.tool.mcp_server or run.mcp_server
                says[span.span_id] = SpanSays(says[span.span_id].convention)
                break
            parent = by_id.get(parent.parent_id or "")


def _last_traces(path: str | Path) -> dict[str, str | None]:
    """The first pass over the file: for each conversation named by an id, the trace that completes it last
    (None: a trace of it never completes, so it is held to the end of the file). Only ids are held; whatever
    is malformed is skipped, for the second pass to report where it is."""
    open_traces: dict[str, list[dict[str, Any]]] = {}
    last: dict[str, str | None] = {}
    try:
        for item in file_items(path):
            complete = []
            for raw in raw_spans(item.value):
                trace_id = raw.get("traceId")
                if not isinstance(trace_id, str):
                    continue
                trace_id = trace_id.lower()
                names = {key: raw_attribute(raw, key) for key in CONVERSATION_KEYS}
                open_traces.setdefault(trace_id, []).append({k: v for k, v in names.items() if v is not None})
                if not raw.get("parentSpanId"):
                    complete.append(trace_id)
            for trace_id in dict.fromkeys(complete):
                key = conversation_key(open_traces.pop(trace_id))
                if key is not None:
                    last[key] = trace_id
    except LoadError:
        pass
    for names in open_traces.values():
        key = conversation_key(names)
        if key is not None:
            last[key] = None
    return last


def _innermost_messages(spans: list[Span], says: dict[str, SpanSays], order: dict[str, int]) -> None:
    """Messages of a span some span under which carries messages too are a summary of theirs (an `invoke_agent`
    or workflow span around its model calls): only the innermost are read, so nothing is said twice."""
    children: dict[str, list[str]] = {}
    for span in spans:
        if span.parent_id is not None:
            children.setdefault(span.parent_id, []).append(span.span_id)
    below: dict[str, bool] = {}
    for span in sorted(spans, key=lambda s: order[s.span_id], reverse=True):  # children before their parents
        below[span.span_id] = any(_carries(says.get(c)) or below.get(c, False) for c in children.get(span.span_id, ()))
        said = says.get(span.span_id)
        if below[span.span_id] and said is not None:
            said.inputs, said.outputs = [], []


def _carries(said: SpanSays | None) -> bool:
    return said is not None and bool(said.inputs or said.outputs)


class _Reader:
    """The state of one file being read: traces still open, conversations still held."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.last: dict[str, str | None] | None = None  # the first pass's, made when the second starts
        self.open: dict[str, list[Span]] = {}
        self.threads: dict[str, _Thread] = {}
        self.first_span: Span | None = None
        self.logs_seen = False  # documents of log records: the older GenAI form as log events, not read here
        self.any_convention = False
        self.handed_out = 0

    def item(self, item: Item) -> Iterator[Draft]:
        if self.last is None:
            self.last = _last_traces(self.path)
        if item.value is _END:
            yield from self.end()
            return
        complete = []
        self.logs_seen = self.logs_seen or (isinstance(item.value, dict) and "resourceLogs" in item.value)
        for span in document_spans(item):
            self.first_span = self.first_span or span
            self.open.setdefault(span.trace_id, []).append(span)
            if span.parent_id is None:
                complete.append(span.trace_id)
        for trace_id in dict.fromkeys(complete):
            yield from self.trace(self.open.pop(trace_id, []))

    def trace(self, spans: list[Span]) -> Iterator[Draft]:
        if not spans:
            return
        says = {s.span_id: _said(s) for s in spans if convention(s) is not None}
        if not says:
            return
        self.any_convention = True
        order = _tree_order(spans)
        ordered = sorted(spans, key=lambda s: order[s.span_id])
        key = conversation_key([s.attributes for s in spans])
        thread = self.threads.get(key) if key is not None else None
        if thread is None:
            thread = _Thread(key or spans[0].trace_id)
            if key is not None:
                self.threads[key] = thread
        _tool_spans(ordered, says)
        _innermost_messages(spans, says, order)
        _add_trace(thread, ordered, says, order)
        if key is not None and (self.last or {}).get(key) != spans[0].trace_id:
            return  # the conversation goes on in a later trace
        self.threads.pop(key, None)
        if thread.has_events:
            self.handed_out += 1
            yield thread.draft()

    def end(self) -> Iterator[Draft]:
        for trace_id in list(self.open):
            yield from self.trace(self.open.pop(trace_id))
        for thread in self.threads.values():
            if thread.has_events:
                self.handed_out += 1
                yield thread.draft()
        self.threads.clear()
        if self.first_span is None:
            raise ItemProblem("the file holds no spans: expected OTLP/JSON documents with `resourceSpans` holding GenAI or OpenInference spans"
                              + (f"; {_LOGS_HINT}" if self.logs_seen else ""))
        span = self.first_span
        if not self.any_convention:
            raise LoadError([span.item.problem(
                f"no span of this file follows the {GENAI} (`gen_ai.*` attributes or events) or {OPENINFERENCE} "
                f"(`openinference.span.kind`): expected traces of a GenAI agent (the first span is {span.name!r})", span.path,
            )])
        if not self.handed_out:
            raise LoadError([span.item.problem(
                "no span of this file holds a message or a tool run: expected `gen_ai.input.messages` / "
                "`gen_ai.output.messages`, `llm.input_messages.*`, or tool spans (were the traces recorded with message "
                "content captured, e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?)"
                + (f"; {_LOGS_HINT}" if self.logs_seen else ""), span.path,
            )])


def _add_trace(thread: _Thread, spans: list[Span], says: dict[str, SpanSays], order: dict[str, int]) -> None:
    """What one trace said, in time order, added to its conversation as the events not seen in it before."""
    root = min((s for s in spans if s.parent_id is None or order[s.span_id] == 0), key=lambda s: (order[s.span_id], s.start))
    block = _Block(min(s.start for s in spans), root.trace_id, root.span_id)
    thread.ran.update(said.tool.call_id for said in says.values() if said.tool is not None and said.tool.call_id)
    unnamed = Counter(said.tool.name for said in says.values() if said.tool is not None and not said.tool.call_id)
    happenings: list[tuple[int, int, int, str, Any, Span]] = []
    for span in spans:
        said = says.get(span.span_id)
        if said is None:
            continue
        if said.tool is not None:
            happenings.append((span.start, order[span.span_id], 1, "tool", said.tool, span))
        if said.inputs:
            happenings.append((span.start, order[span.span_id], 0, "in", said.inputs, span))
        if said.outputs:
            happenings.append((span.end, order[span.span_id], 2, "out", said.outputs, span))
    happenings.sort(key=lambda h: h[:3])
    for time, _, _, kind, what, span in happenings:
        emit = _Emitter(thread, block, span, time, unnamed)
        if kind == "tool":
            emit.tool(what)
        elif kind == "in":
            local: Counter = Counter()
            for message in what:
                fingerprint = message.fingerprint()
                local[fingerprint] += 1
                if local[fingerprint] > thread.seen[fingerprint]:
                    thread.seen[fingerprint] += 1
                    emit.message(message)
        else:
            for message in what:
                thread.seen[message.fingerprint()] += 1
                emit.message(message)
    thread.blocks.append(block)


@dataclass
class _Emitter:
    """Native events from what one span said, stamped with its time and its place in the trace."""

    thread: _Thread
    block: _Block
    span: Span
    time: int
    #: Tool spans of this trace that name no call id, by tool: each stands for the next call of that tool.
    unnamed: Counter

    def add(self, event: dict[str, Any]) -> dict[str, Any]:
        event["timestamp"] = self.time / 1e9
        event.setdefault("metadata", {}).update({TRACE_ID: self.span.trace_id, SPAN_ID: self.span.span_id})
        self.block.entries.append((event, *_origin(self.span)))
        return event

    def message(self, message: Message) -> None:
        if message.role == "user" and (message.text or not message.results):
            self.add({"event": "user", "text": message.text})
        elif message.role == "assistant":
            if message.text.strip() or not message.calls:
                self.add({"event": "bot", "text": message.text})
            for call in message.calls:
                if call.call_id in self.thread.ran:
                    continue
                if self.unnamed[call.name] > 0:
                    self.unnamed[call.name] -= 1
                    if call.call_id is not None:
                        self.thread.ran.add(call.call_id)
                    continue
                arguments, extra = (call.arguments, None) if isinstance(call.arguments, dict) else ({}, {"arguments": call.arguments})
                event = self.add(tool_event(call.name, arguments, extra))
                event["metadata"]["result_missing"] = True
                self.thread.waiting.setdefault(call.call_id, []).append(event)
        for call_id, response in message.results:
            self._result(call_id, response)

    def _result(self, call_id: str | None, response: Any) -> None:
        """Fill in the call this answers: the one with its id, or without an id the earliest still waiting."""
        if call_id in self.thread.ran:
            return
        if call_id is None:
            waiting = next((w for w in self.thread.waiting.values() if w), None)
        else:
            waiting = self.thread.waiting.get(call_id)
        if waiting:
            event = waiting.pop(0)
            event["result"] = response
            event["metadata"].pop("result_missing", None)

    def tool(self, run: ToolRun) -> None:
        arguments, extra = (run.arguments, None) if isinstance(run.arguments, dict) else ({}, {"arguments": run.arguments})
        event = tool_event(run.name, arguments, extra)
        event.update(result=run.result, is_error=run.is_error)
        if run.error_message is not None:
            event["error_message"] = run.error_message
        if run.mcp_server is not None:
            event.update(source="mcp", mcp_server=run.mcp_server)
        if run.call_id is not None:
            event.setdefault("metadata", {})["tool_call_id"] = run.call_id
        self.add(event)


def _origin(span: Span) -> tuple[Item, JsonPath]:
    """Where an event's span is, held without the span: a line of JSONL is kept as its line number alone (a
    conversation's events may be held to the end of the file, its lines must not be), a document's place as it is
    (its text is the file's, held anyway)."""
    item = span.item
    if item.offset:
        return item, span.path
    return Item(None, item.file, "", 0, item.first_line, item.index), ()


def _items(path: str | Path) -> Iterator[Item]:
    """The file's documents, then one more item that says the file ended (where held conversations go out)."""
    last: Item | None = None
    for last in file_items(path):
        yield last
    yield Item(_END, str(path), last.text if last is not None else "", last.offset if last is not None else 0, last.first_line if last is not None else 1)


def read(path: str | Path) -> Iterator[ImportedConversation]:
    """Every conversation of an OTLP/JSON trace file, handed out as its last trace completes."""
    reader = _Reader(path)
    return convert_items(_items(path), reader.item, str(path))


__all__ = ["read"]
