"""One-method seam between checks and whatever decides a natural-language criterion.

The LLM layer implements `Judge`; tests use a fake. Without a judge,
criteria and `llm_judge` steps come out `error` (or `skip` with --no-judge),
never a silent pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..events.model import Conversation


@dataclass(frozen=True)
class JudgeRequest:
    criterion: str
    rubric: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class JudgeVerdict:
    passed: bool
    reasoning: str
    raw: str | None = None


class JudgeError(Exception):
    """The judge could not give a verdict (unreachable, malformed answer, ...)."""

    def __init__(self, message: str, raw: str | None = None):
        super().__init__(message)
        self.raw = raw


class Judge(Protocol):
    def judge(self, conversation: Conversation, request: JudgeRequest) -> JudgeVerdict:
        """Decide one criterion about one conversation; raise `JudgeError` when it cannot."""
        ...


NO_JUDGE_REASON = (
    "no judge configured: set `evaluation.llm` in eval/conftest.yml, or pass --no-judge to skip LLM-judged checks"
)
