"""An environment as its file defines it: the starting state, the tools and the faults; `start` makes one run's.

Frozen, and the state is held as JSON bytes, so no run can change what the next one starts from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..events.model import ReplayRefused
from ..events.values import show
from .faults import Fault
from .run import RunEnvironment
from .tools import Tool


@dataclass(frozen=True)
class Environment:
    """`environment: {state, tools, faults}` of `eval/environments/NAME.yml`, read and checked."""

    name: str
    path: str
    tools: tuple[Tool, ...]
    faults: tuple[Fault, ...]
    state_json: bytes
    #: The sha256 of the file's bytes and its starting state, which a resumed batch must find unchanged ("": not known).
    digest: str = ""
    #: Its faults are the scenario's own (`environment.faults` of a scenario file): faults the scenario tests the
    #: agent on, not the environment's own outages (a blame tells the two apart).
    faults_tested: bool = False

    @property
    def tested_fault_tools(self) -> frozenset[str]:
        """The tools whose faults the scenario itself injects: a fault of one is the agent's to handle."""
        return frozenset(fault.tool for fault in self.faults) if self.faults_tested else frozenset()

    @property
    def state(self) -> dict[str, Any]:
        """The starting state (a fresh copy each time)."""
        return orjson.loads(self.state_json)

    def start(self, seed: int, *, faults: bool = True, sleep: Callable[[float], None] = time.sleep) -> RunEnvironment:
        """One run's environment: its own copy of the state, and the fault schedule of `seed` (`run_seed`);
        `faults=False` switches the schedule off. Delays go through `sleep`."""
        return RunEnvironment(self.tools, self.faults, self.state_json, seed, faults_on=faults, sleep=sleep, name=self.name)

    def replay(self, initial_json: bytes, calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The state `calls` (`{tool, arguments}`, in order) leave on a fresh copy of `initial_json`, the faults
        off: tau-bench's grading rule, what `World.replay` is (`state_matches_replay`).

        A call answered with an error raises `ReplayRefused` with its place and the reason: an expected call that
        cannot be made on the starting state is a mistake in the scenario, and must not pass as a no-op.
        """
        run = RunEnvironment(self.tools, self.faults, initial_json, 0, faults_on=False)
        for number, call in enumerate(calls, 1):
            tool = call.get("tool")
            answer = run.call(tool, call.get("arguments", {}))  # type: ignore[arg-type]  # a recorded call's arguments: a JSON object
            if answer["is_error"]:
                result = answer["result"]
                raise ReplayRefused(number, str(tool), result if isinstance(result, str) else show(result))
        return run.state


__all__ = ["Environment"]
