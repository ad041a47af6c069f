"""Agent message checks: `bot_uttered` and `bot_did_not_utter`.

One single bot message must satisfy every field set; `bot_did_not_utter`
passes exactly when the same `bot_uttered` would fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..events.model import BotMessage, Button, Conversation, Event
from ..events.values import show
from .base import Check, CheckResult, EventCheck, at
from .patterns import one_budget, search
from .schema import file_keys, spec

if TYPE_CHECKING:
    from .._fields import Fields
    from .load import Context


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

    @classmethod
    def validate(cls, values: Mapping[str, Any], fields: Fields, context: Context) -> None:
        keys = file_keys(cls)
        if not any(fields.has(key) for key in keys):
            listed = ", ".join(f"`{key}`" for key in keys)
            fields.problems.add(f"{fields.what} must set at least one of {listed}", fields.node.pos)

    def matches(self, message: BotMessage) -> bool:
        if self.utter_name is not None and message.utter_name != self.utter_name:
            return False
        if self.buttons is not None and buttons_in_order(self.buttons, message.buttons) < len(self.buttons):
            return False
        return self.text_matches is None or search(self.text_matches, message.text)

    def mismatches(self, message: BotMessage) -> list[str]:
        miss = []
        if self.utter_name is not None and message.utter_name != self.utter_name:
            miss.append(f"utter_name was {show(message.utter_name)}, expected {show(self.utter_name)}")
        if self.text_matches is not None and not search(self.text_matches, message.text):
            miss.append(f"text {show(message.text, 60)} does not match /{self.text_matches}/")
        if self.buttons is not None:
            found = buttons_in_order(self.buttons, message.buttons)
            if found < len(self.buttons):
                have = ", ".join(repr(b.title) for b in message.buttons) or "none"
                miss.append(f"buttons lacked {self.buttons[found]} in order (it had {have})")
        return miss

    def miss_count(self, message: BotMessage) -> int:
        """`len(self.mismatches(message))` without the text: every bot message is ranked on a failure."""
        count = self.utter_name is not None and message.utter_name != self.utter_name
        count += self.text_matches is not None and not search(self.text_matches, message.text)
        count += self.buttons is not None and buttons_in_order(self.buttons, message.buttons) < len(self.buttons)
        return count

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

    def mismatches(self, event: BotMessage) -> list[str]:  # type: ignore[override]
        return self.match.mismatches(event)

    def matches(self, event: BotMessage) -> bool:  # type: ignore[override]
        return self.match.matches(event)

    def miss_count(self, event: BotMessage) -> int:  # type: ignore[override]
        return self.match.miss_count(event)

    def describe_event(self, event: BotMessage) -> str:  # type: ignore[override]
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
            return self.result(True, f"none of the {count} bot message{'s' if count != 1 else ''} matched")
        return self.result(False, f"{uttered.describe_event(found)} at {at(found)} matched", [found.index])
