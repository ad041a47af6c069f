"""Read the fields of YAML mappings into typed values, collecting problems.

Loaders of scenario, SOP and config files share this: each field is taken
with its expected type, unknown keys get a "did you mean", and every problem
keeps the position of the node it is about. Nothing here raises; the loader
raises once per file with everything it found.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from ._yaml import Pos, YMap, YNode, YScalar, YSeq, describe, read_yaml
from .errors import LoadError, Problem, did_you_mean
from .events.model import FRAMEWORK_TOOLS
from .events.values import show

T = TypeVar("T")


class Problems:
    """The problems found in one file so far."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, message: str, pos: Pos) -> None:
        self.items.append(Problem(message, "", pos.line, pos.column))

    def __bool__(self) -> bool:
        return bool(self.items)

    def expect_map(self, node: YNode | None, what: str, pos: Pos) -> YMap | None:
        if isinstance(node, YMap):
            return node
        self.add(f"{what} must be a mapping, got {describe(node)}", node.pos if node is not None else pos)
        return None

    def expect_seq(self, node: YNode | None, what: str, pos: Pos, *, min_items: int = 1) -> YSeq | None:
        if not isinstance(node, YSeq):
            self.add(f"{what} must be a list, got {describe(node)}", node.pos if node is not None else pos)
            return None
        if len(node.items) < min_items:
            need = "at least one item" if min_items == 1 else f"at least {min_items:,} items"
            self.add(f"{what} must hold {need}, got {len(node.items):,}", node.pos)
            return None
        return node

    def kind_of(self, mapping: YMap, key: str, choices: Iterable[str], what: str, unknown: Callable[[str], str]) -> str | None:
        """The field `key` of `mapping` that says which kind it is (an SOP step's `type`, a fault's `kind`): present, a
        string and one of `choices`, else a problem and None; `unknown(value)` begins the message for another value.
        Read before the mapping's other fields (`Fields.choice` reads a field among known ones), which depend on it."""
        choices = list(choices)
        node = mapping.get(key)
        if node is None:
            self.add(f"{what} is missing required field `{key}` (one of {', '.join(choices)})", mapping.pos)
            return None
        value = node.value if isinstance(node, YScalar) else None
        if not isinstance(value, str):
            self.add(f"`{key}` in {what} must be a string, got {describe(node)}", node.pos)
            return None
        if value not in choices:
            self.add(unknown(value) + (did_you_mean(value, choices) or f" (one of {', '.join(choices)})"), node.pos)
            return None
        return value

    def single_key(self, node: YNode | None, what: str, pos: Pos) -> tuple[str, Pos, YNode] | None:
        """A mapping with exactly one key, the form of assertions and sequencing steps."""
        mapping = self.expect_map(node, what, pos)
        if mapping is None:
            return None
        if len(mapping.values) != 1:
            keys = ", ".join(f"`{k}`" for k in mapping.values) or "none"
            self.add(f"{what} must be a mapping with exactly one key, got {len(mapping.values)} ({keys})", mapping.pos)
            return None
        ((key, value),) = mapping.values.items()
        return key, mapping.keys[key], value


