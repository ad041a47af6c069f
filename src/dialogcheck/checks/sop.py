"""The SOP evaluators of `seeds/sop-evaluators.txt`, by their `type`."""

from __future__ import annotations

from .base import Check
from .sop_confirmation import ConfirmationRequested
from .sop_fields import FieldAssertion, ToolInputContains, ToolOutputContains
from .sop_judge import LlmJudge
from .sop_tools import NoToolCalled, ToolCalled, ToolSequence

#: Every SOP evaluator `type` and the class that evaluates it.
SOP_EVALUATORS: dict[str, type[Check]] = {
    cls.key: cls
    for cls in (
        ToolCalled,
        ToolSequence,
        ToolInputContains,
        ToolOutputContains,
        NoToolCalled,
        ConfirmationRequested,
        LlmJudge,
    )
}

__all__ = [
    "SOP_EVALUATORS",
    "ConfirmationRequested",
    "FieldAssertion",
    "LlmJudge",
    "NoToolCalled",
    "ToolCalled",
    "ToolInputContains",
    "ToolOutputContains",
    "ToolSequence",
]
