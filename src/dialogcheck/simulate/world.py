"""The environment's calls in a simulated conversation: what it answered, put where it happened.

Every call the environment answered is a `tool_executed` event of the turn it was made in, so every assertion
and SOP step sees it, even for an agent that logs nothing. An agent that reports its own tool calls reports
these too: each report of a tool of the environment is paired, in order within its turn, with a call of that
tool the environment answered, and takes what the environment knows (the arguments it was asked, the answer
it gave, and its `metadata.environment` and `fault`), keeping the report's own context (`source`, `mcp_server`,
`metadata.skill_id`). What cannot be paired is kept and named: a report the environment never answered (`unanswered`:
a call made somewhere else, or never made), and, for an agent that reports its calls, a call it never
reported (`unreported`). The calls of a turn that no report stands for go before the turn's first agent
message: they were answered before it spoke.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from msgspec.structs import replace

from ..connectors.base import read_events
from ..events.model import Event, ToolRun


@dataclass(frozen=True)
class Merged:
    """The conversation's events with the environment's calls in them, and the indexes of what could not be paired."""

    events: list[Event]
    recorded: list[Mapping[str, Any]]
    unanswered: tuple[int, ...] = ()
    unreported: tuple[int, ...] = ()


def _own_report(event: Event, tools: Collection[str]) -> bool:
    """Whether `event` is the agent's report of a call of one of the environment's tools."""
    return isinstance(event, ToolRun) and event.tool_name in tools and not event.metadata.get("environment")


#: What the environment knows of a call better than the agent's report of it: what it was asked, and answered.
ANSWERED = ("arguments", "result", "is_error", "error_message")


def _joined(report: Mapping[str, Any], call: Mapping[str, Any], turn: int) -> tuple[Event, Mapping[str, Any]]:
    """The agent's report of a call with the environment's answer in it: the arguments, result and error as the
    environment answered them, the report's own context (its `source`, `mcp_server`, `metadata.skill_id`, ...)
    kept, and the environment's metadata (`environment`, `fault`) added."""
    joined = {key: value for key, value in report.items() if key not in ANSWERED}
    joined.update({key: call[key] for key in ANSWERED if key in call})
    joined["metadata"] = {**(report.get("metadata") or {}), **call["metadata"]}
    (event,), (obj,) = read_events([joined])
    return replace(event, turn=turn), obj


def merge_calls(
    events: Sequence[Event], recorded: Sequence[Mapping[str, Any]], calls: Sequence[tuple[int, Mapping[str, Any]]], tools: Collection[str]
) -> Merged:
    """`events` (as recorded, with their turns) with `calls` (the environment's events, each with the turn it was
    answered in) put in; `tools` are the environment's tool names."""
    typed, objects = read_events([call for _, call in calls])
    pending: dict[int, deque[tuple[Event, Mapping[str, Any]]]] = {}
    for (turn, _), event, obj in zip(calls, typed, objects):
        pending.setdefault(turn, deque()).append((replace(event, turn=turn), obj))
    paired: dict[int, tuple[Event, Mapping[str, Any]]] = {}  # a report's index: the call it stands for
    for i, event in enumerate(events):
        queue = pending.get(event.turn) if _own_report(event, tools) else None
        match = next((item for item in queue if item[0].tool_name == event.tool_name), None) if queue else None  # type: ignore[attr-defined]
        if match is not None:
            queue.remove(match)  # type: ignore[union-attr]
            paired[i] = _joined(recorded[i], match[1], event.turn)
    reports = any(_own_report(event, tools) for event in events)
    out: list[tuple[Event, Mapping[str, Any], str]] = []  # each with what it is: "", "unanswered" or "unreported"

    def flush(turn: int) -> None:
        for event, obj in pending.pop(turn, ()):
            out.append((event, obj, "unreported" if reports else ""))

    for i, event in enumerate(events):
        for earlier in [t for t in pending if t < event.turn]:
            flush(earlier)
        if event.type == "bot":
            flush(event.turn)
        if i in paired:
            out.append((*paired[i], ""))
        elif _own_report(event, tools):
            out.append((event, recorded[i], "unanswered"))
        else:
            out.append((event, recorded[i], ""))
    for turn in sorted(pending):
        flush(turn)
    placed = [replace(event, index=index) if event.index != index else event for index, (event, _, _) in enumerate(out)]
    return Merged(
        placed,
        [obj for _, obj, _ in out],
        tuple(i for i, (_, _, what) in enumerate(out) if what == "unanswered"),
        tuple(i for i, (_, _, what) in enumerate(out) if what == "unreported"),
    )


__all__ = ["Merged", "merge_calls"]
