"""What one trace adds to the conversation it belongs to: its spans' messages and tool runs, in order, as native events.

A conversation is built trace by trace (`Thread`): each trace's messages and
tool runs are put in time order, with the span tree breaking ties, and only
what the conversation has not seen yet becomes an event (every chat call
re-sends the history). A tool span is the one event of its tool call; a call
no tool span ran is an event whose result is the message answering its call
id. `otlp.py` decides which traces make a conversation and when it is done.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..events.trace import ROOT_SPAN_ID, SPAN_ID, TRACE_ID
from ._build import Draft
from ._chat import tool_event
from ._records import Item, JsonPath
from .otlp_conventions import Message, SpanSays, ToolRun
from .otlp_spans import Span
from .otlp_tree import SpanTree


@dataclass
class Block:
    """The events one trace added to a conversation, kept apart so traces can be put in time order."""

    start: int
    trace_id: str
    root_span_id: str
    entries: list[tuple[dict[str, Any], Item, JsonPath]] = field(default_factory=list)


@dataclass
class Thread:
    """A conversation being read: its events so far, trace by trace, and what de-duplication needs."""

    key: str
    blocks: list[Block] = field(default_factory=list)
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


def merge_tool_spans(tree: SpanTree, says: dict[str, SpanSays]) -> None:
    """An MCP client span under the `execute_tool` span of the same tool is the same run: one event, source mcp.

    One walk down the tree keeps the path from the root to the span and, by tool name, the tool spans on it
    still standing for their run: the nearest of the span's own name is the one it merges into."""
    path: list[tuple[str, str | None]] = []  # (span id, the tool name it stands for in `runs`)
    runs: dict[str, list[str]] = {}  # tool name: span ids on the path, innermost last
    for span in tree.ordered:
        while path and path[-1][0] != span.parent_id:
            _, name = path.pop()
            if name is not None:
                runs[name].pop()
        said = says.get(span.span_id)
        run = said.tool if said is not None else None
        outer = runs.get(run.name) if run is not None else None
        outer_run = says[outer[-1]].tool if outer and outer[-1] != span.span_id else None  # not itself (an id written twice)
        if said is not None and run is not None and outer_run is not None:
            outer_run.mcp_server = outer_run.mcp_server or run.mcp_server
            says[span.span_id] = SpanSays(said.convention)
            run = None
        path.append((span.span_id, run.name if run is not None else None))
        if run is not None:
            runs.setdefault(run.name, []).append(span.span_id)


def innermost_messages(tree: SpanTree, says: dict[str, SpanSays]) -> None:
    """Messages of a span some span under which carries messages too are a summary of theirs (an `invoke_agent`
    or workflow span around its model calls): only the innermost are read, so nothing is said twice."""
    below: dict[str, bool] = {}
    for span in tree.descendants_first():
        below[span.span_id] = any(_carries(says.get(c.span_id)) or below.get(c.span_id, False) for c in tree.children.get(span.span_id, ()))
        said = says.get(span.span_id)
        if below[span.span_id] and said is not None:
            said.inputs, said.outputs = [], []


def _carries(said: SpanSays | None) -> bool:
    return said is not None and bool(said.inputs or said.outputs)


def add_trace(thread: Thread, tree: SpanTree, says: dict[str, SpanSays]) -> None:
    """What one trace said, in time order, added to its conversation as the events not seen in it before."""
    spans, order = tree.ordered, tree.order
    root = spans[0]
    block = Block(min(s.start for s in spans), root.trace_id, root.span_id)
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

    thread: Thread
    block: Block
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
