"""The judge seam: how LLM-decided checks (criteria, `llm_judge`) get a verdict."""

from .base import Judge, JudgeError, JudgeRequest, JudgeVerdict

__all__ = ["Judge", "JudgeError", "JudgeRequest", "JudgeVerdict"]
