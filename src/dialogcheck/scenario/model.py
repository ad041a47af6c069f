"""A scenario: the simulated user's brief plus the goals a conversation is judged by."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..checks import Check
from ..environment.model import Environment
from ..events.model import FRAMEWORK_TOOLS

SCENARIO_TYPES = ("happy_path", "sad_path", "edge_case", "ambiguity", "out_of_scope", "escalation", "adversarial")
DEFAULT_MAX_TURNS = 30


@dataclass(frozen=True)
class Goals:
    criteria: tuple[str, ...] = ()
    assertions: tuple[Check, ...] = ()
    sop: Any = None  # an SOP step set, when `goals.sop` is given

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
class Scenario:
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
