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
follows one is bad input, and so are parent ids that form a cycle (`otlp_tree`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import LoadError
from ._build import Draft, ImportedConversation, convert_items
from ._records import Item, ItemProblem, file_items
from .otlp_conventions import CONVERSATION_KEYS, GENAI, OPENINFERENCE, SpanSays, convention, conversation_key, read_span
from .otlp_spans import Span, document_spans, raw_attribute, raw_spans
from .otlp_threads import Thread, add_trace, innermost_messages, merge_tool_spans
from .otlp_tree import SpanTree

_LOGS_HINT = (
    "log records (`resourceLogs`) are not read: messages recorded as log events (the older GenAI form) "
    "must be on the spans, as with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only"
)
_END = object()  # the value of the item after the last, where what is still held is handed out


def _said(span: Span) -> SpanSays:
    try:
        return read_span(span)
    except ItemProblem as err:
        raise LoadError([span.item.problem(str(err), err.path)]) from None


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
    for trace_names in open_traces.values():
        key = conversation_key(trace_names)
        if key is not None:
            last[key] = None
    return last


class _Reader:
    """The state of one file being read: traces still open, conversations still held."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.last: dict[str, str | None] | None = None  # the first pass's, made when the second starts
        self.open: dict[str, list[Span]] = {}
        self.threads: dict[str, Thread] = {}
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
        tree = SpanTree.of(spans)
        key = conversation_key([s.attributes for s in spans])
        thread = self.threads.get(key) if key is not None else None
        if thread is None:
            thread = Thread(key or spans[0].trace_id)
            if key is not None:
                self.threads[key] = thread
        merge_tool_spans(tree, says)
        innermost_messages(tree, says)
        add_trace(thread, tree, says)
        if key is not None and (self.last or {}).get(key) != spans[0].trace_id:
            return  # the conversation goes on in a later trace
        if key is not None:  # a thread without a key was never stored
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
