"""What makes the judge's answer about one criterion valid, and the events it cites.

An answer counts only when it names the criterion it was asked (answers are
matched by id, never by position), every turn and event it cites exists in
that conversation, and its rationale is its own: a small model that copies
the prompt's description of the field has judged nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..events.model import BotMessage, Conversation, UserMessage

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> str:
    """The text as lower-case words between single spaces, padded, so containment is whole words."""
    return " " + " ".join(_WORD.findall(text.lower())) + " "


def _cited(answer: Mapping[str, Any], kind: str) -> list[int]:
    return list((answer.get("evidence") or {}).get(kind) or ())


def answer_problem(answer: Mapping[str, Any], conversation: Conversation, criterion_id: str, prompt_wording: str) -> str | None:
    """Why the answer cannot be taken (said to the model when it is asked again), or None when it is valid."""
    named = str(answer.get("criterion", "")).strip()
    if named != criterion_id:
        return f"it answers criterion {named!r}, but the question was criterion {criterion_id!r}: answer that one, with its id"
    last_turn = max((event.turn for event in conversation.events), default=0)
    turns = sorted({turn for turn in _cited(answer, "turns") if not 0 <= turn <= last_turn})
    if turns:
        return f"it cites turn {', '.join(map(str, turns))}, but this conversation has turns 0 to {last_turn}"
    events = sorted({index for index in _cited(answer, "events") if not 0 <= index < len(conversation.events)})
    if events:
        return f"it cites event {', '.join(map(str, events))}, but this conversation has events 0 to {len(conversation.events) - 1:,}"
    rationale = _words(str(answer.get("rationale", "")))
    if not rationale.strip():
        return "the rationale is empty: say what in this conversation decided it"
    if rationale in _words(prompt_wording):
        return "the rationale repeats the prompt's own words: say, in your own words, what in this conversation decided it"
    return None


def cited_events(answer: Mapping[str, Any], conversation: Conversation) -> tuple[int, ...]:
    """The event indexes the answer relies on: those it cites, and the messages of each turn it cites."""
    turns = set(_cited(answer, "turns"))
    messages = (
        event.index
        for event in conversation.events
        if event.turn in turns and isinstance(event, (UserMessage, BotMessage))
    )
    return tuple(sorted({*_cited(answer, "events"), *messages}))


def blame_problem(answer: Mapping[str, Any], conversation: Conversation) -> str | None:
    """Why the localiser's answer cannot be taken (said to the model when it is asked again), or None."""
    last_turn = max((event.turn for event in conversation.events), default=0)
    turn, event = answer.get("turn"), answer.get("event")
    if answer.get("actor") != "unknown":
        if turn is None and event is None:
            return "it names no turn: give the turn where it went wrong, or answer unknown"
        if turn is not None and not 0 <= turn <= last_turn:
            return f"it cites turn {turn}, but this conversation has turns 0 to {last_turn}"
        if event is not None and not 0 <= event < len(conversation.events):
            return f"it cites event {event}, but this conversation has events 0 to {len(conversation.events) - 1:,}"
        if event is not None and turn is not None and conversation.events[event].turn != turn:
            return f"it cites event {event}, which is in turn {conversation.events[event].turn}, not turn {turn}"
    if not str(answer.get("reason", "")).strip():
        return "the reason is empty: say what went wrong, in one sentence"
    return None
