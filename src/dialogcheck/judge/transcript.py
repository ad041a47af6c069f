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


def transcript_lines(conversation: Conversation) -> Iterator[str]:
    for event in conversation.events:
        if isinstance(event, UserMessage) and event.opens_turn:
            yield f"USER: {event.text.strip()}"
        elif isinstance(event, BotMessage):
            text = event.text.strip()
            buttons = " | ".join(str(b.title) for b in event.buttons)
            if buttons:
                text = f"{text} [buttons: {buttons}]".strip()
            if text:
                yield f"AGENT: {text}"


def render_transcript(conversation: Conversation, limit: int | None = None) -> str:
    """`USER:` and `AGENT:` lines; `/commands` and blank messages are left out. `TooLong` past `limit` characters."""
    return join_lines(transcript_lines(conversation), "(no messages)", limit)
