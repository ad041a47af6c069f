"""SOP `llm_judge`: a natural-language criterion decided by a judge.

Deciding needs a judge, which a plain `evaluate(conversation)` does not
have: it reports `error` with the reason, never a pass. Callers that hold a
judge use `evaluate_with`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events.model import Conversation
from ..events.values import show
from ..judge.base import NO_JUDGE_REASON, Judge, JudgeError, JudgeRequest
from .base import Check, CheckResult, Outcome

NO_JUDGE_SKIP = "not judged: --no-judge skips LLM-judged checks"


@dataclass(frozen=True)
class LlmJudge(Check):
    """One criterion, with an optional rubric and judge model, sent to the judge."""

    key = "llm_judge"

    criterion: str
    rubric: str | None = None
    model: str | None = None

    @property
    def label(self) -> str:
        text = self.criterion if len(self.criterion) <= 60 else self.criterion[:59] + "…"
        return f"llm_judge: {text}"

    def request(self) -> JudgeRequest:
        return JudgeRequest(self.criterion, self.rubric, self.model)

    def evaluate(self, conversation: Conversation) -> CheckResult:
        return CheckResult(self, Outcome.ERROR, NO_JUDGE_REASON)

    def evaluate_with(self, conversation: Conversation, judge: Judge | None, no_judge: bool = False) -> CheckResult:
        """Ask `judge`; skip under --no-judge; any judge failure is `error` with what it said."""
        if no_judge:
            return CheckResult(self, Outcome.SKIP, NO_JUDGE_SKIP)
        if judge is None:
            return CheckResult(self, Outcome.ERROR, NO_JUDGE_REASON)
        try:
            verdict = judge.judge(conversation, self.request())
        except JudgeError as err:
            raw = f"; raw answer: {show(err.raw, 500)}" if err.raw is not None else ""
            return CheckResult(self, Outcome.ERROR, f"judge error: {err}{raw}")
        except Exception as err:  # a broken judge is data, never a crash
            return CheckResult(self, Outcome.ERROR, f"judge crashed: {type(err).__name__}: {err}")
        reasoning = verdict.reasoning.strip() or "(the judge gave no reasoning)"
        return self.result(verdict.passed, reasoning)


__all__ = ["NO_JUDGE_SKIP", "LlmJudge"]
