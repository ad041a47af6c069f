"""One run's environment: its own copy of the state, its fault schedule, and the record of every call it answered.

`call(name, arguments)` answers `{"result": ..., "is_error": bool}` the way the agent receives it, and records a
`tool_executed` event (docs/concepts.md, the conversation record) with `metadata.environment: true`, and `metadata.fault` on a call a fault
hit. Calls are answered one at a time (a lock), so an agent calling from several threads sees one order,
which is the order of the events. Delays go through the `sleep` it is given, so tests never wait.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import did_you_mean
from .bounds import MAX_ARGUMENT_BYTES, MAX_BEHIND, MAX_CALLS
from .faults import Fault, NotApplied, Stale
from .schedule import Schedule
from .tools import Tool, ToolError, json_copy

Answer = dict[str, Any]


def _arguments(arguments: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A call's arguments as the environment's own copy, or why they are refused (not a JSON object, too big)."""
    try:
        raw = orjson.dumps(arguments)
    except TypeError:
        return None, "invalid arguments: they must be a JSON object, got a value that is not JSON"
    if len(raw) > MAX_ARGUMENT_BYTES:
        return None, f"invalid arguments: they take more than {MAX_ARGUMENT_BYTES:,} bytes as JSON"
    if not isinstance(arguments, dict):
        kind = "null" if arguments is None else f"a {type(arguments).__name__}"
        return None, f"invalid arguments: they must be a JSON object, got {kind}"
    return orjson.loads(raw), None


@dataclass(frozen=True)
class AgentEnvironment:
    """What an agent is handed of its run's environment (a Python agent's `environment` keyword): the tools as it is
    shown them, `call(name, arguments)`, and the loopback addresses it is served at (None when it is not served)."""

    tools: list[dict[str, Any]]
    call: Callable[[str, Any], Answer] = field(repr=False)
    http: str | None = None
    mcp: str | None = None

    async def acall(self, name: str, arguments: Any) -> Answer:
        """`call` for an async agent: answered in a worker thread, so a `latency` or `timeout` fault's delay holds up
        only this conversation, never the event loop every run of the batch shares."""
        return await asyncio.to_thread(self.call, name, arguments)

    @property
    def addresses(self) -> dict[str, str]:
        """`{"http": URL, "mcp": URL}`, the addresses it is served at: the opening request's `environment`."""
        return {kind: url for kind, url in (("http", self.http), ("mcp", self.mcp)) if url is not None}


