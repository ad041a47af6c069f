"""A scenario: the simulated user's brief plus the goals a conversation is judged by."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..checks import Check
from ..checks.judged import Criterion, Judgement, JudgeRequest, unjudged
from ..checks.running import run_check
from ..environment.model import Environment
from ..events.model import FRAMEWORK_TOOLS, Conversation
from ..lone import LoneStandard
from ..sop.model import StepSet, StepSetResult

SCENARIO_TYPES = ("happy_path", "sad_path", "edge_case", "ambiguity", "out_of_scope", "escalation", "adversarial")
DEFAULT_MAX_TURNS = 30
NO_GOALS = "the scenario has no goals: it passes with zero checks"


@dataclass(frozen=True)
class Goals:
    criteria: tuple[str, ...] = ()
    assertions: tuple[Check, ...] = ()
    sop: StepSet | None = None  # the steps of `goals.sop`, when given

    @property
    def empty(self) -> bool:
        return not (self.criteria or self.assertions or self.sop)


@dataclass(frozen=True)
class UserProfile:
    """The optional fields that say more about the simulated user than `simulation_context`, the brief, does."""

    persona: str | None = None
    known_info: str | None = None
    unknown_info: str | None = None
    user_instructions: str | None = None

    def given(self) -> dict[str, str]:
        """The fields the scenario set, by name: what the simulated user's prompt must show."""
        return {name: value for name, value in vars(self).items() if value is not None}


@dataclass(frozen=True)
class Scenario(LoneStandard):
    slug: str
    name: str
    simulation_context: str
    path: str = "<memory>"
    type: str | None = None
    initial_slots: Mapping[str, Any] = field(default_factory=dict)
    goals: Goals = field(default_factory=Goals)
    max_turns: int = DEFAULT_MAX_TURNS
    script: tuple[str, ...] | None = None
    tags: tuple[str, ...] = ()
    #: Who the simulated user is, what it may say when asked, what it does not know and how it behaves (extensions).
    user: UserProfile = field(default_factory=lambda: UserProfile())
    #: Persona traits (`scenario.traits.TRAITS`) the scenario runs under, one run each per repeat.
    personas: tuple[str, ...] = ()
    #: Tool names never counted as tool runs, as the project's eval/conftest.yml set them when it was loaded.
    framework_tools: frozenset[str] = field(default=FRAMEWORK_TOOLS, repr=False)
    #: The agent's world on each run (`environment:`, else the config's default), its own state or faults applied.
    environment: Environment | None = field(default=None, repr=False)

    # A subject (`subject.Subject`), and a standard of one subject (`subject.Standard`).

    @property
    def key(self) -> str:
        return self.slug

    @property
    def brief(self) -> str | None:
        return self.simulation_context

    @property
    def notes(self) -> tuple[str, ...]:
        return (NO_GOALS,) if self.goals.empty else ()

    def judge_items(self) -> list[tuple[str, JudgeRequest]]:
        tools = self.framework_tools
        items = [(f"criterion:{i}", JudgeRequest(c, framework_tools=tools, id=f"criterion:{i}")) for i, c in enumerate(self.goals.criteria)]
        if self.goals.sop is not None:
            items += self.goals.sop.judge_items(tools)
        return items

    def run_checks(
        self, conversation: Conversation, judged: Mapping[str, Judgement], no_judge: bool
    ) -> tuple[tuple[Any, ...], tuple[Any, ...], StepSetResult | None]:
        goals = self.goals
        conversation = with_replay(conversation, self)
        assertions = tuple([run_check(check, conversation) for check in goals.assertions])
        criteria = tuple([Criterion(text).judged(judged.get(f"criterion:{i}") or unjudged(no_judge)) for i, text in enumerate(goals.criteria)])
        return assertions, criteria, goals.sop.evaluate_keyed(conversation, judged, no_judge) if goals.sop is not None else None


def with_replay(conversation: Conversation, scenario: Scenario) -> Conversation:
    """`conversation`, its recorded state replayable by the scenario's environment when it was recorded without a way
    to replay (read back from a run's files) and the scenario's environment is the one that made it (the same
    digest: an environment file changed since would replay other rules, so the check errs instead)."""
    world, environment = conversation.world, scenario.environment
    if world is None or world.replay is not None or environment is None or not world.digest or environment.digest != world.digest:
        return conversation
    initial = world.initial_json
    return replace(conversation, world=replace(world, replay=lambda calls: environment.replay(initial, calls)))
