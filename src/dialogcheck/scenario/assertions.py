"""Parse `goals.assertions` YAML into check objects, validating every rule.

All the load-time rules of SPEC section 2 live here, so evaluation never sees
raw data and never re-validates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .._fields import Fields, Problems
from .._yaml import Pos, YMap, YNode, YScalar, plain
from ..checks import ASSERTIONS, Check, EventCheck
from ..checks.lifecycle import LIFECYCLE_CHECKS, BlockCheck
from ..checks.memory import UNSET, MemoryEntry, MemoryWasClearedStep, MemoryWasSetStep
from ..checks.messages import BotDidNotUtter, BotUttered, ButtonSpec, MessageMatch
from ..checks.sequencing import Sequencing
from ..checks.tools import ToolExecuted, ToolsWithinOneTurn
from ..errors import did_you_mean
from ..events.model import FRAMEWORK_TOOLS

#: Keys allowed as `sequencing` steps (each matches one event).
SEQUENCING_STEPS = (*(cls.key for cls in LIFECYCLE_CHECKS), "tool_executed", "memory_was_set", "memory_was_cleared", "bot_uttered")



@dataclass(frozen=True)
class Context:
    """What a parser needs besides its node: where the assertion sits, and its definition's settings."""

    #: The key it is written inside (`sequencing`, `tools_within_one_turn`); "" directly under `goals.assertions`.
    inside: str = ""
    #: Tools never counted as runs: the project's `framework_tools` (eval/conftest.yml), SPEC's list by default.
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS


Parser = Callable[[YNode, Problems, Pos, Context], "Check | None"]


def _lifecycle(cls: type) -> Parser:
    def parse(node: YNode, problems: Problems, pos: Pos, context: Context) -> Check | None:
        what = f"`{cls.key}`"
        mapping = problems.expect_map(node, what, pos)
        if mapping is None:
            return None
        is_block = issubclass(cls, BlockCheck)
        known = ("skill_id", "block_id", "step_id") if is_block else ("skill_id", "step_id")
        fields = Fields(mapping, problems, what, known)
        skill_id = fields.string("skill_id", required=True)
        block_id = fields.string("block_id", required=True) if is_block else None
        step_id = None
        if fields.has("step_id"):
            if cls.takes_step_id:
                step_id = fields.string("step_id")
            else:
                takers = "completed, cancelled, interrupted and resumed" if is_block else "cancelled, interrupted and resumed"
                problems.add(f"{what} does not take `step_id`: only the {takers} checks do", fields.pos("step_id"))
                return None
        if skill_id is None or (is_block and block_id is None):
            return None
        return cls(skill_id, block_id, step_id) if is_block else cls(skill_id, step_id)

    return parse


def _memory_name(name: str | None, problems: Problems, pos: Pos) -> str | None:
    """The key name, unless it carries the `session.` prefix that can never match."""
    if name is not None and name.startswith("session."):
        problems.add(
            f"memory name `{name}` starts with `session.`: tracker keys carry no session prefix, "
            f"so this check would never match (write `{name.removeprefix('session.')}`)",
            pos,
        )
        return None
    return name


def _memory(cls: type) -> Parser:
    takes_value = cls.key != "memory_was_cleared"

    def parse(node: YNode, problems: Problems, pos: Pos, context: Context) -> Check | None:
        what = f"`{cls.key}`"
        seq = problems.expect_seq(node, f"{what} (a list of {{name, value}} entries)", pos)
        if seq is None:
            return None
        entries = []
        for i, item in enumerate(seq.items):
            entry_what = f"entry {i + 1} of {what}"
            mapping = problems.expect_map(item, entry_what, item.pos)
            if mapping is None:
                continue
            fields = Fields(mapping, problems, entry_what, ("name", "value"))
            if not takes_value and fields.has("value"):
                problems.add(f"{what} takes no `value`: a clear has no value", fields.pos("value"))
            name_node = mapping.values.get("name")
            name = _memory_name(fields.string("name", required=True), problems, name_node.pos if name_node else mapping.pos)
            value = UNSET
            if takes_value and fields.has("value"):
                value_node = mapping.values["value"]
                if isinstance(value_node, YScalar) and value_node.value is None:
                    problems.add(f"`value` in {entry_what} must not be null: null is not accepted as a value", value_node.pos)
                    continue
                value = plain(value_node)
            if name is not None:
                entries.append(MemoryEntry(name, value))
        if len(entries) != len(seq.items):
            return None
        return cls(tuple(entries))

    return parse


