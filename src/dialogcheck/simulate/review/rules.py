"""The review's rules: each a small frozen dataclass whose `name` is the `rule` of the reasons it gives.

A rule looks at the whole `Subject` and yields a `Reason` for each thing it
finds; its thresholds are its fields, so a stricter or looser review is a
rule built with other values. The figures behind the defaults (how far real
simulated customers go before a rule would fire) are in RELIABILITY.md,
measured by `benchmarks/user_review.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ..._shown import counted
from ...results.model import Reason
from ..user import USER_SCHEMA
from . import _text
from .model import TEMPLATE_TAG, Said, Subject


class Rule(Protocol):
    name: ClassVar[str]

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        """A reason for each fault of the simulated user this rule sees."""
        ...


def _quote(said: Said) -> str:
    return f'"{_text.excerpt(said.line.text)}"'


def _spoken(subject: Subject) -> Iterator[Said]:
    """The user messages that say anything (a blank one is the `empty` rule's)."""
    return (said for said in subject.said if said.words)


#: `"message":`, `"done":`: a key of the JSON object the simulated user is asked to answer with.
_ANSWER_KEY = re.compile(r'"(?:%s)"\s*:' % "|".join(map(re.escape, USER_SCHEMA["properties"])), re.I)


@dataclass(frozen=True)
class PromptWording:
    """The message repeats the prompt: a template tag or variable, the JSON answer shape, or the template's own words.

    A message is the template's words when it shares `min_span` words in a row
    with the template's literal text, or when the whole message (of at least
    `min_whole` words, as "Your next message.") stands in it.
    """

    name: ClassVar[str] = "prompt_wording"
    min_span: int = 5
    min_whole: int = 3

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        runs = subject.prompts.literal_runs
        spans = subject.prompts.spans(self.min_span)
        wholes = tuple(f" {' '.join(run)} " for run in runs)
        for said in _spoken(subject):
            text = _text.plain(said.line.text)
            found = TEMPLATE_TAG.search(text)
            variable = next((w for w in said.words if w in subject.prompts.variables), None)
            if found or variable:
                what = found.group(0) if found else variable
                yield Reason(said.line.turn, self.name, f"repeats the prompt's template `{_text.excerpt(what, 40)}`: {_quote(said)}")  # type: ignore[arg-type]  # `found or variable`
            elif _ANSWER_KEY.search(text):
                yield Reason(said.line.turn, self.name, f"repeats the JSON shape of the simulator's answer: {_quote(said)}")
            elif any(gram in spans for gram in _text.ngrams(said.words, self.min_span)) or (
                len(said.words) >= self.min_whole and any(f" {' '.join(said.words)} " in whole for whole in wholes)
            ):
                yield Reason(said.line.turn, self.name, f"repeats the prompt's own words: {_quote(said)}")


@dataclass(frozen=True)
class AgentEcho:
    """The message is the agent's message just before it, said back: nearly all of it, or a verbatim stretch that is nearly all of the user's message.

    A customer who restates a question to answer it ("It is a one-way trip")
    changes its words; an echo keeps them. Messages shorter than `min_words`
    ("yes", "change of plan") are never echoes.
    """

    name: ClassVar[str] = "agent_echo"
    min_words: int = 5
    min_likeness: float = 0.9
    min_covered: float = 0.9

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        for said in _spoken(subject):
            if len(said.words) < self.min_words or not said.agent_words:
                continue
            copied = len(_text.longest_common_span(said.words, said.agent_words))
            if copied >= math.ceil(self.min_covered * len(said.words)) or _text.alike(said.words, said.agent_words, self.min_likeness):
                yield Reason(said.line.turn, self.name, f"echoes the agent's previous message: {_quote(said)}")


#: What only the agent says: offering help, closing a support call, a label naming the speaker as the agent.
_AGENT_TALK = re.compile(
    r"\bhow (?:can|may|could|might) (?:i|we) (?:help|assist)\b"
    r"|\bwhat can (?:i|we) (?:help you with|do for you)\b"
    r"|\b(?:anything|something) else (?:that )?(?:i|we) (?:can|could) (?:help you|assist you|do for you)\b"
    r"|\bthanks? (?:you )?for (?:contacting|calling|reaching out to|choosing) (?:us|our)\b"
    r"|^\s*(?:agent|assistant|bot|support|representative)\s*:",
    re.I | re.M,
)


@dataclass(frozen=True)
class SpeaksAsAgent:
    """The message talks as the agent does ("How can I help you today?", a line starting `Agent:`)."""

    name: ClassVar[str] = "speaks_as_agent"

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        for said in _spoken(subject):
            found = _AGENT_TALK.search(_text.plain(said.line.text))
            if found:
                yield Reason(said.line.turn, self.name, f"speaks as the agent (\"{found.group(0).strip()}\"): {_quote(said)}")


#: What a person never says about themselves: that they are a model, that the chat is a test, a speaker label.
_OUT_OF_CHARACTER = re.compile(
    r"\bas an? (?:ai|artificial intelligence|language model|llm)\b"
    r"|\b(?:i'm|i am) (?:just |only )?(?:an? )?(?:ai|artificial intelligence|chatbot|language model|llm|virtual assistant)\b"
    r"|\b(?:large )?language model\b"
    r"|\bthis is (?:just |only )?(?:a|an) (?:test|simulation|simulated)\b"
    r"|\bsimulated (?:user|customer|conversation|person)\b"
    r"|\brole[- ]?play"
    r"|\b(?:stay|staying|break|breaking|out of) (?:in )?character\b"
    r"|\bsystem prompt\b"
    r"|^\s*(?:user|customer|human|system)\s*:",
    re.I | re.M,
)


@dataclass(frozen=True)
class BreaksCharacter:
    """The message steps out of the customer's role ("as an AI", "this is a test", a line starting `User:`)."""

    name: ClassVar[str] = "breaks_character"

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        for said in _spoken(subject):
            found = _OUT_OF_CHARACTER.search(_text.plain(said.line.text))
            if found:
                yield Reason(said.line.turn, self.name, f"breaks character (\"{found.group(0).strip()}\"): {_quote(said)}")


@dataclass(frozen=True)
class BriefCopy:
    """The message copies the brief word for word: a leak of the instructions, not a customer speaking.

    Customers take the brief's facts and goal into their own sentences, and
    may do so for a good stretch ("change my upcoming flight from EWR on May
    21 to a nonstop flight on the same day"); `min_words` in a row is more
    than they do. The brief talks to the user as "you", a customer speaks as
    "I": a copied stretch of `min_words_as_you` words that keeps a "you" is
    already a leak. Passages the brief quotes are words the user is told to
    say, never a leak.
    """

    name: ClassVar[str] = "brief_copy"
    min_words: int = 20
    min_words_as_you: int = 6

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        long_spans = _text.ngram_set(subject.brief_runs, self.min_words)
        as_you = frozenset(g for g in _text.ngram_set(subject.brief_runs, self.min_words_as_you) if _text.SECOND_PERSON.intersection(g))
        for said in _spoken(subject):
            if any(g in long_spans for g in _text.ngrams(said.words, self.min_words)) or any(
                g in as_you for g in _text.ngrams(said.words, self.min_words_as_you)
            ):
                copied = max((_text.longest_common_span(said.words, run) for run in subject.brief_runs), key=len)
                yield Reason(said.line.turn, self.name, f"copies {counted(len(copied), 'word')} of the brief verbatim: \"{_text.excerpt(' '.join(copied))}\"")


@dataclass(frozen=True)
class Empty:
    """A blank message that the conversation went on after (a blank last message is how a simulated user may end)."""

    name: ClassVar[str] = "empty"

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        said = subject.said
        for one in said[:-1]:
            if not _text.has_word(one.line.text):
                yield Reason(one.line.turn, self.name, f"sends an empty message ({_text.excerpt(one.line.text) or 'no text'!r}) and the conversation goes on")


@dataclass(frozen=True)
class Loop:
    """The user sends the same message, or nearly, `repeats` times running.

    Messages shorter than `min_words` are left out: a customer may well answer
    "yes" to several questions in a row.
    """

    name: ClassVar[str] = "loop"
    repeats: int = 3
    min_likeness: float = 0.85
    min_words: int = 3

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        run = 1
        spoken = list(_spoken(subject))
        for before, said in zip(spoken, spoken[1:]):
            alike = len(said.words) >= self.min_words and _text.alike(before.words, said.words, self.min_likeness)
            run = run + 1 if alike else 1
            if run == self.repeats:
                yield Reason(said.line.turn, self.name, f"sends the same message {counted(self.repeats, 'time')} running: {_quote(said)}")


@dataclass(frozen=True)
class GoalUnstated:
    """The conversation ended before the user said anything of what it came for.

    The goal is the brief's `simulation_context`; a message speaks of it when
    it shares `min_shared` of its content words. Content words leave out
    function words, greetings, ids and words any request holds ("help",
    "want", "please"), and meet by their first letters, so "cancel my
    flights" speaks of "You want to cancel your flight". One word is enough:
    a customer who said "my card" and got no help did state a goal, and the
    run is the agent's to answer for; "Hi!" or "Your next message." says none.
    """

    name: ClassVar[str] = "goal_unstated"
    min_shared: int = 1

    def reasons(self, subject: Subject) -> Iterator[Reason]:
        goal = _text.content_stems(subject.brief.simulation_context)
        needed = min(self.min_shared, len(goal))
        if needed == 0:
            return
        said = list(_spoken(subject))
        if not said:
            yield Reason(None, self.name, "the conversation ended before the user said anything")
        elif not any(len(goal & _text.content_stems(one.line.text)) >= needed for one in said):
            yield Reason(None, self.name, "the conversation ended before the user said what it wanted (no message speaks of the brief's goal)")


#: Every deterministic rule, in the order their reasons are listed.
RULES: tuple[Rule, ...] = (
    PromptWording(),
    AgentEcho(),
    SpeaksAsAgent(),
    BreaksCharacter(),
    BriefCopy(),
    Empty(),
    Loop(),
    GoalUnstated(),
)