class RunEnvironment:
    """The environment of one run: `tools`, `call`, `events`, `initial_state` and `state`."""

    def __init__(
        self,
        tools: Sequence[Tool],
        faults: Sequence[Fault],
        state_json: bytes,
        seed: int,
        *,
        faults_on: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        name: str = "environment",
    ):
        #: The environment's name: the `mcp_server` of the calls it answers over MCP.
        self.name = name
        self._tools = {tool.name: tool for tool in tools}
        self._initial = state_json
        self._state: dict[str, Any] = orjson.loads(state_json)
        self._schedule = Schedule(faults, seed, faults_on)
        behind = [f.effect.behind for f in self._schedule.faults if isinstance(f.effect, Stale) and f.effect.behind is not None]
        self._keep = min(max(behind, default=0), MAX_BEHIND)  # older states a stale fault may answer from
        self._older: list[bytes] = []  # before each writing call, newest last
        self._sleep = sleep
        self._lock = threading.Lock()
        self._calls: dict[str, int] = {}
        self._events: list[dict[str, Any]] = []

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools as an LLM agent is shown them: name, description, parameters (JSON Schema)."""
        return [tool.shown() for tool in self._tools.values()]

    @property
    def events(self) -> list[dict[str, Any]]:
        """The `tool_executed` events of the calls answered so far, in order (copies)."""
        with self._lock:
            return json_copy(self._events)

    def events_since(self, count: int) -> list[dict[str, Any]]:
        """The events of the calls answered after the first `count` (copies), for a caller that reads them as they come."""
        with self._lock:
            return json_copy(self._events[count:])

    @property
    def initial_json(self) -> bytes:
        """The state the run began with, as JSON bytes."""
        return self._initial

    def state_json(self) -> bytes:
        """The state as the calls so far left it, as JSON bytes."""
        with self._lock:
            return orjson.dumps(self._state)

    def for_agent(self, addresses: dict[str, str] | None = None) -> AgentEnvironment:
        """The agent's view of this environment: its tools and `call`, and the addresses it is served at, if any."""
        addresses = addresses or {}
        return AgentEnvironment(self.tools, self.call, addresses.get("http"), addresses.get("mcp"))

    @property
    def initial_state(self) -> dict[str, Any]:
        """The state the run began with (a fresh copy each time)."""
        return orjson.loads(self._initial)

    @property
    def state(self) -> dict[str, Any]:
        """The state as the calls so far left it (a copy: changing it changes nothing)."""
        with self._lock:
            return json_copy(self._state)

    def call(self, name: str, arguments: Any, *, over_mcp: bool = False) -> Answer:
        """Answer one call as the agent receives it, and record it; a call that came over MCP (`over_mcp`) is
        recorded with `source: mcp` and the environment's name as its `mcp_server`, as an MCP tool's run is."""
        with self._lock:
            shown_name = name if isinstance(name, str) else orjson.dumps(name, default=repr).decode()
            given, refused = _arguments(arguments)
            recorded_arguments = given if given is not None else {}
            try:
                if refused is not None:
                    self._tool(shown_name)  # an unknown tool is said before its arguments
                    raise ToolError(refused)
                result, is_error, fault_meta = self._answer(shown_name, given)  # type: ignore[arg-type]  # None only with `refused`
            except ToolError as err:
                result, is_error, fault_meta = str(err), True, None
            self._record(shown_name, recorded_arguments, result, is_error, fault_meta, over_mcp)
            return {"result": json_copy(result), "is_error": is_error}

    def _tool(self, name: str) -> Tool:
        if len(self._events) >= MAX_CALLS:
            raise ToolError(f"this run's environment answers at most {MAX_CALLS:,} calls")
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            raise ToolError(f"unknown tool `{name}`{did_you_mean(name, self._tools)}: the tools are {known}")
        return tool

    def _answer(self, name: str, given: dict[str, Any]) -> tuple[Any, bool, dict[str, Any] | None]:
        tool = self._tool(name)
        problem = tool.validator.problem(given)
        if problem is not None:
            raise ToolError(problem)
        number = self._calls[name] = self._calls.get(name, 0) + 1
        fault = self._schedule.fault_for(name, number, given)
        if fault is None:
            return self._run(tool, given), False, None
        return self._faulted(tool, given, fault)

    def _faulted(self, tool: Tool, arguments: dict[str, Any], fault: Fault) -> tuple[Any, bool, dict[str, Any]]:
        effect, meta = fault.effect, fault.recorded()
        if effect.delay:
            self._sleep(effect.delay)
        if not effect.runs_tool:
            result, is_error = effect.instead(tool.name)  # type: ignore[union-attr]  # an effect that runs no tool answers instead
            return result, is_error, meta
        try:
            result = self._run(tool, arguments, stale=effect) if isinstance(effect, Stale) else self._run(tool, arguments)
        except ToolError as err:
            return str(err), True, ({**meta, "applied": False, "why": "the tool answered an error"} if effect.alters else meta)
        try:
            return effect.alter(result), False, meta  # type: ignore[union-attr]  # an effect that runs the tool alters its answer
        except NotApplied as err:
            return result, False, {**meta, "applied": False, "why": str(err)}

    def _run(self, tool: Tool, arguments: dict[str, Any], stale: Stale | None = None) -> Any:
        """The tool's answer; a writing tool works on a copy, kept when it answers without error."""
        behaviour = tool.behaviour
        if stale is not None:
            older = self._older[-stale.behind] if stale.behind is not None and stale.behind <= len(self._older) else self._initial
            return behaviour.answer(orjson.loads(older), arguments)  # what it writes is dropped
        if not behaviour.writes:
            return behaviour.answer(self._state, arguments)
        work = json_copy(self._state)
        result = behaviour.answer(work, arguments)
        try:
            kept = orjson.dumps(work)
        except TypeError:
            raise ToolError("the tool left the state holding a value that is not JSON: the change is not kept") from None
        if self._keep:
            self._older.append(orjson.dumps(self._state))
            del self._older[: -self._keep]
        self._state = orjson.loads(kept)
        return result

    def _record(self, name: str, arguments: dict[str, Any], result: Any, is_error: bool, fault: Mapping[str, Any] | None, over_mcp: bool) -> None:
        metadata: dict[str, Any] = {"environment": True}
        if fault is not None:
            metadata["fault"] = dict(fault)
        event: dict[str, Any] = {
            "event": "tool_executed",
            "tool_name": name,
            "source": "mcp" if over_mcp else "local",
            **({"mcp_server": self.name} if over_mcp else {}),
            "arguments": arguments,
            "result": json_copy(result),
            "is_error": is_error,
            "metadata": metadata,
        }
        if is_error and isinstance(result, str):
            event["error_message"] = result
        self._events.append(event)


__all__ = ["AgentEnvironment", "Answer", "RunEnvironment"]
