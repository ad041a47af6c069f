"""The transcript the judge and the reports show: who said what, turn by turn."""

from __future__ import annotations

from ..events.model import BotMessage, Conversation, UserMessage


def render_transcript(conversation: Conversation) -> str:
    """`USER:` and `AGENT:` lines; `/commands` and blank messages are left out."""
    lines = []
    for event in conversation.events:
        if isinstance(event, UserMessage) and event.opens_turn:
            lines.append(f"USER: {event.text.strip()}")
        elif isinstance(event, BotMessage):
            text = event.text.strip()
            buttons = " | ".join(str(b.title) for b in event.buttons)
            if buttons:
                text = f"{text} [buttons: {buttons}]".strip()
            if text:
                lines.append(f"AGENT: {text}")
    return "\n".join(lines) if lines else "(no messages)"
