"""Agent message checks: `bot_uttered` and `bot_did_not_utter`.

One single bot message must satisfy every field set; `bot_did_not_utter`
passes exactly when the same `bot_uttered` would fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .._shown import counted
from ..events.model import BotMessage, Button, Conversation
from ..events.values import show
from .base import Check, CheckResult, EventCheck, at
from .compared import IN_ORDER, PATTERN, Compared
from .patterns import one_budget, prepared
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

    def __post_init__(self) -> None:
        if self.text_matches is not None:
            prepared(self.text_matches)  # compiled now: a pattern that does not compile fails where the check is made

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
class BotUttered(EventCheck[BotMessage]):
    key = "bot_uttered"
    event_noun = "bot message"
    compared = (
        Compared("match.utter_name", "utter_name"),
        Compared("match.text_matches", "text", PATTERN),
        Compared("match.buttons", "buttons", IN_ORDER),
    )

    match: MessageMatch = spec(whole="the message to match")

    @cached_property
    def label(self) -> str:
        return f"{self.key} {self.match.describe()}"

    def candidates(self, conversation: Conversation) -> Sequence[BotMessage]:
        return conversation.bot_messages

    def closest_miss(self, events: Sequence[BotMessage]) -> tuple[BotMessage, list[str]] | None:
        """As every event check ranks its candidates (every message is about the same subject), with the counts of
        `miss_counts`, all the texts searched at once. Its own loop: pairing each event with its count costs the
        other checks, which rank one or two candidates, more than it saves them."""
        best: tuple[int, BotMessage] | None = None
        for event, count in zip(events, self.miss_counts(events)):
            if best is None or count < best[0]:
                best = (count, event)
                if count == 1:  # every candidate missed, so none differs in fewer ways: the earliest with one wins
                    break
        return None if best is None else (best[1], self.mismatches(best[1]))

    def describe_event(self, event: BotMessage) -> str:
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
        return self.result(False, f"{uttered.describe_event(found)} at {at(found)} matched", [found.index])
