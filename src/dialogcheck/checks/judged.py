"""What LLM-decided checks (criteria, `llm_judge` steps) ask and get back, as plain data.

Checks stay pure and synchronous: the engine asks the judge first (async,
concurrently) and hands each check its `Judgement`. Without one, a judged
check is `error` (no judge configured) or `skip` (--no-judge): never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..events.model import FRAMEWORK_TOOLS, Conversation
from .base import Check, CheckResult, Outcome

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
    #: The id the judge's answer must name (`criterion:N`, `sop:STEP_ID`): answers are matched by it.
    id: str = "criterion"
    #: Which sample of the question this is, when the judge is asked several times (`evaluation.samples`).
    sample: int = 0


@dataclass(frozen=True)
class Judgement:
    """The judge's decision on one request: pass/fail with reasoning, or error with what went wrong."""

    outcome: Outcome
    detail: str
    #: Token counts and cost (a `dialogcheck.llm.Usage`), when an LLM answered.
    usage: Any = None
    cached: bool = False
    raw: str | None = None
    #: The exception of a judge that crashed (not one that answered badly), kept for its traceback.
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    #: The event indexes the judge cited for its verdict.
    evidence: tuple[int, ...] = ()
    #: The judge answered that the conversation shows it neither way: `error`, never a pass.
    inconclusive: bool = False
    #: Samples that disagreed: how many said each verdict (`unstable`); empty when they agreed, or one was asked.
    split: tuple[tuple[str, int], ...] = ()
    #: The judge has no calibration good enough (`--require-calibration`): `error`, never deciding.
    uncalibrated: bool = False


class JudgedResult(CheckResult, frozen=True):
    """What the judge decided about a criterion or an `llm_judge` step: a check result, with the tokens it took.

    `inconclusive` is a property of the result, not an outcome of its own: it is an `error` for every count
    and exit code, and the views name it beside the judge's reason.
    """

    usage: Any = None
    raw: str | None = None
    inconclusive: bool = False
    #: How the samples split when they disagreed (`unstable`), verdict by verdict.
    split: tuple[tuple[str, int], ...] = ()
    uncalibrated: bool = False
    #: Every answer that decided it came from the answer cache, not from the model in this run.
    cached: bool = False


class JudgedCheck(Check):
    """A check the judge decides: the engine asks the judge first and hands the check its `Judgement`."""

    def request(self) -> JudgeRequest:
        raise NotImplementedError

    def evaluate(self, conversation: Conversation) -> CheckResult:
        return self.judged(unjudged(no_judge=False))

    def judged(self, judgement: Judgement) -> JudgedResult:
        """The result from what the judge decided (or why it could not)."""
        return JudgedResult(
            self, judgement.outcome, judgement.detail, judgement.evidence, judgement.exception, usage=judgement.usage,
            raw=judgement.raw, inconclusive=judgement.inconclusive, split=judgement.split, uncalibrated=judgement.uncalibrated,
            cached=judgement.cached,
        )


@dataclass(frozen=True)
class Criterion(JudgedCheck):
    """A scenario's plain-language criterion (`goals.criteria`), decided on its own."""

    key = "criterion"

    text: str

    @cached_property
    def label(self) -> str:
        return f"criterion {self.text!r}"

    def request(self) -> JudgeRequest:
        return JudgeRequest(self.text)


#: The judgements of a check nobody judged (frozen, so one of each serves every conversation).
_SKIPPED = Judgement(Outcome.SKIP, NO_JUDGE_SKIP)
_NOT_CONFIGURED = Judgement(Outcome.ERROR, NO_JUDGE_REASON)


def unjudged(no_judge: bool) -> Judgement:
    """The judgement of a check nobody judged: skipped on request, else an error that says why."""
    return _SKIPPED if no_judge else _NOT_CONFIGURED
