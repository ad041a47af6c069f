"""The event ledger: a compact per-turn listing of what the agent did.

The judge reads it next to the transcript, so a criterion like "the agent
did not claim the order was placed before submitting it" can be decided
from what really ran. People read it too (reports, `--format text`), so it
stays short: one line per event, values cut to a readable length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..events.model import (
    FRAMEWORK_TOOLS,
    BlockEvent,
    BotMessage,
    Conversation,
    Event,
    MemoryCleared,
    MemorySet,
    SkillEvent,
    ToolRun,
)
from ..events.values import show
from .transcript import join_lines

VALUE_LIMIT = 60
RESULT_LIMIT = 80

_SKILL_VERBS = {
    "skill_activated": "started",
    "skill_completed": "completed",
    "skill_cancelled": "cancelled",
    "skill_interrupted": "interrupted",
    "skill_resumed": "resumed",
}
_BLOCK_VERBS = {
    "ordered_block_entered": "entered",
    "ordered_block_completed": "completed",
    "ordered_block_cancelled": "cancelled",
    "ordered_block_interrupted": "interrupted",
    "ordered_block_resumed": "resumed",
}


def _step(step_id: str | None) -> str:
    return f" at step {step_id}" if step_id is not None else ""


def _skill(event: SkillEvent) -> str:
    return f"skill {event.skill_id} {_SKILL_VERBS[event.type]}{_step(event.step_id)}"


def _block(event: BlockEvent) -> str:
    return f"block {event.skill_id}/{event.block_id} {_BLOCK_VERBS[event.type]}{_step(event.step_id)}"


def _memory_set(event: MemorySet) -> str:
    return f"memory {event.key} = {show(event.value, VALUE_LIMIT)}"


def _memory_cleared(event: MemoryCleared) -> str:
    return f"memory {event.key} cleared"


def _tool(event: ToolRun) -> str:
    arguments = ", ".join(f"{name}={show(value, VALUE_LIMIT)}" for name, value in event.arguments.items())
    where = f" [mcp {event.mcp_server}]" if event.source == "mcp" else ""
    if event.is_error:
        outcome = "error" + (f": {show(event.error_message, RESULT_LIMIT)}" if event.error_message else "")
    else:
        outcome = "ok" + (f" {show(event.result, RESULT_LIMIT)}" if event.result is not None else "")
    return f"tool {event.tool_name}({arguments}){where} -> {outcome}"


def _bot(event: BotMessage) -> str | None:
    if event.utter_name is None:
        return None  # free text is in the transcript; the ledger lists templates
    buttons = " | ".join(str(b.title) for b in event.buttons)
    return f"template {event.utter_name}" + (f" [buttons: {buttons}]" if buttons else "")


#: By the event's `kind` (every skill event type is `skill`, every block event type `block`).
_LINES: dict[str, Callable[..., str | None]] = {
    "skill": _skill,
    "block": _block,
    "memory_set": _memory_set,
    "memory_cleared": _memory_cleared,
    "bot": _bot,
}


def ledger_line(event: Event, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> str | None:
    """One event as a ledger line, or None for events the ledger leaves out (framework tools among them)."""
    if isinstance(event, ToolRun):
        return _tool(event) if event.tool_name not in framework_tools else None
    render = _LINES.get(event.kind)
    return render(event) if render else None


def ledger_lines(conversation: Conversation, framework_tools: frozenset[str] = FRAMEWORK_TOOLS, numbered: bool = False) -> Iterator[str]:
    """`turn N:` headings over indented lines; `numbered` starts each line with `[event N]`, what the judge cites."""
    current = None
    for event in conversation.events:
        line = ledger_line(event, framework_tools)
        if line is None:
            continue
        if event.turn != current:
            current = event.turn
            yield f"turn {current}:"
        yield f"  [event {event.index}] {line}" if numbered else f"  {line}"


def render_ledger(
    conversation: Conversation, limit: int | None = None, framework_tools: frozenset[str] = FRAMEWORK_TOOLS, numbered: bool = False
) -> str:
    """Every turn that has ledger lines, as `turn N:` followed by indented lines. `TooLong` past `limit` characters."""
    return join_lines(ledger_lines(conversation, framework_tools, numbered), "(no events recorded)", limit)
