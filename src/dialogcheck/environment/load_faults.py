"""Reading `environment.faults`: which tool each hits, when, and its kind's own fields, with positions.

A fault's `kind` is read first, since it decides which other fields the fault may have; a field of another
kind (`status` on a `timeout`) is an unknown field, with the nearest valid one suggested.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._fields import Fields, Problems
from .._yaml import Pos, YNode, plain
from ..errors import did_you_mean
from ..events.values import json_equal
from .bounds import MAX_BEHIND, MAX_CALLS, MAX_DELAY, MAX_FAULTS
from .faults import EMPTY_VALUES, KINDS, Corrupt, Effect, Empty, Error, Fault, Latency, Malformed, Stale, Timeout, When
from .paths import parse_path
from .tools import Tool

WHEN_FIELDS = ("tool", "kind", "on_call", "match", "rate")
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "timeout": ("delay",),
    "error": ("status", "message"),
    "empty": ("value",),
    "malformed": ("text",),
    "corrupt": ("path", "set", "delete", "flip"),
    "stale": ("behind",),
    "latency": ("delay",),
}
CORRUPTIONS = ("set", "delete", "flip")


def parse_faults(node: YNode | None, problems: Problems, pos: Pos, tools: Mapping[str, Tool]) -> tuple[Fault, ...]:
    """`environment.faults` (absent: none); `tools` are the file's tools, by name, that were read without a problem."""
    if node is None:
        return ()
    seq = problems.expect_seq(node, "`faults` in `environment`", pos, min_items=0)
    if seq is None:
        return ()
    if len(seq.items) > MAX_FAULTS:
        problems.add(f"`faults` in `environment` holds {len(seq.items):,} faults, more than the {MAX_FAULTS} an environment may", seq.pos)
        return ()
    faults = (_fault(item, problems, number, tools) for number, item in enumerate(seq.items, 1))
    return tuple(fault for fault in faults if fault is not None)


def _kind(mapping: Any, problems: Problems, what: str) -> str | None:
    return problems.kind_of(mapping, "kind", KINDS, what, lambda kind: f"unknown fault kind `{kind}` in {what}")


def _fault(node: YNode, problems: Problems, number: int, tools: Mapping[str, Tool]) -> Fault | None:
    what = f"fault {number} of `environment.faults`"
    mapping = problems.expect_map(node, what, node.pos)
    if mapping is None:
        return None
    kind = _kind(mapping, problems, what)
    fields = Fields(mapping, problems, what, (*WHEN_FIELDS, *KIND_FIELDS.get(kind or "", ())))
    tool_name = fields.string("tool", required=True)
    tool = tools.get(tool_name) if tool_name is not None else None
    if tool_name is not None and tool is None:
        problems.add(f"`tool` in {what} names `{tool_name}`, which is not a tool of the environment{did_you_mean(tool_name, tools)}", fields.node.values["tool"].pos)
    when = _when(fields, tool)
    effect = _effect(kind, fields, tool) if kind is not None else None
    if tool is None or when is None or effect is None:
        return None
    return Fault(number, tool.name, when, effect)


def _when(fields: Fields, tool: Tool | None) -> When | None:
    count = len(fields.problems.items)
    on_call = fields.integer("on_call", minimum=1, maximum=MAX_CALLS)
    rate = fields.number("rate", minimum=0, maximum=1)
    match_node = fields.mapping("match")
    match: dict[str, Any] = {}
    if match_node is not None:
        properties = tool.parameters.get("properties", {}) if tool is not None else None
        for name, value in match_node.values.items():
            if isinstance(properties, dict) and name not in properties:
                fields.problems.add(f"`match` in {fields.what} names `{name}`, which is not a parameter of `{tool.name}`{did_you_mean(name, properties)}", match_node.keys[name])  # type: ignore[union-attr]  # properties only with a tool
            match[name] = plain(value)
    if len(fields.problems.items) > count:
        return None
    return When(on_call, match, None if rate is None else float(rate))


def _effect(kind: str, fields: Fields, tool: Tool | None) -> Effect | None:
    count = len(fields.problems.items)
    effect: Effect | None
    if kind in ("timeout", "latency"):
        delay = fields.number("delay", minimum=0, maximum=MAX_DELAY)
        effect = (Timeout if kind == "timeout" else Latency)(0.0 if delay is None else float(delay))
    elif kind == "error":
        status, message = fields.integer("status", minimum=400, maximum=599), fields.string("message")
        effect = Error(500 if status is None else status, "internal server error" if message is None else message)
    elif kind == "empty":
        effect = _empty(fields)
    elif kind == "malformed":
        effect = Malformed(fields.string("text", allow_empty=True))
    elif kind == "corrupt":
        effect = _corrupt(fields)
    else:
        behind = fields.integer("behind", minimum=1, maximum=MAX_BEHIND)
        if tool is not None and not tool.behaviour.reads:
            fields.problems.add(
                f"a `stale` fault needs a tool that reads the state (`read` or `python`), and `{tool.name}` has `{tool.behaviour.key}`",
                fields.pos("kind"),
            )
        effect = Stale(behind)
    return effect if len(fields.problems.items) == count else None


def _empty(fields: Fields) -> Empty | None:
    if not fields.has("value"):
        return Empty()
    node = fields.get("value")
    value = plain(node)
    if not any(json_equal(value, empty) for empty in EMPTY_VALUES):
        fields.problems.add(f"`value` in {fields.what} must be an empty value: null, \"\", [] or {{}}", node.pos if node else fields.node.pos)
        return None
    return Empty(value)


def _corrupt(fields: Fields) -> Corrupt | None:
    text = fields.string("path", required=True)
    given = [key for key in CORRUPTIONS if fields.has(key)]
    if len(given) != 1:
        fields.problems.add(f"{fields.what} must have exactly one of `set: VALUE`, `delete: true` or `flip: true`, got {len(given)}", fields.node.pos)
        return None
    action = given[0]
    if action != "set":
        flag = fields.boolean(action)
        if flag is False:
            fields.problems.add(f"`{action}` in {fields.what} must be true: to not {action}, leave the fault out", fields.node.values[action].pos)
        if flag is not True:
            return None
    if text is None:
        return None
    pos = fields.node.values["path"].pos
    try:
        path = parse_path(text)
    except ValueError as err:
        fields.problems.add(f"`path` in {fields.what}: {err}", pos)
        return None
    if path.names:
        fields.problems.add(f"`path` in {fields.what} is a path into the tool's result and takes no `{{ARG}}`", pos)
        return None
    return Corrupt(path, action, plain(fields.get("set")) if action == "set" else None)


__all__ = ["KIND_FIELDS", "WHEN_FIELDS", "parse_faults"]
