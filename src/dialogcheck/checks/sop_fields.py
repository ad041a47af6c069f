"""SOP field evaluators: `tool_input_contains` and `tool_output_contains`.

Both look for one call of a tool whose arguments (or result) satisfy every
assertion. Paths, JSON-string results and the type rules of the ops are
pinned in SPEC sections 3 and 10 ("SOP ops"); they live here once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import orjson

from ..events.model import Conversation, ToolRun
from ..events.values import is_number, json_equal, show
from .base import Check, CheckResult, at, framework_tools_field
from .patterns import one_budget, search
from .sop_tools import SHOWN_CALLS, calls_of, describe_log, slug_name

INPUT_OPS = ("exists", "equals", "matches", "gt", "lt")
OUTPUT_OPS = ("exists", "equals", "contains", "not_in")

#: The fields each op takes besides `op` (file names, as the seed writes them).
OP_FIELDS: dict[str, tuple[str, ...]] = {
    "exists": (),
    "equals": ("value",),
    "matches": ("pattern",),
    "gt": ("value",),
    "lt": ("value",),
    "contains": ("value",),
    "not_in": ("values",),
}

WHOLE = "$"


def parse_result(value: Any) -> Any:
    """A result string holding a JSON object or array, parsed; anything else as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
        if isinstance(parsed, (dict, list)):
            return parsed
    return value


def _step(value: Any, key: str) -> tuple[bool, Any]:
    if isinstance(value, (dict, Mapping)):  # dict first: the Mapping ABC check is a Python-level hook
        return (True, value[key]) if key in value else (False, None)
    if isinstance(value, (list, tuple)) and key.isascii() and key.isdigit():
        index = int(key)
        return (True, value[index]) if index < len(value) else (False, None)
    return False, None


def resolve_path(value: Any, path: str) -> tuple[bool, Any]:
    """`(found, value)` at `path`: `$` is everything, a literal key wins over a dotted path."""
    if path == WHOLE:
        return True, value
    found, inner = _step(value, path)
    if found:
        return True, inner
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        found, inner = _step(value, ".".join(parts[:cut]))
        if found:
            found, inner = resolve_path(inner, ".".join(parts[cut:]))
            if found:
                return True, inner
    return False, None


@dataclass(frozen=True)
class FieldAssertion:
    """One `path: {op, ...}` entry. Only the field its op takes is set."""

    path: str
    op: str
    value: Any = None
    values: tuple[Any, ...] = ()
    pattern: str | None = None

    def describe(self) -> str:
        return self._description

    @cached_property
    def _description(self) -> str:
        """Built once per assertion: every passing call lists them all."""
        argument = {
            "exists": "",
            "matches": f" /{self.pattern}/",
            "not_in": " [" + ", ".join(show(v) for v in self.values) + "]",
        }.get(self.op, f" {show(self.value)}")
        return f"{self.path} {self.op}{argument}"

    def expectation(self) -> str:
        if self.op == "exists":
            return "it to be present"
        if self.op == "equals":
            return show(self.value)
        if self.op == "matches":
            return f"to match /{self.pattern}/"
        if self.op == "gt":
            return f"a number greater than {show(self.value)}"
        if self.op == "lt":
            return f"a number less than {show(self.value)}"
        if self.op == "contains":
            return f"to contain {show(self.value)}"
        return "none of " + ", ".join(show(v) for v in self.values)

    def holds(self, found: bool, actual: Any) -> bool:
        if not found:
            return False
        op = self.op
        if op == "exists":
            return True
        if op == "equals":
            return json_equal(actual, self.value)
        if op == "matches":
            return isinstance(actual, str) and search(self.pattern or "", actual)
        if op in ("gt", "lt"):
            if not is_number(actual):
                return False
            return actual > self.value if op == "gt" else actual < self.value
        if op == "contains":
            if isinstance(actual, str):
                return isinstance(self.value, str) and self.value in actual
            if isinstance(actual, (list, tuple)):
                return any(json_equal(item, self.value) for item in actual)
            return False
        if op == "not_in":
            return not any(json_equal(actual, v) for v in self.values)
        raise ValueError(f"unknown op {op!r}")

    def failure(self, root: Any, noun: str) -> str | None:
        """Why `root` fails this assertion, or None when it holds."""
        found, actual = resolve_path(root, self.path)
        if self.holds(found, actual):
            return None
        name = f"the whole {noun}" if self.path == WHOLE else self.path
        if not found:
            return f"{name} was missing, expected {self.expectation()}"
        kind = ""
        if self.op == "matches" and not isinstance(actual, str):
            kind = " (not a string)"
        elif self.op in ("gt", "lt") and not is_number(actual):
            kind = " (not a number)"
        elif self.op == "contains" and not isinstance(actual, (str, list, tuple)):
            kind = " (neither a string nor a list)"
        return f"{name} was {show(actual)}{kind}, expected {self.expectation()}"


