"""What chat-message logs (OpenAI, tau-bench, tau2) share: message text, and pairing tool calls with results.

A native `tool_executed` event holds a call and its result together, while a
chat log puts them in two messages. The event is created where the call is
(so event order is call order) and its result is filled in when the result
message arrives. Results follow the message that made the calls, so pairing
looks only at that message's calls: by id first, and where an id repeats or
does not match, the earliest call still waiting. A call whose result never
came (a log cut off) keeps a null result and says so in `metadata`.
"""

from __future__ import annotations

from typing import Any

from ..events.parse import json_type
from ._build import Draft
from ._records import Item, ItemProblem, JsonPath


def message_text(content: Any, path: JsonPath) -> str:
    """A message's text: a string, null, or a list of content parts whose `text` parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif not isinstance(part, dict):
                raise ItemProblem(f"content part {i} must be an object or a string, got {json_type(part)}", (*path, i))
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("text") is not None:  # null or no `text`: a part with no text (an image, audio)
                raise ItemProblem(f"`text` of content part {i} must be a string, got {json_type(part['text'])}", (*path, i, "text"))
        return "\n".join(texts)
    raise ItemProblem(f"`content` must be a string, a list of parts or null, got {json_type(content)}", path)


def tool_event(name: str, arguments: dict[str, Any], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A native `tool_executed` event for a call whose result is not known yet."""
    event: dict[str, Any] = {
        "event": "tool_executed",
        "tool_name": name,
        "arguments": arguments,
        "source": "local",
        "result": None,
        "is_error": False,
    }
    if metadata:
        event["metadata"] = dict(metadata)
    return event


class ToolPairing:
    """Pairs tool results with the calls of the message before them, by id and then by position."""

    def __init__(self, draft: Draft):
        self.draft = draft
        self.waiting: list[tuple[str | None, dict[str, Any]]] = []

    def call(self, call_id: str | None, event: dict[str, Any], item: Item, path: JsonPath) -> None:
        self.draft.add(event, item, path)
        self.waiting.append((call_id, event))

    def result(self, call_id: str | None, result: Any, is_error: bool, path: JsonPath) -> dict[str, Any]:
        """Fill in the result of the call this answers; a result that answers no call is a problem."""
        if not self.waiting:
            raise ItemProblem("this tool result answers no tool call: no call is waiting for a result here", path)
        at = next((i for i, (cid, _) in enumerate(self.waiting) if call_id is not None and cid == call_id), 0)
        _, event = self.waiting.pop(at)
        event["result"] = result
        event["is_error"] = is_error
        if is_error:
            event["error_message"] = result if isinstance(result, str) else None
        return event

    def close(self) -> None:
        """A new message started (or the log ended): the calls still waiting never got a result."""
        for _, event in self.waiting:
            event.setdefault("metadata", {})["result_missing"] = True
        self.waiting.clear()
