"""A subject that is also the whole standard of its batch: every conversation is judged against it.

A scenario or an SOP given alone is both what one conversation is judged against (`subject.Subject`) and
what the batch is (`subject.Standard`); a `pairing.ScenarioSet` is the other kind of standard. The
standard's side of a lone subject is the same for both, so it is written once, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Self

from .events.model import Conversation


class LoneStandard:
    """The `Standard` side of a scenario or an SOP judged alone: it is its batch's only subject."""

    several = False

    @property
    def subjects(self) -> tuple[Self]:
        return (self,)

    def pairs(self, conversations: Iterable[Conversation]) -> Iterator[tuple[Self, Conversation]]:
        return ((self, conversation) for conversation in conversations)

    def own(self, scenario: str | None) -> Self:
        return self
