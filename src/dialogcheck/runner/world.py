"""One run's environment, from its start to what the run's record says of it.

`RunWorld.start` gives the run its own state and fault schedule (`Environment.start`, the run's seed), serves it
at its own loopback addresses when the batch serves environments, and hands the agent its view
(`AgentEnvironment`). Once the conversation is over, `record` puts the calls the environment answered into
the run's record (`simulate.world.merge_calls`) with the state it began and ended with (`World`), and what
the environment did (`EnvironmentInfo`, written in `run_N.json`).
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
from ..simulate.world import Merged, merge_calls


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

    def record(self, simulated: SimulatedConversation, source: str) -> tuple[Conversation, EnvironmentInfo]:
        """The run's record (the agent's events with the environment's calls in them, and the state before and
        after) and what the environment did on the run, as `run_N.json` keeps it."""
        simulated.take_calls(self.run)  # those of a turn cut short too
        tools = {tool.name for tool in self.environment.tools}
        merged = merge_calls(simulated.typed_events, simulated.recorded, simulated.calls, tools)
        initial, environment = self.run.initial_json, self.environment

        def replay(calls: Any) -> Any:
            return environment.replay(initial, calls)

        world = World(environment.name, initial, self.run.state_json(), replay, environment.digest)
        record = replace(Conversation(tuple(merged.events), source, simulated.conversation_id, tuple(merged.recorded)), world=world)
        return record, self._info(merged)

    def _info(self, merged: Merged) -> EnvironmentInfo:
        answered = self.run.events
        faults = tuple(
            FaultMet(str(fault.get("kind")), call["tool_name"], int(fault.get("index") or 0), event)
            for call, event in zip(answered, merged.calls)
            if isinstance(fault := call["metadata"].get("fault"), dict)
        )
        return EnvironmentInfo(
            self.environment.name, self.seed, self.faults_on, len(answered), faults, merged.unanswered, merged.unreported,
            self.run.initial_state, self.run.state, self.environment.digest,
        )


__all__ = ["RunWorld", "Server"]
