"""SOP `llm_judge`: a natural-language criterion decided by a judge.

The check itself stays pure: the engine asks the judge beforehand and hands
the step its `Judgement`. Without one it reports `error` with the reason
(or `skip` under --no-judge), never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .._shown import clip
from .judged import NO_JUDGE_SKIP, JudgedCheck, JudgeRequest


@dataclass(frozen=True)
class LlmJudge(JudgedCheck):
    """One criterion, with an optional rubric and judge model, sent to the judge."""

    key = "llm_judge"

    criterion: str
    rubric: str | None = None
    model: str | None = None

    @cached_property
    def label(self) -> str:
        return f"llm_judge: {clip(self.criterion, 60)}"

    def request(self) -> JudgeRequest:
        return JudgeRequest(self.criterion, self.rubric, self.model)


__all__ = ["NO_JUDGE_SKIP", "LlmJudge"]
