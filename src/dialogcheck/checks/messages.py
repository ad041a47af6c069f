"""Agent message checks: `bot_uttered` and `bot_did_not_utter`.

One single bot message must satisfy every field set; `bot_did_not_utter`
passes exactly when the same `bot_uttered` would fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from .._shown import counted
from ..events.model import BotMessage, Button, Conversation, Event
from ..events.values import show
from .base import Check, CheckResult, EventCheck, at
from .patterns import one_budget, prepared
from .schema import file_keys, spec

if TYPE_CHECKING:
    from .._fields import Fields
    from .load import Context
    from .patterns import Pattern


@dataclass(frozen=True)
class ButtonSpec:
    """A listed button: `title` always compared, `payload` only when listed."""

    title: str = spec(allow_empty=True)
    payload: str | None = spec(None, allow_empty=True)

    def accepts(self, button: Button) -> bool:
        return button.title == self.title and (self.payload is None or button.payload == self.payload)

    def __str__(self) -> str:
        return f"{self.title!r}" + (f" ({self.payload})" if self.payload is not None else "")


def buttons_in_order(wanted: Sequence[ButtonSpec], present: Sequence[Button]) -> int:
    """How many of `wanted` appear among `present` in order (others may sit between)."""
    found = 0
    for button in present:
        if found < len(wanted) and wanted[found].accepts(button):
            found += 1
    return found


@dataclass(frozen=True)
class MessageMatch:
    """The fields of `bot_uttered`; at least one is set."""

    utter_name: str | None = None
    text_matches: str | None = spec(None, regex=True)
    buttons: tuple[ButtonSpec, ...] | None = spec(None, item="button")

    if TYPE_CHECKING:
        _pattern: ClassVar[Pattern | None]  # set by __post_init__ on the instance, never on the class

    @classmethod
    def validate(cls, values: Mapping[str, Any], fields: Fields, context: Context) -> None:
        keys = file_keys(cls)
        if not any(fields.has(key) for key in keys):
            listed = ", ".join(f"`{key}`" for key in keys)
            fields.problems.add(f"{fields.what} must set at least one of {listed}", fields.node.pos)

    def __post_init__(self) -> None:
        # An attribute, not a cached_property: a message check reads it for every message, and an instance attribute
        # shadowed by no class attribute is the fast kind to read. Not a field: the fields are the file's schema.
        object.__setattr__(self, "_pattern", prepared(self.text_matches) if self.text_matches is not None else None)

    def matches(self, message: BotMessage) -> bool:
        if self.utter_name is not None and message.utter_name != self.utter_name:
            return False
        if self.buttons is not None and buttons_in_order(self.buttons, message.buttons) < len(self.buttons):
            return False
        return self._pattern is None or self._pattern.found(message.text)  # type: ignore[arg-type]  # settled: a null text reads as "" (`parse.settle`)

    def mismatches(self, message: BotMessage) -> list[str]:
        miss = []
        if self.utter_name is not None and message.utter_name != self.utter_name:
            miss.append(f"utter_name was {show(message.utter_name)}, expected {show(self.utter_name)}")
        if self._pattern is not None and not self._pattern.found(message.text):  # type: ignore[arg-type]  # settled: a null text reads as "" (`parse.settle`)
            miss.append(f"text {show(message.text, 60)} does not match /{self.text_matches}/")
        if self.buttons is not None:
            found = buttons_in_order(self.buttons, message.buttons)
            if found < len(self.buttons):
                have = ", ".join(repr(b.title) for b in message.buttons) or "none"
                miss.append(f"buttons lacked {self.buttons[found]} in order (it had {have})")
        return miss

    def miss_count(self, message: BotMessage, text_found: bool | None = None) -> int:
        """`len(self.mismatches(message))` without the text: every bot message is ranked on a failure. `text_found`:
        whether the pattern is in its text, when that is known already (`miss_counts`)."""
        count: int = self.utter_name is not None and message.utter_name != self.utter_name
        if self._pattern is not None:
            count += not (self._pattern.found(message.text) if text_found is None else text_found)  # type: ignore[arg-type]  # settled: a null text reads as "" (`parse.settle`)
        count += self.buttons is not None and buttons_in_order(self.buttons, message.buttons) < len(self.buttons)
        return count

    def miss_counts(self, messages: Sequence[BotMessage]) -> Iterable[int]:
        """`miss_count` of each of `messages`, their texts searched at once (`Pattern.found_in`): ranking a failure
        reads every text, and one search over them all costs less than one of each."""
        if self._pattern is None:
            return map(self.miss_count, messages)
        return map(self.miss_count, messages, self._pattern.found_in([message.text for message in messages]))  # type: ignore[misc]  # settled: a null text reads as "" (`parse.settle`)

    def describe(self) -> str:
        parts = []
        if self.utter_name is not None:
            parts.append(self.utter_name)
        if self.text_matches is not None:
            parts.append(f"/{self.text_matches}/")
        if self.buttons is not None:
            parts.append("buttons " + ", ".join(str(b) for b in self.buttons))
        return " ".join(parts)


@dataclass(frozen=True)
class BotUttered(EventCheck):
    key = "bot_uttered"
    event_noun = "bot message"

    match: MessageMatch = spec(whole="the message to match")

    @cached_property
    def label(self) -> str:
        return f"{self.key} {self.match.describe()}"

    def candidates(self, conversation: Conversation) -> Sequence[Event]:
        return conversation.bot_messages

    def mismatches(self, event: BotMessage) -> list[str]:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        return self.match.mismatches(event)

    def matches(self, event: BotMessage) -> bool:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        return self.match.matches(event)

    def miss_count(self, event: BotMessage) -> int:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        return self.match.miss_count(event)

    def closest_miss(self, events: Sequence[Event]) -> tuple[Event, list[str]] | None:
        """As every event check ranks its candidates (every message is about the same subject), with the counts of
        `MessageMatch.miss_counts`, all the texts searched at once. Its own loop: pairing each event with its count
        costs the other checks, which rank one or two candidates, more than it saves them."""
        best: tuple[int, Event] | None = None
        for event, count in zip(events, self.match.miss_counts(events)):  # type: ignore[arg-type]  # the candidates are bot messages
            if best is None or count < best[0]:
                best = (count, event)
                if count == 1:  # every candidate missed, so none differs in fewer ways: the earliest with one wins
                    break
        return None if best is None else (best[1], self.mismatches(best[1]))  # type: ignore[arg-type]  # the candidates are bot messages

    def describe_event(self, event: BotMessage) -> str:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        name = f" {event.utter_name}" if event.utter_name else ""
        return f"bot message{name} {show(event.text, 50)}"

    evaluate = one_budget(EventCheck.evaluate)


@dataclass(frozen=True)
class BotDidNotUtter(Check):
    key = "bot_did_not_utter"

    match: MessageMatch = spec(whole="the message to match")

    @cached_property
    def label(self) -> str:
        return f"{self.key} {self.match.describe()}"

    @cached_property
    def _uttered(self) -> BotUttered:
        """The `bot_uttered` this check negates, built once per check rather than once per conversation."""
        return BotUttered(self.match)

    @one_budget
    def evaluate(self, conversation: Conversation) -> CheckResult:
        uttered = self._uttered
        messages = uttered.candidates(conversation)
        found = uttered.first_match(messages)
        if found is None:
            count = len(messages)
            return self.result(True, f"none of the {counted(count, 'bot message')} matched")
        return self.result(False, f"{uttered.describe_event(found)} at {at(found)} matched", [found.index])  # type: ignore[arg-type]  # a bot message