@dataclass(frozen=True)
class _FieldsCheck(Check):
    """Passes when one call of the tool satisfies every assertion."""

    tool_slug: str
    assertions: tuple[FieldAssertion, ...]
    catalog_slug: str | None = None
    framework_tools: frozenset[str] = framework_tools_field()

    ops: ClassVar[tuple[str, ...]]
    noun: ClassVar[str]

    @cached_property
    def label(self) -> str:
        return f"{self.key} {self.tool_slug}"

    def subject(self, run: ToolRun) -> Any:
        raise NotImplementedError

    def failures(self, run: ToolRun) -> list[str]:
        root = self.subject(run)
        return [text for a in self.assertions if (text := a.failure(root, self.noun)) is not None]

    @one_budget
    def evaluate(self, conversation: Conversation) -> CheckResult:
        name = slug_name(self.tool_slug, self.catalog_slug)
        log = conversation.tool_log(self.framework_tools)
        calls = calls_of(log, self.tool_slug, self.catalog_slug)
        if not calls:
            return self.result(False, f"{name} was never called, so its {self.noun} cannot be checked; {describe_log(log)}")
        misses: list[tuple[ToolRun, list[str]]] = []
        for run in calls:
            failed = self.failures(run)
            if not failed:
                held = ", ".join(a.describe() for a in self.assertions)
                return self.result(True, f"{run.tool_name} at {at(run)}: {held}", (run.index,))
            misses.append((run, failed))
        return self.result(False, self._explain(name, misses), [run.index for run, _ in misses])

    def _explain(self, name: str, misses: Sequence[tuple[ToolRun, list[str]]]) -> str:
        count = f"{len(misses)} call{'s' if len(misses) != 1 else ''} looked at"
        shown = "; ".join(f"{run.tool_name} at {at(run)}: {', '.join(failed)}" for run, failed in misses[:SHOWN_CALLS])
        more = f"; and {len(misses) - SHOWN_CALLS} more" if len(misses) > SHOWN_CALLS else ""
        return f"no call of {name} satisfied every assertion ({count}): {shown}{more}"


@dataclass(frozen=True)
class ToolInputContains(_FieldsCheck):
    """Some call of the tool received arguments satisfying every assertion."""

    key = "tool_input_contains"
    ops = INPUT_OPS
    noun = "arguments"

    def subject(self, run: ToolRun) -> Any:
        return run.arguments


@dataclass(frozen=True)
class ToolOutputContains(_FieldsCheck):
    """Some call of the tool returned a result satisfying every assertion."""

    key = "tool_output_contains"
    ops = OUTPUT_OPS
    noun = "result"

    def subject(self, run: ToolRun) -> Any:
        return parse_result(run.result)


__all__ = [
    "INPUT_OPS",
    "OP_FIELDS",
    "OUTPUT_OPS",
    "FieldAssertion",
    "ToolInputContains",
    "ToolOutputContains",
    "parse_result",
    "resolve_path",
]