def _tool_executed(node: YNode, problems: Problems, pos: Pos, context: Context) -> ToolExecuted | None:
    what = "`tool_executed`"
    mapping = problems.expect_map(node, what, pos)
    if mapping is None:
        return None
    known = ("tool_name", "source", "mcp_server", "skill_id", "arguments", "is_error", "times")
    fields = Fields(mapping, problems, what, known)
    count = len(problems.items)
    tool_name = fields.string("tool_name", required=True)
    source = fields.choice("source", ("local", "mcp"), required=True)
    mcp_server = fields.string("mcp_server")
    if source == "mcp" and not fields.has("mcp_server"):
        problems.add(f"{what} with `source: mcp` needs `mcp_server` (it is not inferred from the tool name)", mapping.pos)
    if source == "local" and fields.has("mcp_server"):
        problems.add(f"{what} with `source: local` must not set `mcp_server`", fields.pos("mcp_server"))
    skill_id = fields.string("skill_id")
    arguments_node = fields.mapping("arguments")
    is_error = fields.boolean("is_error")
    times = None
    if fields.has("times"):
        if context.inside:
            problems.add(f"`times` is not allowed inside `{context.inside}`: each entry there matches one run", fields.pos("times"))
        else:
            times = fields.integer("times", minimum=0)
    if len(problems.items) > count or tool_name is None or source is None:
        return None
    arguments = plain(arguments_node) if arguments_node is not None else None
    return ToolExecuted(tool_name, source, mcp_server, skill_id, arguments, is_error, times)


def _tools_within_one_turn(node: YNode, problems: Problems, pos: Pos, context: Context) -> Check | None:
    what = "`tools_within_one_turn`"
    mapping = problems.expect_map(node, what, pos)
    if mapping is None:
        return None
    fields = Fields(mapping, problems, what, ("calls", "allow_extra_calls", "ordered"))
    count = len(problems.items)
    allow_extra = fields.boolean("allow_extra_calls", required=True)
    ordered = fields.boolean("ordered")
    seq = fields.seq("calls", required=True, min_items=2)
    calls = []
    for i, item in enumerate(seq.items if seq else ()):
        entry = problems.single_key(item, f"call {i + 1} of {what}", item.pos)
        if entry is None:
            continue
        key, key_pos, value = entry
        if key != "tool_executed":
            problems.add(f"each call of {what} is a `tool_executed` entry, got `{key}`{did_you_mean(key, ['tool_executed'])}", key_pos)
            continue
        call = _tool_executed(value, problems, key_pos, replace(context, inside="tools_within_one_turn"))
        if call is not None and call.tool_name in context.framework_tools:
            name_node = value.values["tool_name"] if isinstance(value, YMap) else value
            problems.add(
                f"`{call.tool_name}` is a framework tool: it is never counted, so {what} could never match it"
                " (an agent that owns a tool of this name sets `framework_tools` in eval/conftest.yml)",
                name_node.pos,
            )
            continue
        if call is not None:
            calls.append(call)
    if len(problems.items) > count or allow_extra is None:
        return None
    return ToolsWithinOneTurn(tuple(calls), allow_extra, bool(ordered), context.framework_tools)


def _message_match(node: YNode, problems: Problems, pos: Pos, key: str) -> MessageMatch | None:
    what = f"`{key}`"
    mapping = problems.expect_map(node, what, pos)
    if mapping is None:
        return None
    fields = Fields(mapping, problems, what, ("utter_name", "text_matches", "buttons"))
    count = len(problems.items)
    utter_name = fields.string("utter_name")
    text_matches = fields.regex("text_matches")
    buttons = None
    seq = fields.seq("buttons")
    if seq is not None:
        specs = []
        for i, item in enumerate(seq.items):
            button_what = f"button {i + 1} of {what}"
            button = problems.expect_map(item, button_what, item.pos)
            if button is None:
                continue
            bfields = Fields(button, problems, button_what, ("title", "payload"))
            title = bfields.string("title", required=True, allow_empty=True)
            payload = bfields.string("payload", allow_empty=True)
            if title is not None:
                specs.append(ButtonSpec(title, payload, bfields.has("payload")))
        buttons = tuple(specs)
    if not any(fields.has(k) for k in ("utter_name", "text_matches", "buttons")):
        problems.add(f"{what} must set at least one of `utter_name`, `text_matches`, `buttons`", mapping.pos)
    if len(problems.items) > count:
        return None
    return MessageMatch(utter_name, text_matches, buttons)


