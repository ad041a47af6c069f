"""Skill and ordered-block checks: match one lifecycle event of one skill or block.

Ten keys, two shapes. An ordered-block event never satisfies a skill check
and the other way around, because each check reads only its own event type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from ..events.model import BlockEvent, Conversation, Event, SkillEvent
from .base import EventCheck, was
from .schema import spec

if TYPE_CHECKING:
    from .._fields import Fields
    from .load import Context


def _step_id_taken(cls: type[SkillCheck | BlockCheck], fields: Fields, context: Context) -> str | None:
    """`step_id` is refused by the checks that do not take it (`skill_activated`, `skill_completed`, `ordered_block_entered`)."""
    if cls.takes_step_id:
        return None
    family = cls.key.rsplit("_", 1)[0]
    takers = [c.key.rsplit("_", 1)[1] for c in LIFECYCLE_CHECKS if c.key.startswith(family + "_") and c.takes_step_id]
    return f"{fields.what} does not take `step_id`: only the {', '.join(takers[:-1])} and {takers[-1]} checks do"


@dataclass(frozen=True)
class SkillCheck(EventCheck):
    skill_id: str
    step_id: str | None = spec(None, refuse=_step_id_taken)

    takes_step_id: ClassVar[bool] = True

    @cached_property
    def label(self) -> str:
        step = f" step {self.step_id}" if self.step_id is not None else ""
        return f"{self.key} {self.skill_id}{step}"

    def candidates(self, conversation: Conversation) -> Sequence[Event]:
        return conversation.of_type(self.key)

    def same_subject(self, event: SkillEvent) -> bool:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        return event.skill_id == self.skill_id

    def matches(self, event: SkillEvent) -> bool:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        return event.skill_id == self.skill_id and (self.step_id is None or event.step_id == self.step_id)

    def mismatches(self, event: SkillEvent) -> list[str]:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        miss = []
        if event.skill_id != self.skill_id:
            miss.append(was("skill_id", event.skill_id, self.skill_id))
        if self.step_id is not None and event.step_id != self.step_id:
            miss.append(was("step_id", event.step_id, self.step_id))
        return miss

    def miss_count(self, event: SkillEvent) -> int:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        """`len(self.mismatches(event))` without the text: every candidate is ranked on a failure."""
        return (event.skill_id != self.skill_id) + (self.step_id is not None and event.step_id != self.step_id)

    def describe_event(self, event: SkillEvent) -> str:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        step = f" step {event.step_id}" if event.step_id is not None else ""
        return f"{event.type} {event.skill_id}{step}"


class SkillActivated(SkillCheck):
    key = "skill_activated"
    takes_step_id = False


class SkillCompleted(SkillCheck):
    key = "skill_completed"
    takes_step_id = False


class SkillCancelled(SkillCheck):
    key = "skill_cancelled"


class SkillInterrupted(SkillCheck):
    key = "skill_interrupted"


class SkillResumed(SkillCheck):
    key = "skill_resumed"


@dataclass(frozen=True)
class BlockCheck(EventCheck):
    skill_id: str
    block_id: str
    step_id: str | None = spec(None, refuse=_step_id_taken)

    takes_step_id: ClassVar[bool] = True

    @cached_property
    def label(self) -> str:
        step = f" step {self.step_id}" if self.step_id is not None else ""
        return f"{self.key} {self.skill_id}/{self.block_id}{step}"

    def candidates(self, conversation: Conversation) -> Sequence[Event]:
        return conversation.of_type(self.key)

    def same_subject(self, event: BlockEvent) -> bool:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        return event.skill_id == self.skill_id and event.block_id == self.block_id

    def matches(self, event: BlockEvent) -> bool:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        return self.same_subject(event) and (self.step_id is None or event.step_id == self.step_id)

    def mismatches(self, event: BlockEvent) -> list[str]:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        miss = []
        if event.skill_id != self.skill_id:
            miss.append(was("skill_id", event.skill_id, self.skill_id))
        if event.block_id != self.block_id:
            miss.append(was("block_id", event.block_id, self.block_id))
        if self.step_id is not None and event.step_id != self.step_id:
            miss.append(was("step_id", event.step_id, self.step_id))
        return miss

    def miss_count(self, event: BlockEvent) -> int:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        """`len(self.mismatches(event))` without the text: every candidate is ranked on a failure."""
        return (
            (event.skill_id != self.skill_id)
            + (event.block_id != self.block_id)
            + (self.step_id is not None and event.step_id != self.step_id)
        )

    def describe_event(self, event: BlockEvent) -> str:  # type: ignore[override]  # narrowed to the check's own event type: its `candidates` are only those
        step = f" step {event.step_id}" if event.step_id is not None else ""
        return f"{event.type} {event.skill_id}/{event.block_id}{step}"


class OrderedBlockEntered(BlockCheck):
    key = "ordered_block_entered"
    takes_step_id = False


class OrderedBlockCompleted(BlockCheck):
    key = "ordered_block_completed"


class OrderedBlockCancelled(BlockCheck):
    key = "ordered_block_cancelled"


class OrderedBlockInterrupted(BlockCheck):
    key = "ordered_block_interrupted"


class OrderedBlockResumed(BlockCheck):
    key = "ordered_block_resumed"


LIFECYCLE_CHECKS: tuple[type[SkillCheck] | type[BlockCheck], ...] = (
    SkillActivated,
    SkillCompleted,
    SkillCancelled,
    SkillInterrupted,
    SkillResumed,
    OrderedBlockEntered,
    OrderedBlockCompleted,
    OrderedBlockCancelled,
    OrderedBlockInterrupted,
    OrderedBlockResumed,
)
