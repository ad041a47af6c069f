"""Faults: what goes wrong with a tool's answer (the kinds), and on which calls (`When`).

Each kind is a frozen dataclass whose fields are its file schema. A kind either answers in the tool's place
(`timeout`, `error`, `empty`: the call never reaches the tool, so the state is unchanged), or lets the tool
answer and then alters what the agent receives (`latency`, `malformed`, `corrupt`), or has the tool answer
from an older state (`stale`). What a kind records on the call's event is its `recorded()` mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from ..events.values import json_equal
from .paths import NotFound, StatePath, follow
from .tools import json_copy

KINDS: tuple[str, ...] = ("timeout", "error", "empty", "malformed", "corrupt", "stale", "latency")


class NotApplied(Exception):
    """A fault that fired but found nothing to alter (the path it corrupts is not in this result): said on the event."""


def _seconds(delay: float) -> str:
    return f"{delay:g} s"


@dataclass(frozen=True)
class Timeout:
    """The call gets no answer: after `delay` seconds it fails as a timed-out request does."""

    delay: float = 0.0
    kind: ClassVar[str] = "timeout"
    runs_tool: ClassVar[bool] = False
    alters: ClassVar[bool] = False

    def instead(self, tool: str) -> tuple[Any, bool]:
        return f"timeout: `{tool}` gave no answer within {_seconds(self.delay)}", True

    def recorded(self) -> dict[str, Any]:
        return {"delay": self.delay}


@dataclass(frozen=True)
class Latency:
    """The call is answered as usual, `delay` seconds late."""

    delay: float = 0.0
    kind: ClassVar[str] = "latency"
    runs_tool: ClassVar[bool] = True
    alters: ClassVar[bool] = False

    def alter(self, result: Any) -> Any:
        return result

    def recorded(self) -> dict[str, Any]:
        return {"delay": self.delay}


@dataclass(frozen=True)
class Error:
    """The service answers an error: `status` (an HTTP status) and `message`, the result the agent receives."""

    status: int = 500
    message: str = "internal server error"
    delay: ClassVar[float] = 0.0
    kind: ClassVar[str] = "error"
    runs_tool: ClassVar[bool] = False
    alters: ClassVar[bool] = False

    def instead(self, tool: str) -> tuple[Any, bool]:
        return self.message, True

    def recorded(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message}


#: The values an `empty` fault may answer.
EMPTY_VALUES: tuple[Any, ...] = (None, "", [], {})


@dataclass(frozen=True)
class Empty:
    """The service answers, with nothing in it: `value` is null (the default), "", [] or {}."""

    value: Any = None
    delay: ClassVar[float] = 0.0
    kind: ClassVar[str] = "empty"
    runs_tool: ClassVar[bool] = False
    alters: ClassVar[bool] = False

    def instead(self, tool: str) -> tuple[Any, bool]:
        return json_copy(self.value), False

    def recorded(self) -> dict[str, Any]:
        return {"value": json_copy(self.value)}


@dataclass(frozen=True)
class Malformed:
    """The tool runs, and the agent receives broken JSON: `text`, else the result's JSON text cut in half."""

    text: str | None = None
    delay: ClassVar[float] = 0.0
    kind: ClassVar[str] = "malformed"
    runs_tool: ClassVar[bool] = True
    alters: ClassVar[bool] = True

    def alter(self, result: Any) -> Any:
        if self.text is not None:
            return self.text
        whole = orjson.dumps(result).decode()
        return whole[: len(whole) // 2]

    def recorded(self) -> dict[str, Any]:
        return {} if self.text is None else {"text": self.text}


@dataclass(frozen=True)
class Corrupt:
    """The tool runs, and one field of its result is wrong: set to `value`, deleted, or a boolean flipped."""

    path: StatePath
    action: str  # "set", "delete" or "flip"
    value: Any = None
    delay: ClassVar[float] = 0.0
    kind: ClassVar[str] = "corrupt"
    runs_tool: ClassVar[bool] = True
    alters: ClassVar[bool] = True

    def alter(self, result: Any) -> Any:
        result = json_copy(result)
        keys = self.path.keys({})
        try:
            parent = follow(result, keys[:-1])
            current = follow(parent, keys[-1:])
        except NotFound:
            raise NotApplied(f"the result has no `{self.path.text}`") from None
        if self.action == "flip" and not isinstance(current, bool):
            raise NotApplied(f"`{self.path.text}` in the result is not true or false")
        step: Any = keys[-1] if isinstance(parent, dict) else int(keys[-1])
        if self.action == "delete":
            del parent[step]
        else:
            parent[step] = (not current) if self.action == "flip" else json_copy(self.value)
        return result

    def recorded(self) -> dict[str, Any]:
        done: dict[str, Any] = {"set": json_copy(self.value)} if self.action == "set" else {self.action: True}
        return {"path": self.path.text, **done}


@dataclass(frozen=True)
class Stale:
    """The tool answers from an older state: as it was `behind` writing calls ago, or (absent) when the run began.

    Its own writes are dropped: a stale replica is read from, never written to.
    """

    behind: int | None = None
    delay: ClassVar[float] = 0.0
    kind: ClassVar[str] = "stale"
    runs_tool: ClassVar[bool] = True
    alters: ClassVar[bool] = False

    def alter(self, result: Any) -> Any:
        return result

    def recorded(self) -> dict[str, Any]:
        return {} if self.behind is None else {"behind": self.behind}


Effect = Timeout | Latency | Error | Empty | Malformed | Corrupt | Stale


@dataclass(frozen=True)
class When:
    """Which calls of the tool a fault may fire on; every condition given must hold (none given: every call).

    `on_call` counts the tool's calls in the run from 1, those whose arguments fit its schema; `match` holds
    when each listed argument equals its value (the JSON equality of docs/concepts.md); `rate` is the chance a call that meets the
    others is hit, drawn from the run's seed.
    """

    on_call: int | None = None
    match: dict[str, Any] = field(default_factory=dict)
    rate: float | None = None

    def eligible(self, call_number: int, arguments: Mapping[str, Any]) -> bool:
        if self.on_call is not None and call_number != self.on_call:
            return False
        return all(name in arguments and json_equal(arguments[name], value) for name, value in self.match.items())


@dataclass(frozen=True)
class Fault:
    """One item of `faults`: its place in the list (from 1), the tool it hits, when, and what happens."""

    index: int
    tool: str
    when: When
    effect: Effect

    def recorded(self) -> dict[str, Any]:
        """`metadata.fault` of a call it hit: which fault it is, its kind, and the kind's own fields."""
        return {"kind": self.effect.kind, "index": self.index, **self.effect.recorded()}


__all__ = ["EMPTY_VALUES", "KINDS", "Corrupt", "Effect", "Empty", "Error", "Fault", "Latency", "Malformed", "NotApplied", "Stale", "Timeout", "When"]
