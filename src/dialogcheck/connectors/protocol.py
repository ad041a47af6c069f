"""The answer shape of the HTTP and Python connectors, validated once for both.

`{"messages": [{"text", "utter_name"?, "buttons"?}], "events": [...]}`. A
malformed answer is the agent's fault: it becomes an `AgentError` that names
the field, and the run is errored instead of judged on half-read data.
Native events are read here, once, by the reader every source goes through
(`events.parse`), so a bad event is caught where it can still be blamed on the
agent, and what is judged is what was read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..events.model import Event
from ..events.parse import EventFieldError, json_type
from .base import AgentButton, AgentError, AgentMessage, AgentTurn, read_events


def optional_string(obj: Mapping[str, Any], key: str, where: str, label: str) -> str | None:
    """`obj[key]` when it is a string; None when missing or null; else an `AgentError`."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise AgentError(f"{where}: `{label}{key}` must be a string or null, got {json_type(value)}")


def parse_buttons(raw: Any, where: str, label: str) -> tuple[AgentButton, ...]:
    """Buttons `[{title, payload?}]`; `label` is the field's path, e.g. `messages[0].buttons`."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise AgentError(f"{where}: `{label}` must be a list, got {json_type(raw)}")
    buttons = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise AgentError(f"{where}: `{label}[{i}]` must be an object, got {json_type(item)}")
        title = optional_string(item, "title", where, f"{label}[{i}].")
        payload = optional_string(item, "payload", where, f"{label}[{i}].")
        buttons.append(AgentButton(title, payload))
    return tuple(buttons)


def agent_events(raw: Any, where: str, label: str = "events") -> tuple[tuple[Event, ...], tuple[dict[str, Any], ...]]:
    """A list of native event objects (docs/concepts.md, the conversation record) read into typed events, and the objects as recorded;
    an event that cannot be read is an `AgentError` naming it."""
    if not isinstance(raw, list):
        raise AgentError(f"{where}: `{label}` must be a list of event objects, got {json_type(raw)}")
    try:
        return read_events(raw)
    except EventFieldError as err:
        raise AgentError(f"{where}: `{label}[{err.index}]`: {err}") from None  # type: ignore[attr-defined]  # set by the reader that raised


def _message(obj: Any, where: str, label: str) -> AgentMessage:
    if not isinstance(obj, dict):
        raise AgentError(f"{where}: `{label}` must be an object, got {json_type(obj)}")
    if "text" not in obj:
        raise AgentError(f"{where}: `{label}.text` is missing (use null for a message with only buttons)")
    text = optional_string(obj, "text", where, f"{label}.")
    utter_name = optional_string(obj, "utter_name", where, f"{label}.")
    return AgentMessage(text or "", utter_name, parse_buttons(obj.get("buttons"), where, f"{label}.buttons"))


def turn_from_answer(answer: Any, where: str) -> AgentTurn:
    """Read one answer; `where` says whose answer it was (`POST URL`, `the answer of MODULE:FUNC`).

    `messages` is required (an empty list is a silent turn, not an error);
    `events` may be left out or null when the agent records none.
    """
    if not isinstance(answer, dict):
        raise AgentError(f'{where}: expected an object {{"messages": [...], "events": [...]}}, got {json_type(answer)}')
    if "messages" not in answer:
        raise AgentError(f"{where}: `messages` is missing (send an empty list when the agent says nothing)")
    messages = answer["messages"]
    if not isinstance(messages, list):
        raise AgentError(f"{where}: `messages` must be a list, got {json_type(messages)}")
    messages = tuple(_message(m, where, f"messages[{i}]") for i, m in enumerate(messages))
    events = answer.get("events")
    if events is None:
        return AgentTurn(messages)
    return AgentTurn(messages, *agent_events(events, where))
