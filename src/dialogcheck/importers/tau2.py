"""`tau2`: simulation results of sierra-research/tau2-bench.

Accepted files: a results file (`{"info", "tasks", "simulations": [...]}`),
a single simulation run (an object with `messages`, as in the `simulations/`
folder of the directory layout), a JSON list of runs, or JSONL of runs.

A run's `messages` hold `user` and `assistant` messages whose `tool_calls`
are `{id, name, arguments, requestor}` (arguments an object), and `tool`
messages `{id, content, error}` answering them by id (a `tool_messages` list
when several came at once). Mapping:

- `user` / `assistant` text becomes a `user` / `bot` event. A message with
  tool calls went to the environment, not to the other party, so its text is
  no message event (it is kept in the first run's `metadata.unsent_text`).
- each tool call becomes a `tool_executed` event (source `local`) with the
  result's `content` and `is_error` from its `error` flag. Calls the simulated
  user made on their own device (tau2's telecom domain) carry
  `metadata.requestor: "user"`.
- timestamps with a zone become event timestamps; tau2 writes local times
  without one, which are kept as text in `metadata.recorded_at` instead.
- the user simulator ends a run with a protocol token in its last message
  (`###STOP###`, `###TRANSFER###`, `###OUT-OF-SCOPE###`): words of the
  simulator, not of the customer, so they are taken out of the text and kept
  as the message's `metadata.end_token`. A message that held nothing else is
  kept as an empty `user` message (an empty message ends a simulated
  conversation, docs/running-scenarios.md), so the place where the user ended stays.
- the run's `termination_reason` (`user_stop`, `agent_stop`, `max_steps`,
  ...) is kept in the `metadata.termination_reason` of its last event.

A conversation is named `task-{task_id}-trial-{trial}`, as tau-bench's
runs are, so the trials of a task pair with its derived scenario
(`tau2_scenarios`) and with each other; the run's own `id` (a UUID) is kept
in the first event's `metadata.simulation_id` (a run without `task_id` is
named by it), beside the benchmark's score, `reward_info.reward`, as
`metadata.reward`. Full-duplex runs stored as `ticks` without `messages` are not
read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._build import Draft, ImportedConversation, convert_items, expect
from ._chat import ToolPairing, message_text, tool_event
from ._records import (
    Item,
    ItemProblem,
    JsonPath,
    epoch_seconds,
    file_items,
    parse_json_string,
)
from .tau_bench import keep_reward, task_id_of, trajectory_id

#: The tokens tau2-bench's user simulator ends a conversation with (`tau2.user.base`).
END_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
_END_TOKEN = re.compile("|".join(map(re.escape, END_TOKENS)))


def split_end_token(text: str) -> tuple[str, str | None]:
    """The text without the simulator's end tokens, and the first of them (None: the text has none)."""
    found = _END_TOKEN.search(text)
    if found is None:
        return text, None
    return _END_TOKEN.sub("", text).strip(), found.group(0)


def _stamp(event: dict[str, Any], message: dict[str, Any], path: JsonPath) -> dict[str, Any]:
    raw = message.get("timestamp")
    seconds = epoch_seconds(raw, (*path, "timestamp"))
    if seconds is not None:
        event["timestamp"] = seconds
    elif isinstance(raw, str):
        event.setdefault("metadata", {})["recorded_at"] = raw
    return event


def _tool_result(message: dict, pairing: ToolPairing, path: JsonPath) -> None:
    content = message_text(message.get("content"), (*path, "content"))
    failed = expect(message.get("error", False), bool, "error", (*path, "error"), optional=True) or False
    call_id = message.get("id") if isinstance(message.get("id"), str) and message.get("id") else None
    pairing.result(call_id, content, failed, path)


def _arguments(call: dict, path: JsonPath) -> dict[str, Any]:
    raw = call.get("arguments")
    if raw is None:
        return {}
    value = parse_json_string(raw, "arguments", path) if isinstance(raw, str) else raw
    return expect(value, dict, "arguments", path)


def _participant(message: dict, role: str, item: Item, path: JsonPath, draft: Draft, pairing: ToolPairing) -> None:
    text = message_text(message.get("content"), (*path, "content"))
    calls = expect(message.get("tool_calls"), list, "tool_calls", (*path, "tool_calls"), optional=True) or []
    if not calls:
        event: dict[str, Any] = {"event": "user" if role == "user" else "bot", "text": text}
        if role == "user":
            event["text"], token = split_end_token(text)
            if token is not None:
                event["metadata"] = {"end_token": token}
        draft.add(_stamp(event, message, path), item, path)
        return
    for k, call in enumerate(calls):
        call_path = (*path, "tool_calls", k)
        call = expect(call, dict, "tool call", call_path)
        name = expect(call.get("name"), str, "name", (*call_path, "name"))
        metadata: dict[str, Any] = {}
        if (call.get("requestor") or role) == "user":
            metadata["requestor"] = "user"
        if k == 0 and text.strip():
            metadata["unsent_text"] = text
        event = _stamp(tool_event(name, _arguments(call, (*call_path, "arguments")), metadata), message, path)
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        pairing.call(call_id, event, item, call_path)


def _convert(item: Item) -> Iterator[Draft]:
    run = expect(item.value, dict, "simulation run", ())
    if run.get("messages") is None:
        what = "a full-duplex run stored as `ticks` only" if run.get("ticks") else "a simulation run without `messages`"
        raise ItemProblem(f"{what} cannot be read: expected `messages`", ())
    messages = expect(run["messages"], list, "messages", ("messages",))
    simulation = run.get("id") if isinstance(run.get("id"), (str, int)) and not isinstance(run.get("id"), bool) else None
    named = task_id_of(run) is not None or simulation is None
    draft = Draft(trajectory_id(run, item.index) if named else str(simulation))
    pairing = ToolPairing(draft)
    for j, message in enumerate(messages):
        path = ("messages", j)
        message = expect(message, dict, "message", path)
        role = expect(message.get("role"), str, "role", (*path, "role"))
        if role == "tool" and isinstance(message.get("tool_messages"), list):
            for k, inner in enumerate(message["tool_messages"]):
                inner_path = (*path, "tool_messages", k)
                _tool_result(expect(inner, dict, "tool message", inner_path), pairing, inner_path)
            continue
        if role == "tool":
            _tool_result(message, pairing, path)
            continue
        pairing.close()
        if role in ("user", "assistant"):
            _participant(message, role, item, path, draft, pairing)
        elif role != "system":
            raise ItemProblem(f"unknown role {role!r}: expected system, user, assistant or tool", (*path, "role"))
    pairing.close()
    draft.place_messages("messages")
    reason = run.get("termination_reason")
    if isinstance(reason, str) and draft.events:
        draft.events[-1].setdefault("metadata", {})["termination_reason"] = reason
    if simulation is not None and named and draft.events:
        draft.events[0].setdefault("metadata", {})["simulation_id"] = str(simulation)
    reward_info = run.get("reward_info")
    yield keep_reward(draft, reward_info.get("reward") if isinstance(reward_info, dict) else None)


def read(path: str | Path) -> Iterator[ImportedConversation]:
    """Every simulation run of a tau2 results file, one conversation each, converted lazily."""
    return convert_items(file_items(path, list_key="simulations"), _convert, str(path))
