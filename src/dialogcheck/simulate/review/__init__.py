"""A fidelity review of a simulated user: did it speak as the brief's customer, or did the simulator fail?

When an LLM plays the customer, some failed runs are the simulator's fault: it
repeated its prompt, echoed the agent, leaked its instructions, looped, or
stopped before asking for anything. `review_user` reads the user's messages
of one conversation against the brief and the prompt templates and says `ok`
or `suspect`, with a reason for each turn a rule flagged. It is deterministic
and pure: the same transcript gives the same review.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ...events.model import Conversation
from ...results.model import Reason, UserReview
from .model import Brief, Line, Prompts, Subject, brief_of, transcript_of
from .rules import RULES, Rule

__all__ = [
    "RULES",
    "Brief",
    "Line",
    "Prompts",
    "Reason",
    "Rule",
    "UserReview",
    "brief_of",
    "review_conversation",
    "review_user",
    "transcript_of",
]


def review_user(
    transcript: Sequence[Line], brief: Brief, prompts: Prompts | None = None, rules: Sequence[Rule] = RULES
) -> UserReview:
    """Review the user's messages of a transcript; `prompts` defaults to the templates dialogcheck ships."""
    subject = Subject(tuple(transcript), brief, prompts if prompts is not None else _bundled())
    return UserReview.of(reason for rule in rules for reason in rule.reasons(subject))


def review_conversation(
    conversation: Conversation, brief: Brief, prompts: Prompts | None = None, rules: Sequence[Rule] = RULES
) -> UserReview:
    """Review the `user` messages of a conversation (simulated here or recorded elsewhere) against the brief."""
    return review_user(transcript_of(conversation), brief, prompts, rules)


@functools.cache
def _bundled() -> Prompts:
    """The shipped templates, read once."""
    return Prompts.bundled()
