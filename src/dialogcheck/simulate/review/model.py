"""What the review reads: a transcript, the brief, the prompt templates (what it says, `UserReview`, is a result).

All plain frozen data: the transcript is read from the canonical `Conversation`
once, the brief and the templates are plain strings, so the same review runs
on a simulated run, a recorded conversation or a test's hand-written lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from importlib import resources

from ...events.model import BotMessage, Conversation, UserMessage
from ...events.transcript import TranscriptLine
from ...scenario.model import Scenario
from ...scenario.traits import TRAITS
from . import _text

#: One message of the transcript the review reads, at its turn (always counted here).
Line = TranscriptLine


def transcript_of(conversation: Conversation) -> tuple[Line, ...]:
    """The user's and the agent's messages of a conversation, in order, at their turns.

    A user `/command` (a button's payload, `/session_start`) is something the
    channel sent, not words the user typed, so it is left out; an agent event
    with no text said nothing. A blank user message is kept: sending one in
    the middle of a conversation is one of the faults looked for.
    """
    lines = []
    for event in conversation.of_type("user", "bot"):
        text = event.text or ""  # type: ignore[attr-defined]  # a user or bot message
        if isinstance(event, UserMessage) and not text.strip().startswith("/"):
            lines.append(Line("user", text, event.turn))
        elif isinstance(event, BotMessage) and text.strip():
            lines.append(Line("agent", text, event.turn))
    return tuple(lines)


@dataclass(frozen=True)
class Brief:
    """What the simulated user was told: the scenario's `simulation_context` and any further text about the user.

    `extra` holds the other passages the user was given (a persona, what it
    knows, what it does not know, how to behave), as plain text.
    """

    simulation_context: str
    extra: tuple[str, ...] = ()

    @property
    def passages(self) -> tuple[str, ...]:
        return (self.simulation_context, *self.extra)


#: How each field about the user is introduced to the reviewer, as the simulated user's prompt introduces it.
USER_FIELD_LABELS = {
    "persona": "Who you are",
    "known_info": "What you know and may say when asked",
    "unknown_info": "What you do not know and must not invent",
    "user_instructions": "How to behave",
}


def brief_of(scenario: Scenario, trait: str | None = None) -> Brief:
    """What a scenario tells its simulated user, and the persona `trait` it played on top: the one place a field
    about the user joins the review (the rules read every passage; the LLM reviewer reads them labelled)."""
    given = scenario.user.given()
    extra = [f"{label}: {given[name]}" for name, label in USER_FIELD_LABELS.items() if name in given]
    if trait is not None:
        extra.append(f"How you come across: {TRAITS[trait]}")
    return Brief(scenario.simulation_context, tuple(extra))


#: A Jinja2 tag, expression or comment: where the literal text of a template breaks.
TEMPLATE_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
#: A name with an underscore: a template variable no customer would type (`simulation_context`).
_IDENTIFIER = re.compile(r"[A-Za-z]\w*_\w*")


@dataclass(frozen=True)
class Prompts:
    """The source text of the templates that prompt the simulated user, to recognise their words in a message."""

    sources: tuple[str, ...]

    @classmethod
    def bundled(cls) -> Prompts:
        """The templates shipped with dialogcheck's simulated user."""
        folder = resources.files("dialogcheck.simulate").joinpath("prompts")
        return cls(tuple(entry.read_text(encoding="utf-8") for entry in sorted(folder.iterdir(), key=lambda e: e.name) if entry.name.endswith(".j2")))

    @cached_property
    def literal_runs(self) -> tuple[tuple[str, ...], ...]:
        """The words of each stretch of literal text between two template tags."""
        return tuple(run for source in self.sources for part in TEMPLATE_TAG.split(source) if (run := _text.words(part)))

    def spans(self, n: int) -> frozenset[tuple[str, ...]]:
        """Every run of `n` words of the templates' literal text, made once per `n` (every review reads them)."""
        found = self._spans.get(n)
        if found is None:
            found = self._spans[n] = _text.ngram_set(self.literal_runs, n)
        return found

    @cached_property
    def _spans(self) -> dict[int, frozenset[tuple[str, ...]]]:
        return {}

    @cached_property
    def variables(self) -> frozenset[str]:
        """The names the templates' tags use that no message would hold by chance (they have an underscore)."""
        return frozenset(name.lower() for source in self.sources for tag in TEMPLATE_TAG.findall(source) for name in _IDENTIFIER.findall(tag))


@dataclass(frozen=True)
class Said:
    """A user message with what the rules compare it to: its words, and the agent's messages just before it."""

    line: Line
    words: tuple[str, ...]
    #: The agent's messages since the user's previous message, as one text, and as words.
    agent_before: str
    agent_words: tuple[str, ...]


@dataclass(frozen=True)
class Subject:
    """What a rule reads: the transcript, the brief, the prompts, and what is worked out from them once."""

    transcript: tuple[Line, ...]
    brief: Brief
    prompts: Prompts

    @cached_property
    def said(self) -> tuple[Said, ...]:
        """Every user message, in order, with the agent's messages before it."""
        result, agent = [], []
        for line in self.transcript:
            if line.role == "agent":
                agent.append(line.text)
                continue
            before = "\n".join(agent)
            result.append(Said(line, _text.words(line.text), before, _text.words(before)))
            agent = []
        return tuple(result)

    @cached_property
    def brief_runs(self) -> tuple[tuple[str, ...], ...]:
        """The brief's words, cut wherever it quotes what the user is to say."""
        return tuple(run for passage in self.brief.passages for part in _text.unquoted_parts(passage) if (run := _text.words(part)))
