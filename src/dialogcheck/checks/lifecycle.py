"""Skill and ordered-block checks: match one lifecycle event of one skill or block.

Ten keys, two shapes. An ordered-block event never satisfies a skill check
and the other way around, because each check reads only its own event type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, cast

from ..events.model import BlockEvent, Conversation, SkillEvent
from .base import EventCheck
from .compared import Compared
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
class SkillCheck(EventCheck[SkillEvent]):
    skill_id: str
    step_id: str | None = spec(None, refuse=_step_id_taken)

    compared = (Compared("skill_id", "skill_id"), Compared("step_id", "step_id"))
    takes_step_id: ClassVar[bool] = True

    @cached_property
    def label(self) -> str:
        step = f" step {self.step_id}" if self.step_id is not None else ""
        return f"{self.key} {self.skill_id}{step}"

    def candidates(self, conversation: Conversation) -> Sequence[SkillEvent]:
        return cast("Sequence[SkillEvent]", conversation.of_type(self.key))  # the events of the check's own type

    def same_subject(self, event: SkillEvent) -> bool:
        return event.skill_id == self.skill_id

    def describe_event(self, event: SkillEvent) -> str:
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
class BlockCheck(EventCheck[BlockEvent]):
    skill_id: str
    block_id: str
    step_id: str | None = spec(None, refuse=_step_id_taken)

    compared = (Compared("skill_id", "skill_id"), Compared("block_id", "block_id"), Compared("step_id", "step_id"))
    takes_step_id: ClassVar[bool] = True

    @cached_property
    def label(self) -> str:
        step = f" step {self.step_id}" if self.step_id is not None else ""
        return f"{self.key} {self.skill_id}/{self.block_id}{step}"

    def candidates(self, conversation: Conversation) -> Sequence[BlockEvent]:
        return cast("Sequence[BlockEvent]", conversation.of_type(self.key))  # the events of the check's own type

    def same_subject(self, event: BlockEvent) -> bool:
        return event.skill_id == self.skill_id and event.block_id == self.block_id

    def describe_event(self, event: BlockEvent) -> str:
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
