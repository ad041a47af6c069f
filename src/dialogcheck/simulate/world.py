"""The environment's calls in a simulated conversation: what it answered, put where it happened.

Every call the environment answered is a `tool_executed` event of the turn it was answered in, in the order it
was answered, so every assertion and SOP step sees it, even for an agent that logs nothing. An agent that reports
its own tool calls reports these too: each report of one of the environment's tools is paired with a call of that
tool with the same arguments (of the same turn first, else of the nearest one), and the call, as the environment
answered it, takes the report's own context (its `source`, `mcp_server`, `metadata.skill_id`). The calls of a turn,
in the order the environment answered them, go where the turn's first paired report was, else before the turn's
first agent message: they were answered before it spoke.

What cannot be paired is kept and named. A report the environment never answered becomes a `tool_unanswered`
event: it stays in the record, but no tool check counts it as a run, since the tool it names was never run where
the test can see. For an agent that reports its calls, a call it never reported is `unreported`. `metadata.
environment` and `metadata.fault` are the environment's to write: on the agent's own events they are dropped, so
an agent cannot pass its own report off as an answered call, or claim a fault.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from msgspec.structs import replace

from ..connectors.base import read_events
from ..events.model import Event, ToolRun

#: What the environment knows of a call better than the agent's report of it: what it was asked, and answered.
ANSWERED = ("arguments", "result", "is_error", "error_message")
#: The metadata only the environment writes.
RESERVED = ("environment", "fault")
#: The event a report of a call the environment never answered becomes.
UNANSWERED = "tool_unanswered"


@dataclass(frozen=True)
class Merged:
    """The conversation's events with the environment's calls in them, and the indexes of what could not be paired.

    `calls` is the index, in the events, of each call the environment answered, in the order it answered them.
    """

    events: list[Event]
    recorded: list[Mapping[str, Any]]
    calls: tuple[int, ...] = ()
    unanswered: tuple[int, ...] = ()
    unreported: tuple[int, ...] = ()


def _own(event: Event, obj: Mapping[str, Any]) -> tuple[Event, Mapping[str, Any]]:
    """An event of the agent's, without the metadata only the environment writes."""
    if not any(key in event.metadata for key in RESERVED):
        return event, obj
    metadata = {key: value for key, value in event.metadata.items() if key not in RESERVED}
    kept = dict(obj)
    if isinstance(kept.get("metadata"), Mapping):
        kept["metadata"] = {key: value for key, value in kept["metadata"].items() if key not in RESERVED}
    return replace(event, metadata=metadata), kept


def _key(tool: str, arguments: Any) -> bytes:
    """A call's identity for pairing: its tool and its arguments, as canonical JSON."""
    return orjson.dumps([tool, arguments], option=orjson.OPT_SORT_KEYS, default=repr)


def _joined(report: Mapping[str, Any], call: Mapping[str, Any]) -> tuple[Event, Mapping[str, Any]]:
    """The call as the environment answered it, with the report's own context kept and the environment's metadata."""
    joined = {key: value for key, value in report.items() if key not in ANSWERED}
    joined.update({key: call[key] for key in ANSWERED if key in call})
    joined["metadata"] = {**(report.get("metadata") or {}), **call["metadata"]}
    (event,), (obj,) = read_events([joined])
    return event, obj


def _unanswered(report: Mapping[str, Any], turn: int) -> tuple[Event, Mapping[str, Any]]:
    """A report the environment never answered, as the `tool_unanswered` event it becomes."""
    (event,), (obj,) = read_events([{**report, "event": UNANSWERED}])
    return replace(event, turn=turn), obj


def _pairs(events: Sequence[Event], reports: Sequence[int], typed: Sequence[Event], turns: Sequence[int]) -> dict[int, int]:
    """Each report's call (its index in `typed`): same tool and arguments, of the report's turn first, else the nearest."""
    free: dict[bytes, list[int]] = defaultdict(list)
    for c, call in enumerate(typed):
        free[_key(call.tool_name, call.arguments)].append(c)  # type: ignore[attr-defined]
    paired: dict[int, int] = {}
    for same_turn in (True, False):
        for r in reports:
            if r in paired:
                continue
            report = events[r]
            candidates = free.get(_key(report.tool_name, report.arguments), [])  # type: ignore[attr-defined]
            fits = [c for c in candidates if turns[c] == report.turn] if same_turn else candidates
            if fits:
                chosen = min(fits, key=lambda c: (abs(turns[c] - report.turn), c))
                candidates.remove(chosen)
                paired[r] = chosen
    return paired


def merge_calls(
    events: Sequence[Event], recorded: Sequence[Mapping[str, Any]], calls: Sequence[tuple[int, Mapping[str, Any]]], tools: Collection[str]
) -> Merged:
    """`events` (as recorded, with their turns) with `calls` (the environment's events, each with the turn it was
    answered in) put in; `tools` are the environment's tool names."""
    own = [_own(event, obj) for event, obj in zip(events, recorded)]
    events, recorded = [event for event, _ in own], [obj for _, obj in own]
    typed, objects = read_events([call for _, call in calls])
    turns = [turn for turn, _ in calls]
    reports = [i for i, event in enumerate(events) if isinstance(event, ToolRun) and event.tool_name in tools]
    paired = _pairs(events, reports, typed, turns)
    answered: dict[int, tuple[Event, Mapping[str, Any]]] = {c: (typed[c], objects[c]) for c in range(len(typed))}
    for r, c in paired.items():
        answered[c] = _joined(recorded[r], objects[c])
    by_turn: dict[int, list[int]] = defaultdict(list)
    for c, turn in enumerate(turns):
        by_turn[turn].append(c)
    anchors = {turns[c]: r for r, c in sorted(paired.items(), reverse=True) if turns[c] == events[r].turn}  # the first wins
    out: list[tuple[Event, Mapping[str, Any], str]] = []  # each with what it is: "", "call", "unanswered" or "unreported"
    placed: set[int] = set()
    pending = sorted(by_turn)
    reported = set(paired.values())
    reporting = bool(reports)

    def place(turn: int) -> None:
        if turn in placed or turn not in by_turn:
            return
        placed.add(turn)
        for c in by_turn[turn]:
            event, obj = answered[c]
            out.append((replace(event, turn=turn), obj, "call" if c in reported or not reporting else "unreported"))

    for i, event in enumerate(events):
        while pending and pending[0] < event.turn:
            place(pending.pop(0))
        if anchors.get(event.turn) == i or (event.type == "bot" and event.turn not in anchors):
            place(event.turn)
        if i in paired:
            continue  # the call stands for it, where its turn's calls are
        if i in reports:
            out.append((*_unanswered(recorded[i], event.turn), "unanswered"))
        else:
            out.append((event, recorded[i], ""))
    for turn in pending:
        place(turn)
    placed_events = [replace(event, index=index) if event.index != index else event for index, (event, _, _) in enumerate(out)]
    return Merged(
        placed_events,
        [obj for _, obj, _ in out],
        tuple(i for i, (_, _, what) in enumerate(out) if what in ("call", "unreported")),
        tuple(i for i, (_, _, what) in enumerate(out) if what == "unanswered"),
        tuple(i for i, (_, _, what) in enumerate(out) if what == "unreported"),
    )


__all__ = ["UNANSWERED", "Merged", "merge_calls"]
