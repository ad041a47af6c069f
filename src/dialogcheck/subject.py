"""What conversations are judged against, as two protocols: a subject and a standard.

A *subject* is what one conversation is judged against: a scenario's goals
(`scenario.model.Scenario`) or an SOP's steps (`sop.model.Sop`). A *standard*
is what a batch is judged against: one subject for every conversation, or a
set of scenarios each conversation takes its own from (`pairing.ScenarioSet`).
Judging, checking and the engines call these methods and never ask which kind
they were given.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Protocol, runtime_checkable

from .checks.base import CheckResult
from .checks.judged import JudgedResult, Judgement, JudgeRequest
from .events.model import Conversation
from .sop.model import StepSetResult

#: What the judge must decide for a subject, each keyed `criterion:N` or `sop:STEP_ID`.
JudgeItems = list[tuple[str, JudgeRequest]]
#: What a subject's checks gave one conversation: its assertions, its criteria, and its SOP steps (None without).
Checked = tuple[tuple[CheckResult, ...], tuple[JudgedResult, ...], "StepSetResult | None"]


@runtime_checkable
class Subject(Protocol):
    """A scenario's goals or an SOP's steps: what one conversation is judged against."""

    @property
    def name(self) -> str:
        """What results call it (`ConversationResult.subject`)."""
        ...

    @property
    def key(self) -> str:
        """What its row of per-scenario verdicts is keyed by: a scenario's slug, an SOP's id."""
        ...

    @property
    def framework_tools(self) -> frozenset[str]: ...

    @property
    def brief(self) -> str | None:
        """What the simulated user was told (a scenario's `simulation_context`); None for an SOP."""
        ...

    @property
    def notes(self) -> tuple[str, ...]:
        """What every result judged against it says besides its checks (a scenario without goals)."""
        ...

    def judge_items(self) -> JudgeItems:
        """Every item the judge must decide, keyed `criterion:N` and `sop:STEP_ID`."""
        ...

    def run_checks(self, conversation: Conversation, judged: Mapping[str, Judgement], no_judge: bool) -> Checked:
        """Every check on `conversation`, the LLM-judged ones taken from `judged` (keyed as `judge_items`)."""
        ...


@runtime_checkable
class Standard(Protocol):
    """What a batch is judged against: one subject, or a set of scenarios each conversation finds its own in."""

    @property
    def subjects(self) -> Sequence[Subject]:
        """Every subject a conversation may be judged against."""
        ...

    @property
    def several(self) -> bool:
        """Each conversation takes its own scenario (its results name it), not one subject for all."""
        ...

    def pairs(self, conversations: Iterable[Conversation]) -> Iterator[tuple[Subject, Conversation]]:
        """Each conversation with the subject it is judged against; `LoadError` at one that has none."""
        ...

    def own(self, scenario: str | None) -> Subject:
        """The subject a result was judged against, from the scenario it names (`ConversationResult.scenario`)."""
        ...
