"""The transcript the judge and the reports show: who said what, turn by turn."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..events.model import BotMessage, Conversation, UserMessage


class TooLong(Exception):
    """A rendering passed its character limit. Raised as soon as it does, so a huge conversation costs only the limit."""

    def __init__(self, limit: int):
        super().__init__(f"longer than {limit:,} characters")
        self.limit = limit


def join_lines(lines: Iterable[str], empty: str, limit: int | None = None) -> str:
    """The lines joined by newlines (`empty` when there are none); `TooLong` past `limit` characters."""
    if limit is None:
        kept = list(lines)
    else:
        kept, size = [], 0
        for line in lines:
            size += len(line) + 1
            if size > limit:
                raise TooLong(limit)
            kept.append(line)
    return "\n".join(kept) if kept else empty


def transcript_lines(conversation: Conversation, numbered: bool = False) -> Iterator[str]:
    """`USER:` and `AGENT:` lines; `numbered` starts each with `[turn T, event N]`, what the judge cites."""
    for event in conversation.events:
        if isinstance(event, UserMessage) and event.opens_turn:
            line = f"USER: {event.text.strip()}"  # type: ignore[union-attr]  # settled: a null text reads as "" (`parse.settle`)
        elif isinstance(event, BotMessage):
            text = event.text.strip()  # type: ignore[union-attr]  # settled: a null text reads as "" (`parse.settle`)
            buttons = " | ".join(str(b.title) for b in event.buttons)
            if buttons:
                text = f"{text} [buttons: {buttons}]".strip()
            if not text:
                continue
            line = f"AGENT: {text}"
        else:
            continue
        yield f"[turn {event.turn}, event {event.index}] {line}" if numbered else line


def render_transcript(conversation: Conversation, limit: int | None = None, numbered: bool = False) -> str:
    """`USER:` and `AGENT:` lines; `/commands` and blank messages are left out. `TooLong` past `limit` characters."""
    return join_lines(transcript_lines(conversation, numbered), "(no messages)", limit)
