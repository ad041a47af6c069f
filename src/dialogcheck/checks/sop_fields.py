"""SOP field evaluators: `tool_input_contains` and `tool_output_contains`.

Both look for one call of a tool whose arguments (or result) satisfy every
assertion. Paths, JSON-string results and the type rules of the ops are
pinned in docs/sop-reference.md ("SOP ops"); they live here once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import orjson

from .._shown import counted
from ..events.model import Conversation, ToolRun
from ..events.values import is_number, json_equal, show
from .base import Check, CheckResult, at, framework_tools_field
from .patterns import one_budget, search
from .schema import spec
from .sop_tools import SHOWN_CALLS, calls_of, describe_log, slug_name

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


def _step(value: Any, key: str) -> tuple[str | int, Any] | None:
    """The key (a list's index as an `int`) and the value one step of a path reaches; None when it reaches nothing."""
    if isinstance(value, dict):  # a JSON object, as every recorded value is decoded
        return (key, value[key]) if key in value else None
    if isinstance(value, (list, tuple)) and key.isascii() and key.isdigit():
        index = int(key)
        return (index, value[index]) if index < len(value) else None
    return None


def locate(value: Any, path: str) -> tuple[tuple[str | int, ...], Any] | None:
    """The keys `path` takes into `value` and the value it reaches, or None when it reaches nothing: `$` is
    everything, and a literal key wins over a dotted path (`a.b` is the key `a.b` when there is one)."""
    if path == WHOLE:
        return (), value
    found = _step(value, path)
    if found is not None:
        return (found[0],), found[1]
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        found = _step(value, ".".join(parts[:cut]))
        if found is not None:
            inner = locate(found[1], ".".join(parts[cut:]))
            if inner is not None:
                return (found[0], *inner[0]), inner[1]
    return None


def resolve_path(value: Any, path: str) -> tuple[bool, Any]:
    """`(found, value)` at `path`, as `locate` finds it."""
    found = locate(value, path)
    return (False, None) if found is None else (True, found[1])


@dataclass(frozen=True)
class FieldAssertion(ABC):
    """One `path: {op, ...}` entry: the op is the class, and its fields are what the op takes."""

    path: str
    #: The op's name in the file.
    op: ClassVar[str]

    @abstractmethod
    def holds(self, actual: Any) -> bool:
        """Whether the value found at the path satisfies the op."""

    @abstractmethod
    def expectation(self) -> str:
        """What the op wanted, for a failure: `a number greater than 3`."""

    def argument(self) -> str:
        """What the op takes, as `described` writes it after the op's name."""
        return f" {show(self.value)}"  # type: ignore[attr-defined]  # the ops keeping this default declare a `value` field

    def wrong_kind(self, actual: Any) -> str:
        """Why `actual` could never hold, when its type alone rules it out: ` (not a number)`."""
        return ""

    @cached_property
    def described(self) -> str:
        """Built once per assertion: every passing call lists them all."""
        return f"{self.path} {self.op}{self.argument()}"

    def failure(self, root: Any, noun: str) -> str | None:
        """Why `root` fails this assertion, or None when it holds."""
        found, actual = resolve_path(root, self.path)
        if found and self.holds(actual):
            return None
        name = f"the whole {noun}" if self.path == WHOLE else self.path
        if not found:
            return f"{name} was missing, expected {self.expectation()}"
        return f"{name} was {show(actual)}{self.wrong_kind(actual)}, expected {self.expectation()}"


@dataclass(frozen=True)
class Exists(FieldAssertion):
    op = "exists"

    def holds(self, actual: Any) -> bool:
        return True

    def expectation(self) -> str:
        return "it to be present"

    def argument(self) -> str:
        return ""


@dataclass(frozen=True)
class Equals(FieldAssertion):
    """Typed JSON equality: `true` is not `1`, `5` is not `"5"`, `5` equals `5.0`."""

    op = "equals"

    value: str | int | float | bool

    def holds(self, actual: Any) -> bool:
        return json_equal(actual, self.value)

    def expectation(self) -> str:
        return show(self.value)


@dataclass(frozen=True)
class Matches(FieldAssertion):
    op = "matches"

    pattern: str = spec(regex=True)

    def holds(self, actual: Any) -> bool:
        return isinstance(actual, str) and search(self.pattern, actual)

    def expectation(self) -> str:
        return f"to match /{self.pattern}/"

    def argument(self) -> str:
        return f" /{self.pattern}/"

    def wrong_kind(self, actual: Any) -> str:
        return "" if isinstance(actual, str) else " (not a string)"


@dataclass(frozen=True)
class GreaterThan(FieldAssertion):
    """A number greater than `value`; a boolean is not a number."""

    op = "gt"

    value: float

    def holds(self, actual: Any) -> bool:
        return is_number(actual) and actual > self.value

    def expectation(self) -> str:
        return f"a number greater than {show(self.value)}"

    def wrong_kind(self, actual: Any) -> str:
        return "" if is_number(actual) else " (not a number)"


@dataclass(frozen=True)
class LessThan(FieldAssertion):
    """A number less than `value`; a boolean is not a number."""

    op = "lt"

    value: float

    def holds(self, actual: Any) -> bool:
        return is_number(actual) and actual < self.value

    def expectation(self) -> str:
        return f"a number less than {show(self.value)}"

    def wrong_kind(self, actual: Any) -> str:
        return "" if is_number(actual) else " (not a number)"


@dataclass(frozen=True)
class Contains(FieldAssertion):
    """A string holding `value`, or a list with an element equal to it."""

    op = "contains"

    value: str

    def holds(self, actual: Any) -> bool:
        if isinstance(actual, str):
            return isinstance(self.value, str) and self.value in actual
        if isinstance(actual, (list, tuple)):
            return any(json_equal(item, self.value) for item in actual)
        return False

    def expectation(self) -> str:
        return f"to contain {show(self.value)}"

    def wrong_kind(self, actual: Any) -> str:
        return "" if isinstance(actual, (str, list, tuple)) else " (neither a string nor a list)"


@dataclass(frozen=True)
class NotIn(FieldAssertion):
    """Present, and equal to none of `values`."""

    op = "not_in"

    values: tuple[str, ...] = spec(allow_empty=True)

    def holds(self, actual: Any) -> bool:
        return not any(json_equal(actual, value) for value in self.values)

    def expectation(self) -> str:
        return "none of " + ", ".join(show(value) for value in self.values)

    def argument(self) -> str:
        return " [" + ", ".join(show(value) for value in self.values) + "]"


#: The ops of each evaluator, by name.
INPUT_OPS: dict[str, type[FieldAssertion]] = {cls.op: cls for cls in (Exists, Equals, Matches, GreaterThan, LessThan)}
OUTPUT_OPS: dict[str, type[FieldAssertion]] = {cls.op: cls for cls in (Exists, Equals, Contains, NotIn)}


def _assertions(ops: dict[str, type[FieldAssertion]], other: str, other_ops: dict[str, type[FieldAssertion]]) -> Any:
    """The `assertions` field of a field evaluator taking `ops`; an op of the `other` evaluator is named as such."""
    elsewhere = {op: f"`{op}` is an op of `{other}`" for op in other_ops if op not in ops}
    return spec(kw_only=True, item="assertion", keyed_by="path", tagged_by="op", tags=ops, refused_tags=elsewhere)


@dataclass(frozen=True)
class _FieldsCheck(Check):
    """Passes when one call of the tool satisfies every assertion."""

    tool_slug: str = spec(name="toolSlug", tool_slug=True)
    catalog_slug: str | None = spec(None, name="catalogSlug")
    #: Read after `catalogSlug`, so keyword-only; each evaluator declares it with its ops.
    assertions: tuple[FieldAssertion, ...] = spec(kw_only=True)
    framework_tools: frozenset[str] = framework_tools_field()

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
                held = ", ".join(a.described for a in self.assertions)
                return self.result(True, f"{run.tool_name} at {at(run)}: {held}", (run.index,))
            misses.append((run, failed))
        return self.result(False, self._explain(name, misses), [run.index for run, _ in misses])

    def _explain(self, name: str, misses: Sequence[tuple[ToolRun, list[str]]]) -> str:
        count = f"{counted(len(misses), 'call')} looked at"
        shown = "; ".join(f"{run.tool_name} at {at(run)}: {', '.join(failed)}" for run, failed in misses[:SHOWN_CALLS])
        more = f"; and {len(misses) - SHOWN_CALLS:,} more" if len(misses) > SHOWN_CALLS else ""
        return f"no call of {name} satisfied every assertion ({count}): {shown}{more}"


@dataclass(frozen=True)
class ToolInputContains(_FieldsCheck):
    """Some call of the tool received arguments satisfying every assertion."""

    key = "tool_input_contains"
    noun = "arguments"

    assertions: tuple[FieldAssertion, ...] = _assertions(INPUT_OPS, "tool_output_contains", OUTPUT_OPS)

    def subject(self, run: ToolRun) -> Any:
        return run.arguments


@dataclass(frozen=True)
class ToolOutputContains(_FieldsCheck):
    """Some call of the tool returned a result satisfying every assertion."""

    key = "tool_output_contains"
    noun = "result"

    assertions: tuple[FieldAssertion, ...] = _assertions(OUTPUT_OPS, "tool_input_contains", INPUT_OPS)

    def subject(self, run: ToolRun) -> Any:
        return parse_result(run.result)


__all__ = [
    "INPUT_OPS",
    "OUTPUT_OPS",
    "Contains",
    "Equals",
    "Exists",
    "FieldAssertion",
    "GreaterThan",
    "LessThan",
    "Matches",
    "NotIn",
    "ToolInputContains",
    "ToolOutputContains",
    "locate",
    "parse_result",
    "resolve_path",
]
