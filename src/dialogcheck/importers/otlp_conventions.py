"""What one span says about a conversation, read by the convention it follows: GenAI or OpenInference.

A model call (a GenAI `chat` span, an OpenInference `LLM` span) says which
messages went in and which came out; a tool span (GenAI `execute_tool`,
OpenInference `TOOL`) says that a tool ran, with what and to what end. Both
conventions are read into the same `Message` and `ToolRun`, so grouping and
de-duplication (`otlp.py`) never look at attribute names.

GenAI messages come as the `gen_ai.input.messages` / `gen_ai.output.messages`
attributes (on the span, or on one of its events), each `{role, parts}` with
`text`, `tool_call` and `tool_call_response` parts (other part types are
ignored), or in the older form as span events `gen_ai.user.message`,
`gen_ai.assistant.message`, `gen_ai.tool.message` and `gen_ai.choice` (the
same events written as log records are not read: `otlp.py` says so).
OpenInference flattens them: `llm.input_messages.N.message.role`, `.content`,
`.contents.M.message_content.text`, `.tool_calls.K.tool_call.function.name`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..events.parse import json_type
from ._records import ItemProblem
from .otlp_spans import Span

GENAI, OPENINFERENCE = "GenAI semantic conventions", "OpenInference"
#: Attributes that name the conversation a span belongs to, strongest first.
CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
#: Where an MCP tool span names its server, first found wins.
_MCP_SERVER_KEYS = ("mcp.server.name", "server.address", "network.peer.address")
_OI_MESSAGE = re.compile(r"llm\.(input|output)_messages\.(\d+)\.message\.(.+)")
_OI_CALL = re.compile(r"tool_calls\.(\d+)\.tool_call\.(.+)")
_OI_CONTENT = re.compile(r"contents\.(\d+)\.message_content\.(.+)")
_OLD_EVENT_ROLES = {"gen_ai.user.message": "user", "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool", "gen_ai.system.message": "system"}


@dataclass(frozen=True)
class ToolCall:
    call_id: str | None
    name: str
    arguments: Any


@dataclass
class Message:
    """One chat message: who said it, its text, the tool calls it made and the tool results it carries."""

    role: str
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    results: list[tuple[str | None, Any]] = field(default_factory=list)

    def fingerprint(self) -> bytes:
        """What makes two messages the same one: a chat call re-sends the history, which is then seen again."""
        calls = [(c.call_id, c.name, c.arguments) for c in self.calls]
        return orjson.dumps([self.role, self.text.strip(), calls, self.results], option=orjson.OPT_SORT_KEYS, default=str)


@dataclass
class ToolRun:
    """A tool execution span."""

    name: str
    call_id: str | None
    arguments: Any
    result: Any
    is_error: bool
    error_message: str | None
    mcp_server: str | None


@dataclass
class SpanSays:
    convention: str | None
    inputs: list[Message] = field(default_factory=list)
    outputs: list[Message] = field(default_factory=list)
    tool: ToolRun | None = None


def conversation_name(value: Any) -> str | None:
    """An attribute's value as a conversation's name: a non-empty string or an integer."""
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None


def conversation_key(names: list[dict[str, Any]]) -> str | None:
    """The conversation a trace belongs to, from its spans' attributes in file order: the first
    `gen_ai.conversation.id` any of them names, else the first `session.id`."""
    for key in CONVERSATION_KEYS:
        for attributes in names:
            found = conversation_name(attributes.get(key))
            if found is not None:
                return found
    return None


def convention(span: Span) -> str | None:
    if "openinference.span.kind" in span.attributes:
        return OPENINFERENCE
    if any(key.startswith("gen_ai.") for key in span.attributes) or any(e.name.startswith("gen_ai.") for e in span.events):
        return GENAI
    return None


def read_span(span: Span) -> SpanSays:
    """What the span says, by its convention; a value of the wrong shape is a problem at the span."""
    found = convention(span)
    try:
        if found == OPENINFERENCE:
            return _openinference(span)
        if found == GENAI:
            return _genai(span)
    except _Shape as err:
        raise ItemProblem(f"span {span.name!r} (spanId {span.span_id}): {err}", (*span.path, "attributes")) from None
    return SpanSays(None)


class _Shape(ValueError):
    """A convention's value of the wrong shape, said relative to the span."""


