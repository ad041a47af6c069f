"""Deterministic checks over a conversation record, one family a module."""

from __future__ import annotations

from .base import Check, CheckResult, EventCheck, Outcome
from .lifecycle import LIFECYCLE_CHECKS, BlockCheck, SkillCheck
from .memory import MemoryEntry, MemoryWasCleared, MemoryWasNotSet, MemoryWasSet
from .messages import BotDidNotUtter, BotUttered, ButtonSpec, MessageMatch
from .sequencing import Sequencing
from .sop import SOP_EVALUATORS
from .state import ExpectedCall, StateChanges, StateEquals, StateMatchesReplay, StateUnchanged
from .tools import ToolExecuted, ToolsWithinOneTurn

#: Every scenario assertion key (`goals.assertions`) and the class that evaluates it.
ASSERTIONS: dict[str, type[Check]] = {
    **{cls.key: cls for cls in LIFECYCLE_CHECKS},
    MemoryWasSet.key: MemoryWasSet,
    MemoryWasNotSet.key: MemoryWasNotSet,
    MemoryWasCleared.key: MemoryWasCleared,
    ToolExecuted.key: ToolExecuted,
    ToolsWithinOneTurn.key: ToolsWithinOneTurn,
    BotUttered.key: BotUttered,
    BotDidNotUtter.key: BotDidNotUtter,
    Sequencing.key: Sequencing,
    StateEquals.key: StateEquals,
    StateUnchanged.key: StateUnchanged,
    StateChanges.key: StateChanges,
    StateMatchesReplay.key: StateMatchesReplay,
}

__all__ = [
    "ASSERTIONS",
    "SOP_EVALUATORS",
    "BlockCheck",
    "BotDidNotUtter",
    "BotUttered",
    "ButtonSpec",
    "Check",
    "CheckResult",
    "EventCheck",
    "ExpectedCall",
    "MemoryEntry",
    "MemoryWasCleared",
    "MemoryWasNotSet",
    "MemoryWasSet",
    "MessageMatch",
    "Outcome",
    "Sequencing",
    "SkillCheck",
    "StateChanges",
    "StateEquals",
    "StateMatchesReplay",
    "StateUnchanged",
    "ToolExecuted",
    "ToolsWithinOneTurn",
]
