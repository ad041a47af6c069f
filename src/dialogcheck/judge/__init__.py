"""Judging natural-language criteria: the judge seam, the LLM judge, the ledger it reads."""

from .base import Judge, JudgeError, Judgement, JudgeRequest, JudgeVerdict, judge_one

__all__ = ["Judge", "JudgeError", "JudgeRequest", "JudgeVerdict", "Judgement", "judge_one"]
