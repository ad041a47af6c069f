"""One run's environment, from its start to what the run's record says of it.

`RunWorld.start` gives the run its own state and fault schedule (`Environment.start`, the run's seed), serves it
at its own loopback addresses when the batch serves environments, and hands the agent its view
(`AgentEnvironment`). Once the conversation is over, `conversation` puts the calls the environment answered into
the run's record (`simulate.world.merge_calls`) with the state it began and ended with (`World`), and `info`
says what the environment did (`EnvironmentInfo`, written in `run_N.json`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..environment.model import Environment
from ..environment.run import AgentEnvironment, RunEnvironment
from ..environment.schedule import run_seed
from ..events.model import Conversation, World
from ..results.model import EnvironmentInfo, FaultMet
from ..simulate.loop import SimulatedConversation
from ..simulate.world import merge_calls


class Server(Protocol):
    """Where a batch serves its runs' environments (`environment.serve.EnvironmentServer`)."""

    def attach(self, run_id: str, run: RunEnvironment) -> dict[str, str]: ...

    def detach(self, run_id: str) -> None: ...


@dataclass
class RunWorld:
    """The environment of one run: the definition, the run's own copy, and the agent's view of it."""

    environment: Environment
    run: RunEnvironment
    seed: int
    faults_on: bool
    handle: AgentEnvironment
    run_id: str
    server: Server | None = None
    unanswered: tuple[int, ...] = ()
    unreported: tuple[int, ...] = ()

    @classmethod
    def start(
        cls, environment: Environment, run_id: str, *, batch_seed: int | None, scenario: str, repeat: int, persona: str | None,
        faults_on: bool, server: Server | None = None,
    ) -> RunWorld:
        """The run's environment, its faults drawn from the batch's seed and the run's place in the plan, served by
        `server` (when given) at addresses of its own."""
        seed = run_seed(batch_seed, scenario, repeat, persona)
        run = environment.start(seed, faults=faults_on)
        addresses = server.attach(run_id, run) if server is not None else {}
        return cls(environment, run, seed, faults_on, run.for_agent(addresses), run_id, server)

    def close(self) -> None:
        """Stop serving the run (its calls are over)."""
        if self.server is not None:
            self.server.detach(self.run_id)
            self.server = None

    def conversation(self, simulated: SimulatedConversation, source: str) -> Conversation:
        """The run's record: the agent's events with the environment's calls in them, and the state before and after."""
        simulated.take_calls(self.run)  # those of a turn cut short too
        tools = {tool.name for tool in self.environment.tools}
        merged = merge_calls(simulated.typed_events, simulated.recorded, simulated.calls, tools)
        self.unanswered, self.unreported = merged.unanswered, merged.unreported
        initial, environment = self.run.initial_json, self.environment

        def replay(calls: Any) -> Any:
            return environment.replay(initial, calls)

        world = World(environment.name, initial, self.run.state_json(), replay)
        return replace(
            Conversation(tuple(merged.events), source, simulated.conversation_id, tuple(merged.recorded)), world=world
        )

    def info(self, record: Conversation) -> EnvironmentInfo:
        """What the environment did on the run, as `run_N.json` keeps it: the faults it fired, at their events."""
        faults = tuple(
            FaultMet(str(fault.get("kind")), event.tool_name, int(fault.get("index") or 0), event.index)
            for event in record.tool_runs
            if event.metadata.get("environment") and isinstance(fault := event.metadata.get("fault"), dict)
        )
        return EnvironmentInfo(
            self.environment.name, self.seed, self.faults_on, len(self.run.events), faults, self.unanswered, self.unreported,
            self.run.initial_state, self.run.state,
        )


__all__ = ["RunWorld", "Server"]