def _json(value: Any, what: str) -> Any:
    """A value the SDKs write as a JSON string (attributes cannot hold objects), or as it is when structured."""
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as err:
        raise _Shape(f"`{what}` is not valid JSON: {err}") from None


def _text(value: Any, what: str) -> str:
    """A message's text: a string, or none recorded (null or no key); anything else is not text, never an empty one."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Shape(f"`{what}` must be a string, got {json_type(value)}")
    return value


def _arguments(value: Any) -> Any:
    """Tool arguments: an object (a JSON string holding one is parsed); anything else is kept as it is."""
    if isinstance(value, str):
        try:
            return orjson.loads(value) if value.strip() else {}
        except orjson.JSONDecodeError:
            return value
    return {} if value is None else value


# --- GenAI -------------------------------------------------------------------------------------------------


def _genai_message(raw: Any, what: str) -> Message:
    if not isinstance(raw, dict):
        raise _Shape(f"`{what}` must be a message object `{{role, parts}}`, got {json_type(raw)}")
    role = raw.get("role")
    if not isinstance(role, str):
        raise _Shape(f"`{what}.role` must be a string, got {json_type(role)}")
    parts = raw.get("parts")
    if not isinstance(parts, list):
        raise _Shape(f"`{what}.parts` must be a list of parts, got {json_type(parts)}")
    message = Message(role)
    texts = []
    for j, part in enumerate(parts):
        if not isinstance(part, dict):
            raise _Shape(f"`{what}.parts[{j}]` must be a part object `{{type, ...}}`, got {json_type(part)}")
        kind = part.get("type")
        if kind == "text":
            texts.append(_text(part.get("content"), f"{what}.parts[{j}].content"))
        elif kind == "tool_call":
            name = part.get("name")
            if not isinstance(name, str):
                raise _Shape(f"`{what}.parts[{j}].name` (a tool call's) must be a string, got {json_type(name)}")
            message.calls.append(ToolCall(_id(part.get("id")), name, _arguments(part.get("arguments"))))
        elif kind == "tool_call_response":
            message.results.append((_id(part.get("id")), part.get("response")))
    message.text = "\n".join(t for t in texts if t)
    return message


def _id(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value) else None


def _genai_messages(value: Any, what: str) -> list[Message]:
    value = _json(value, what)
    if not isinstance(value, list):
        raise _Shape(f"`{what}` must be a list of messages, got {json_type(value)}")
    return [_genai_message(m, f"{what}[{i}]") for i, m in enumerate(value)]


def _old_calls(value: Any, what: str) -> list[ToolCall]:
    """The older events' `tool_calls`: `[{id, type, function: {name, arguments}}]`, as the OpenAI API has them."""
    calls = []
    for k, call in enumerate(_json(value, what) or ()):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise _Shape(f"`{what}[{k}]` must be `{{id, function: {{name, arguments}}}}`")
        calls.append(ToolCall(_id(call.get("id")), function["name"], _arguments(function.get("arguments"))))
    return calls


def _old_event(name: str, attrs: dict[str, Any]) -> tuple[str, Message] | None:
    """A message of the older event form: ("input" | "output", message)."""
    if name == "gen_ai.choice":
        body = _json(attrs.get("message"), "message") or {}
        body = body if isinstance(body, dict) else {}
        text = _text(body["content"], f"{name}.message.content") if "content" in body else _text(attrs.get("content"), f"{name}.content")
        calls = _old_calls(body.get("tool_calls", attrs.get("tool_calls")), "tool_calls")
        return "output", Message("assistant", text, calls)
    role = _OLD_EVENT_ROLES.get(name)
    if role is None:
        return None
    content = attrs.get("content")
    if role == "tool":
        return "input", Message("tool", results=[(_id(attrs.get("id")), content)])
    return "input", Message(role, _text(content, f"{name}.content"), _old_calls(attrs.get("tool_calls"), "tool_calls") if role == "assistant" else [])


