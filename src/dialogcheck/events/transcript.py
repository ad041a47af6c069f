"""The one transcript type: who said what, and at which turn, as every part of dialogcheck reads a conversation.

A run's transcript (`run_N.json`), the simulated user's view of the conversation so far, the review of that
user, and the pages and explanations that show what was said all hold `TranscriptLine`s; each reads the lines
its own way (the review leaves out `/commands`, a page cuts long texts), but the line is the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: Who said a line: the (simulated or recorded) user, or the agent under test.
Role = Literal["user", "agent"]


@dataclass(frozen=True)
class TranscriptLine:
    """One message: who said it (`user` or `agent`), what, and the conversation turn it belongs to (None where the
    turn was not counted, as in a results file, which holds the role and the text)."""

    role: str
    text: str
    turn: int | None = None