class Fields:
    """One mapping's fields, read one at a time. Unknown keys are reported at once."""

    def __init__(self, node: YMap, problems: Problems, what: str, known: Iterable[str]):
        self.node = node
        self.problems = problems
        self.what = what
        self.known = tuple(known)
        for key, pos in node.keys.items():
            if key not in self.known:
                problems.add(f"unknown field `{key}` in {what}{did_you_mean(key, self.known)}", pos)

    def has(self, key: str) -> bool:
        return key in self.node.values

    def pos(self, key: str) -> Pos:
        return self.node.keys.get(key, self.node.pos)

    def get(self, key: str, required: bool = False) -> YNode | None:
        node = self.node.values.get(key)
        if node is None and required:
            self.problems.add(f"{self.what} is missing required field `{key}`", self.node.pos)
        return node

    def _wrong(self, key: str, node: YNode, expected: str) -> None:
        self.problems.add(f"`{key}` in {self.what} must be {expected}, got {describe(node)}", node.pos)

    def string(self, key: str, required: bool = False, *, allow_empty: bool = False) -> str | None:
        node = self.get(key, required)
        if node is None:
            return None
        if isinstance(node, YScalar) and isinstance(node.value, str):
            if not allow_empty and not node.value.strip():
                self.problems.add(f"`{key}` in {self.what} must not be empty", node.pos)
                return None
            return node.value
        self._wrong(key, node, "a string")
        return None

    def choice(self, key: str, choices: Iterable[str], required: bool = False) -> str | None:
        choices = tuple(choices)
        value = self.string(key, required)
        if value is not None and value not in choices:
            allowed = ", ".join(choices)
            node = self.node.values[key]
            self.problems.add(f"`{key}` in {self.what} must be one of {allowed}, got {value!r}{did_you_mean(value, choices)}", node.pos)
            return None
        return value

    def boolean(self, key: str, required: bool = False) -> bool | None:
        node = self.get(key, required)
        if node is None:
            return None
        if isinstance(node, YScalar) and isinstance(node.value, bool):
            return node.value
        self._wrong(key, node, "true or false")
        return None

    def integer(self, key: str, required: bool = False, *, minimum: int | None = None, maximum: int | None = None) -> int | None:
        node = self.get(key, required)
        if node is None:
            return None
        value = node.value if isinstance(node, YScalar) else None
        if not isinstance(value, int) or isinstance(value, bool):
            self._wrong(key, node, "an integer")
            return None
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            bounds = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
            self.problems.add(f"`{key}` in {self.what} must be an integer {bounds}, got {show(value)}", node.pos)
            return None
        return value

    def number(self, key: str, required: bool = False, *, minimum: float | None = None, maximum: float | None = None) -> float | None:
        node = self.get(key, required)
        if node is None:
            return None
        value = node.value if isinstance(node, YScalar) else None
        if isinstance(value, float) and value != value:
            self.problems.add(f"`{key}` in {self.what} must be a number, got .nan (not a number)", node.pos)
            return None
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self._wrong(key, node, "a number")
            return None
        if isinstance(value, int) and abs(value) > sys.float_info.max:  # no float holds it: every use would overflow
            self.problems.add(f"`{key}` in {self.what} must be a number, got an integer too large for one", node.pos)
            return None
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            bounds = f"from {minimum:g} to {maximum:g}" if maximum is not None else f"at least {minimum:g}"
            self.problems.add(f"`{key}` in {self.what} must be a number {bounds}, got {value:g}", node.pos)
            return None
        return value

    def mapping(self, key: str, required: bool = False) -> YMap | None:
        node = self.get(key, required)
        if node is None:
            return None
        return self.problems.expect_map(node, f"`{key}` in {self.what}", node.pos)

    def seq(self, key: str, required: bool = False, *, min_items: int = 1) -> YSeq | None:
        node = self.get(key, required)
        if node is None:
            return None
        return self.problems.expect_seq(node, f"`{key}` in {self.what}", node.pos, min_items=min_items)

    def strings(self, key: str, required: bool = False, *, min_items: int = 1) -> tuple[str, ...] | None:
        """A list of non-empty strings, of at least `min_items` items."""
        seq = self.seq(key, required, min_items=min_items)
        if seq is None:
            return None
        values = []
        for i, item in enumerate(seq.items):
            if isinstance(item, YScalar) and isinstance(item.value, str) and item.value.strip():
                values.append(item.value)
            else:
                expected = "a non-empty string"
                self.problems.add(f"item {i + 1} of `{key}` in {self.what} must be {expected}, got {describe(item)}", item.pos)
        return tuple(values)


def framework_tools_setting(fields: Fields) -> frozenset[str]:
    """The `framework_tools` key of eval/conftest.yml or of an SOP file: the tools never counted as tool runs.

    A list of tool names (empty: every tool is counted); absent, `FRAMEWORK_TOOLS`, for agents
    that are not Mantle and own a tool named like one of Mantle's (`cancel`, `complete`).
    """
    if not fields.has("framework_tools"):
        return FRAMEWORK_TOOLS
    names = fields.strings("framework_tools", min_items=0)
    return FRAMEWORK_TOOLS if names is None else frozenset(names)


def file_body(root: YNode | None, problems: Problems, key: str, kind: str) -> YMap | None:
    """The mapping under a definition file's one top-level key; `kind` is like "a scenario", "an SOP"."""
    top = problems.expect_map(root, f"{kind} file", Pos(1, 1))
    if top is None:
        return None
    return Fields(top, problems, f"the {kind.split(' ', 1)[1]} file", (key,)).mapping(key, required=True)


def load_definition_file(path: str | Path, parse: Callable[[YNode | None, Problems, str], T | None], kind: str, environ: dict[str, str] | None = None) -> T:
    """Read a YAML file and parse it; raises one `LoadError` with every problem found."""
    file = str(path)
    root = read_yaml(path, environ)
    problems = Problems()
    value = parse(root, problems, file)
    if problems or value is None:
        raise LoadError(problems.items or [Problem(f"not {kind} file")]).in_file(file)
    return value
