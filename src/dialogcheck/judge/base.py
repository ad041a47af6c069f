"""The judge seam: one async method that decides one criterion about one conversation.

The LLM judge implements `Judge`; tests use fakes. `judge_one` turns every
way a judge can break into an `error` judgement, so a broken judge is data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .._redact import mask
from ..checks.base import Outcome
from ..checks.judged import (
    NO_JUDGE_REASON,
    NO_JUDGE_SKIP,
    Judgement,
    JudgeRequest,
    unjudged,
)
from ..errors import DialogcheckError
from ..events.model import Conversation
from ..events.values import show

#: How an inconclusive verdict's detail begins, before the judge's reason.
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class JudgeVerdict:
    passed: bool
    reasoning: str
    raw: str | None = None
    usage: Any = None
    cached: bool = False
    #: The event indexes the judge relied on.
    evidence: tuple[int, ...] = ()
    #: Neither pass nor fail: the conversation does not show it (`passed` is then False and means nothing).
    inconclusive: bool = False


class JudgeError(DialogcheckError):
    """The judge could not give a verdict (unreachable, malformed answer, ...); keeps the raw answer."""

    def __init__(self, message: str, raw: str | None = None, usage: Any = None):
        super().__init__(message)
        self.raw = raw
        self.usage = usage


class Judge(Protocol):
    async def judge(self, conversation: Conversation, request: JudgeRequest) -> JudgeVerdict:
        """Decide one criterion; raise `JudgeError` when no verdict can be had."""
        ...


async def judge_one(judge: Judge, conversation: Conversation, request: JudgeRequest) -> Judgement:
    """The judge's decision, every failure an `error`; what the model wrote is kept with the credentials this process holds masked."""
    try:
        verdict = await judge.judge(conversation, request)
    except JudgeError as err:
        raw = None if err.raw is None else mask(err.raw)
        shown = f"; raw answer: {show(raw, 500)}" if raw is not None else ""
        return Judgement(Outcome.ERROR, mask(f"judge error: {err}{shown}"), err.usage, raw=raw)
    except Exception as err:  # noqa: BLE001 - a broken judge is data, never a crash
        return Judgement(Outcome.ERROR, mask(f"judge crashed: {type(err).__name__}: {err}"), exception=err)
    reasoning = mask(verdict.reasoning.strip()) or "(the judge gave no reasoning)"
    raw = None if verdict.raw is None else mask(verdict.raw)
    if verdict.inconclusive:
        return Judgement(Outcome.ERROR, f"{INCONCLUSIVE}: {reasoning}", verdict.usage, verdict.cached, raw, evidence=verdict.evidence, inconclusive=True)
    outcome = Outcome.PASS if verdict.passed else Outcome.FAIL
    return Judgement(outcome, reasoning, verdict.usage, verdict.cached, raw, evidence=verdict.evidence)


def uncalibrated(judgement: Judgement, reason: str) -> Judgement:
    """A judgement that may not decide (`--require-calibration`): `error`, saying why and what the judge said.

    An error, never a skip: nothing decided the check, so a batch with it cannot pass (exit 3 when nothing failed).
    """
    said = "inconclusive" if judgement.inconclusive else judgement.outcome.value
    return Judgement(
        Outcome.ERROR, f"uncalibrated ({reason}); the judge said {said}: {judgement.detail}", judgement.usage, judgement.cached,
        judgement.raw, evidence=judgement.evidence, uncalibrated=True,
    )


__all__ = [
    "NO_JUDGE_REASON",
    "NO_JUDGE_SKIP",
    "Judge",
    "JudgeError",
    "JudgeRequest",
    "JudgeVerdict",
    "Judgement",
    "judge_one",
    "unjudged",
]
