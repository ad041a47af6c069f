"""`openai`: OpenAI chat messages, with `tool_calls` and `tool` results.

Accepted files: a JSON list of messages (one conversation); an object with
`messages` (its `id`, `conversation_id` or `sender_id` names it); a list of
such objects; JSONL of such objects, one conversation a line (the fine-tuning
and eval-log layout, read lazily); or JSONL of messages, one a line (one
conversation).

Mapping: `user` messages become `user` events, `assistant` text a `bot`
event, each tool call a `tool_executed` event (source `local`) whose result
is the `tool` message that answers it, paired by `tool_call_id` and, where
ids repeat, by position. `system` and `developer` messages are left out. The
chat format has no error flag, so a run is never marked failed here. The
legacy `function_call` / `function` form is read the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LoadError, Problem
from ._build import Draft, ImportedConversation, convert_items, expect
from ._chat import ToolPairing, message_text, tool_event
from ._records import Item, ItemProblem, JsonPath, file_items, parse_json_string

Entry = tuple[Any, Item, JsonPath]  # a message, the item it is in, and its path inside the item
_ID_KEYS = ("id", "conversation_id", "sender_id")


@dataclass(frozen=True)
class Dialect:
    """How a chat log's tool calls behaved when it was recorded."""

    #: Only the first tool call of a message was run (tau-bench); the others are kept in metadata.
    first_call_only: bool = False
    #: Text sent in the same message as a tool call reached the user (false: kept in metadata only).
    text_beside_calls_shown: bool = True
    #: A result starting with this marks a failed run (tau-bench: "Error").
    error_prefix: str | None = None


OPENAI = Dialect()


def _arguments(function: dict[str, Any], path: JsonPath) -> dict[str, Any]:
    raw = function.get("arguments")
    if raw is None or raw == "":
        return {}
    value = raw if isinstance(raw, dict) else parse_json_string(raw, "function.arguments", (*path, "arguments"))
    return expect(value, dict, "function.arguments", (*path, "arguments"))


def _calls(message: dict, path: JsonPath) -> list[tuple[str | None, dict, JsonPath]]:
    """(id, function, path of the function) for each tool call, or for a legacy `function_call`."""
    calls = expect(message.get("tool_calls"), list, "tool_calls", (*path, "tool_calls"), optional=True) or []
    if not calls and isinstance(message.get("function_call"), dict):
        return [(None, message["function_call"], (*path, "function_call"))]
    found = []
    for j, call in enumerate(calls):
        call = expect(call, dict, "tool call", (*path, "tool_calls", j))
        function = expect(call.get("function"), dict, "function", (*path, "tool_calls", j, "function"))
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        found.append((call_id, function, (*path, "tool_calls", j, "function")))
    return found


def _assistant(message: dict, item: Item, path: JsonPath, draft: Draft, pairing: ToolPairing, dialect: Dialect) -> None:
    text = message_text(message.get("content"), (*path, "content"))
    calls = _calls(message, path)
    if not calls or (dialect.text_beside_calls_shown and text.strip()):
        draft.add({"event": "bot", "text": text}, item, path)
    first: dict[str, Any] | None = None
    for call_id, function, fpath in calls:
        name = expect(function.get("name"), str, "function.name", (*fpath, "name"))
        arguments = _arguments(function, fpath)
        if first is not None and dialect.first_call_only:
            not_run = first.setdefault("metadata", {}).setdefault("calls_not_run", [])
            not_run.append({"tool_name": name, "arguments": arguments})
            continue
        event = tool_event(name, arguments)
        if first is None and text.strip() and not dialect.text_beside_calls_shown:
            event["metadata"] = {"unsent_text": text}
        pairing.call(call_id, event, item, fpath[:-1])
        first = first or event


def _message(message: Any, item: Item, path: JsonPath, draft: Draft, pairing: ToolPairing, dialect: Dialect) -> None:
    message = expect(message, dict, "message", path)
    role = expect(message.get("role"), str, "role", (*path, "role"))
    if role in ("tool", "function"):
        content = message_text(message.get("content"), (*path, "content"))
        failed = dialect.error_prefix is not None and content.startswith(dialect.error_prefix)
        call_id = message.get("tool_call_id")
        pairing.result(call_id if isinstance(call_id, str) else None, content, failed, path)
        return
    pairing.close()
    if role == "user":
        draft.add({"event": "user", "text": message_text(message.get("content"), (*path, "content"))}, item, path)
    elif role == "assistant":
        _assistant(message, item, path, draft, pairing, dialect)
    elif role not in ("system", "developer"):
        expected = "expected system, developer, user, assistant or tool"
        raise ItemProblem(f"unknown role {role!r}: {expected}", (*path, "role"))


def convert_messages(entries: Iterable[Entry], conversation_id: str | None, dialect: Dialect = OPENAI) -> Draft:
    """Native events for one conversation's messages; a bad message is a problem at its own place."""
    draft = Draft(conversation_id)
    pairing = ToolPairing(draft)
    for message, item, path in entries:
        try:
            _message(message, item, path, draft, pairing, dialect)
        except ItemProblem as err:
            raise LoadError([item.problem(str(err), err.path)]) from None
    pairing.close()
    return draft


def conversation_id(obj: dict[str, Any], fallback: str) -> str:
    for key in _ID_KEYS:
        if isinstance(obj.get(key), (str, int)) and not isinstance(obj.get(key), bool):
            return str(obj[key])
    return fallback


@dataclass(frozen=True)
class _Lines:
    """Messages one a line: a single conversation spread over many items."""

    items: list[Item]

    def problem(self, message: str, path: JsonPath = ()) -> Problem:
        return self.items[0].problem(message, path)


def _convert(unit: Item | _Lines) -> Iterator[Draft]:
    if isinstance(unit, _Lines):
        yield convert_messages(((i.value, i, ()) for i in unit.items), "conversation-1")
        return
    value = unit.value
    if isinstance(value, dict) and "messages" in value:
        messages = expect(value["messages"], list, "messages", ("messages",))
        entries = ((m, unit, ("messages", j)) for j, m in enumerate(messages))
        yield convert_messages(entries, conversation_id(value, f"conversation-{unit.index + 1}"))
    elif isinstance(value, list):
        yield convert_messages(((m, unit, (j,)) for j, m in enumerate(value)), "conversation-1")
    else:
        raise ItemProblem("expected a conversation: an object with `messages`, or a list of messages")


def _units(items: Iterator[Item]) -> Iterator[Item | _Lines]:
    """Group a file's items into conversations: messages (objects with `role`), one an item, are all one."""
    first = next(items, None)
    if first is None:
        return
    if isinstance(first.value, dict) and "role" in first.value:
        yield _Lines([first, *items])
        return
    yield first
    yield from items


def read(path: str | Path) -> Iterator[ImportedConversation]:
    """Every conversation of an OpenAI chat-messages file, converted lazily."""
    return convert_items(_units(file_items(path)), _convert, str(path))
