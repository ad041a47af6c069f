"""What LLM-decided checks (criteria, `llm_judge` steps) ask and get back, as plain data.

Checks stay pure and synchronous: the engine asks the judge first (async,
concurrently) and hands each check its `Judgement`. Without one, a judged
check is `error` (no judge configured) or `skip` (--no-judge): never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..events.model import FRAMEWORK_TOOLS
from .base import Outcome

NO_JUDGE_REASON = (
    "no judge configured: set `evaluation.llm` in eval/conftest.yml, or pass --no-judge to skip LLM-judged checks"
)
NO_JUDGE_SKIP = "not judged: --no-judge skips LLM-judged checks"


@dataclass(frozen=True)
class JudgeRequest:
    criterion: str
    rubric: str | None = None
    model: str | None = None
    #: The tools the ledger leaves out as framework tools: the subject's `framework_tools` setting.
    framework_tools: frozenset[str] = field(default=FRAMEWORK_TOOLS, repr=False)


@dataclass(frozen=True)
class Judgement:
    """The judge's decision on one request: pass/fail with reasoning, or error with what went wrong."""

    outcome: Outcome
    detail: str
    #: Token counts and cost (a `dialogcheck.llm.Usage`), when an LLM answered.
    usage: Any = None
    cached: bool = False
    raw: str | None = None


def unjudged(no_judge: bool) -> Judgement:
    """The judgement of a check nobody judged: skipped on request, else an error that says why."""
    return Judgement(Outcome.SKIP, NO_JUDGE_SKIP) if no_judge else Judgement(Outcome.ERROR, NO_JUDGE_REASON)