def _genai(span: Span) -> SpanSays:
    says = SpanSays(GENAI)
    attrs = span.attributes
    if attrs.get("gen_ai.operation.name") == "execute_tool" or span.name.startswith("execute_tool"):
        says.tool = _genai_tool(span)
        return says
    holders = [attrs, *(e.attributes for e in span.events)]
    for holder in holders:
        if "gen_ai.input.messages" in holder and not says.inputs:
            says.inputs = _genai_messages(holder["gen_ai.input.messages"], "gen_ai.input.messages")
        if "gen_ai.output.messages" in holder and not says.outputs:
            says.outputs = _genai_messages(holder["gen_ai.output.messages"], "gen_ai.output.messages")
    if not says.inputs and not says.outputs:
        for event in span.events:
            old = _old_event(event.name, event.attributes)
            if old is not None:
                (says.inputs if old[0] == "input" else says.outputs).append(old[1])
    return says


def _error_message(span: Span) -> str | None:
    error_type = span.attributes.get("error.type")
    return span.status_message or (str(error_type) if error_type is not None else None)


def _mcp_server(span: Span) -> str | None:
    if not any(key.startswith("mcp.") for key in span.attributes):
        return None
    return next((str(span.attributes[k]) for k in _MCP_SERVER_KEYS if span.attributes.get(k)), "mcp")


def _genai_tool(span: Span) -> ToolRun:
    attrs = span.attributes
    name = attrs.get("gen_ai.tool.name")
    if not isinstance(name, str):
        name = span.name.removeprefix("execute_tool").strip()
        if not name:
            raise _Shape("an `execute_tool` span must name its tool in `gen_ai.tool.name`")
    failed = span.error or "error.type" in attrs
    return ToolRun(
        name, _id(attrs.get("gen_ai.tool.call.id")), _arguments(attrs.get("gen_ai.tool.call.arguments")),
        attrs.get("gen_ai.tool.call.result"), failed, _error_message(span) if failed else None, _mcp_server(span),
    )


# --- OpenInference ------------------------------------------------------------------------------------------


def _openinference(span: Span) -> SpanSays:
    kind = str(span.attributes.get("openinference.span.kind", "")).upper()
    says = SpanSays(OPENINFERENCE)
    if kind == "TOOL":
        attrs = span.attributes
        name = attrs.get("tool.name")
        if not isinstance(name, str):
            raise _Shape("a TOOL span must name its tool in `tool.name`")
        failed = span.error
        says.tool = ToolRun(
            name, _id(attrs.get("tool_call.id")) or _id(attrs.get("tool.id")), _arguments(attrs.get("input.value")), attrs.get("output.value"),
            failed, (span.status_message or None) if failed else None, _mcp_server(span),
        )
    elif kind == "LLM":
        says.inputs, says.outputs = _oi_messages(span.attributes, "input"), _oi_messages(span.attributes, "output")
    return says


def _oi_messages(attrs: dict[str, Any], side: str) -> list[Message]:
    """The flattened `llm.<side>_messages.N.message.*` attributes, put back together in index order."""
    fields: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        found = _OI_MESSAGE.fullmatch(key)
        if found is not None and found.group(1) == side:
            fields.setdefault(int(found.group(2)), {})[found.group(3)] = value
    return [_oi_message(fields[i], f"llm.{side}_messages.{i}.message") for i in sorted(fields)]


def _oi_message(fields: dict[str, Any], what: str) -> Message:
    role = fields.get("role")
    if not isinstance(role, str):
        raise _Shape(f"`{what}.role` must be a string, got {json_type(role)}")
    calls: dict[int, dict[str, Any]] = {}
    contents: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if (call := _OI_CALL.fullmatch(key)) is not None:
            calls.setdefault(int(call.group(1)), {})[call.group(2)] = value
        elif (part := _OI_CONTENT.fullmatch(key)) is not None:
            contents.setdefault(int(part.group(1)), {})[part.group(2)] = value
    content = fields.get("content")
    if role == "tool":  # its content is the result
        texts = []
    elif content is not None:
        texts = [_text(content, f"{what}.content")]
    else:
        texts = [_text(c.get("text"), f"{what}.contents.{k}.message_content.text") for k, c in sorted(contents.items())]
    message = Message(role, "\n".join(t for t in texts if t))
    for k, parts in sorted(calls.items()):
        name = parts.get("function.name")
        if not isinstance(name, str):
            raise _Shape(f"`{what}.tool_calls.{k}.tool_call.function.name` must be a string, got {json_type(name)}")
        message.calls.append(ToolCall(_id(parts.get("id")), name, _arguments(parts.get("function.arguments"))))
    if role == "tool":
        message.results.append((_id(fields.get("tool_call_id")), content))
        message.text = ""
    return message