def _bot_uttered(node: YNode, problems: Problems, pos: Pos, context: Context) -> Check | None:
    match = _message_match(node, problems, pos, "bot_uttered")
    return BotUttered(match) if match else None


def _bot_did_not_utter(node: YNode, problems: Problems, pos: Pos, context: Context) -> Check | None:
    match = _message_match(node, problems, pos, "bot_did_not_utter")
    return BotDidNotUtter(match) if match else None


def _memory_step(cls: type) -> Parser:
    def parse(node: YNode, problems: Problems, pos: Pos, context: Context) -> Check | None:
        key = cls.key
        if isinstance(node, YScalar) and isinstance(node.value, str) and node.value.strip():
            name = _memory_name(node.value, problems, node.pos)
            return cls(name) if name is not None else None
        problems.add(
            f"inside `sequencing`, `{key}` takes the key name as a string (no list, no value)", getattr(node, "pos", pos)
        )
        return None

    return parse


_NOT_IN_SEQUENCING = {
    "memory_was_not_set": "it matches no event",
    "tools_within_one_turn": "it matches a turn, not one event",
    "bot_did_not_utter": "it matches no event",
    "sequencing": "sequencing does not nest",
}


def _sequencing(node: YNode, problems: Problems, pos: Pos, context: Context) -> Check | None:
    what = "`sequencing`"
    seq = problems.expect_seq(node, f"{what} (a list of steps)", pos)
    if seq is None:
        return None
    count = len(problems.items)
    steps: list[EventCheck] = []
    for i, item in enumerate(seq.items):
        entry = problems.single_key(item, f"step {i + 1} of {what}", item.pos)
        if entry is None:
            continue
        key, key_pos, value = entry
        if key in _NOT_IN_SEQUENCING:
            problems.add(f"`{key}` is not allowed inside {what}: {_NOT_IN_SEQUENCING[key]}", key_pos)
            continue
        if key not in SEQUENCING_STEPS:
            problems.add(f"unknown sequencing step `{key}`{did_you_mean(key, SEQUENCING_STEPS)}", key_pos)
            continue
        step = _STEP_PARSERS[key](value, problems, key_pos, replace(context, inside="sequencing"))
        if step is not None:
            steps.append(step)  # type: ignore[arg-type]
    if len(problems.items) > count:
        return None
    return Sequencing(tuple(steps))


PARSERS: dict[str, Parser] = {
    **{cls.key: _lifecycle(cls) for cls in LIFECYCLE_CHECKS},
    "memory_was_set": _memory(ASSERTIONS["memory_was_set"]),
    "memory_was_not_set": _memory(ASSERTIONS["memory_was_not_set"]),
    "memory_was_cleared": _memory(ASSERTIONS["memory_was_cleared"]),
    "tool_executed": _tool_executed,
    "tools_within_one_turn": _tools_within_one_turn,
    "bot_uttered": _bot_uttered,
    "bot_did_not_utter": _bot_did_not_utter,
    "sequencing": _sequencing,
}
assert PARSERS.keys() == ASSERTIONS.keys()

_STEP_PARSERS: dict[str, Parser] = {
    **{key: PARSERS[key] for key in SEQUENCING_STEPS},
    "memory_was_set": _memory_step(MemoryWasSetStep),
    "memory_was_cleared": _memory_step(MemoryWasClearedStep),
}


def parse_assertion(node: YNode, problems: Problems, index: int, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> Check | None:
    entry = problems.single_key(node, f"assertion {index}", node.pos)
    if entry is None:
        return None
    key, key_pos, value = entry
    parser = PARSERS.get(key)
    if parser is None:
        problems.add(f"unknown assertion `{key}`{did_you_mean(key, PARSERS)}", key_pos)
        return None
    return parser(value, problems, key_pos, Context(framework_tools=framework_tools))


def parse_assertions(node: YNode, problems: Problems, pos: Pos, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> tuple[Check, ...]:
    """`goals.assertions`; `framework_tools` is the project's setting (which tools are never counted runs)."""
    seq = problems.expect_seq(node, "`goals.assertions`", pos)
    if seq is None:
        return ()
    checks = (parse_assertion(item, problems, i + 1, framework_tools) for i, item in enumerate(seq.items))
    return tuple(check for check in checks if check is not None)


__all__ = ["PARSERS", "SEQUENCING_STEPS", "Context", "parse_assertion", "parse_assertions"]
