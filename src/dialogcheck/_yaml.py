"""YAML 1.2 read safely into small nodes that remember their line and column.

Every file dialogcheck reads from a user (scenarios, SOPs, config) goes
through `read_yaml`, so every later error can point at the exact place.
Duplicate keys, unset `${VAR}`s and unsupported tags are reported together.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import LoadError, Problem, decode_utf8

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_COLLECTION_TAGS = {"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
_VARIABLE = re.compile(r"\$(\$?)\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Pos:
    line: int
    column: int


@dataclass(frozen=True)
class YScalar:
    value: Any
    pos: Pos


@dataclass(frozen=True)
class YSeq:
    items: tuple[YNode, ...]
    pos: Pos


@dataclass(frozen=True)
class YMap:
    """A mapping with string keys; `keys` keeps each key's own position."""

    values: dict[str, YNode]
    keys: dict[str, Pos]
    pos: Pos = field(default=Pos(1, 1))

    def get(self, key: str) -> YNode | None:
        return self.values.get(key)


YNode = YScalar | YSeq | YMap

_TYPE_NAMES = {YMap: "a mapping", YSeq: "a list"}


def describe(node: YNode | None) -> str:
    """How a node reads in an error message: 'a mapping', 'a string', 'null'."""
    if node is None:
        return "nothing"
    if not isinstance(node, YScalar):
        return _TYPE_NAMES[type(node)]
    value = node.value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    return "a string"


def plain(node: YNode | None) -> Any:
    """The node as plain Python data (dicts, lists, scalars)."""
    if node is None:
        return None
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [plain(item) for item in node.items]
    return {key: plain(value) for key, value in node.values.items()}


def _pos(node: Node) -> Pos:
    return Pos(node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    def __init__(self, yaml: YAML, environ: dict[str, str]):
        self.yaml = yaml
        self.environ = environ
        self.problems: list[Problem] = []
        self.built: dict[int, YNode] = {}  # by node id: an alias is built once, however often it is used
        self.building: set[int] = set()

    def problem(self, message: str, pos: Pos) -> None:
        self.problems.append(Problem(message, "", pos.line, pos.column))

    def expand(self, text: str, pos: Pos) -> str:
        def replace(match: re.Match[str]) -> str:
            escaped, name = match.group(1), match.group(2)
            if escaped:
                return "${" + name + "}"
            if not _NAME.match(name):
                self.problem(f"`${{{name}}}` is not a valid variable name (write `$${{...}}` for a literal)", pos)
                return match.group(0)
            if name not in self.environ:
                self.problem(f"environment variable `{name}` is not set (used as `${{{name}}}`)", pos)
                return match.group(0)
            return self.environ[name]

        return _VARIABLE.sub(replace, text) if "${" in text else text

    def scalar(self, node: ScalarNode, is_key: bool) -> YScalar:
        pos = _pos(node)
        if node.tag == _TIMESTAMP:
            value: Any = node.value  # dates stay the text the user wrote
        elif node.tag in _SCALAR_TAGS:
            value = self.yaml.constructor.construct_object(node, deep=True)
        else:
            self.problem(f"unsupported YAML tag `{node.tag}`: only plain YAML data is read", pos)
            value = node.value
        if isinstance(value, str) and not is_key:
            value = self.expand(value, pos)
        return YScalar(value, pos)

    def build(self, node: Node) -> YNode:
        key = id(node)
        if key in self.built:
            return self.built[key]
        if key in self.building:
            self.problem("this alias refers to a node that contains it: recursive data cannot be read", _pos(node))
            return YScalar(None, _pos(node))
        self.building.add(key)
        self.built[key] = built = self._build(node)
        self.building.discard(key)
        return built

    def _build(self, node: Node) -> YNode:
        if isinstance(node, ScalarNode):
            return self.scalar(node, is_key=False)
        if node.tag not in _COLLECTION_TAGS:
            self.problem(f"unsupported YAML tag `{node.tag}`: only plain YAML data is read", _pos(node))
        if isinstance(node, SequenceNode):
            return YSeq(tuple(self.build(item) for item in node.value), _pos(node))
        if isinstance(node, MappingNode):
            return self.mapping(node)
        raise TypeError(f"unexpected YAML node {node!r}")

    def mapping(self, node: MappingNode) -> YMap:
        values: dict[str, YNode] = {}
        keys: dict[str, Pos] = {}
        merged: list[YMap] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                for source in sources:
                    built = self.build(source)
                    if isinstance(built, YMap):
                        merged.append(built)
                    else:
                        self.problem("`<<` merges only mappings", _pos(source))
                continue
            if not isinstance(key_node, ScalarNode):
                self.problem("mapping keys must be plain strings", _pos(key_node))
                continue
            key = self.scalar(key_node, is_key=True)
            if not isinstance(key.value, str):
                self.problem(f"mapping keys must be strings, got {describe(key)} `{key_node.value}`", key.pos)
                continue
            if key.value in values:
                first = keys[key.value]
                self.problem(f"duplicate key `{key.value}` (first defined at line {first.line})", key.pos)
                continue
            value = self.build(value_node)
            if isinstance(value_node, ScalarNode) and value_node.value == "" and value.value is None:
                value = YScalar(None, key.pos)  # `key:` with nothing after it: the parser marks the next token
            values[key.value] = value
            keys[key.value] = key.pos
        for source in merged:
            for key, value in source.values.items():
                if key not in values:
                    values[key] = value
                    keys[key] = source.keys[key]
        return YMap(values, keys, _pos(node))


def parse_yaml(text: str, file: str, environ: dict[str, str] | None = None) -> YNode | None:
    """Parse YAML text; `None` for an empty document. Raises `LoadError`."""
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    try:
        root = yaml.compose(text)
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        message = " ".join(part for part in (err.context, err.problem) if part) or "invalid YAML"
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise LoadError.one(f"invalid YAML: {message}", file, line, column) from None
    except YAMLError as err:
        raise LoadError.one(f"invalid YAML: {err}", file) from None
    except RecursionError:
        raise LoadError.one("invalid YAML: nested too deeply", file) from None
    if root is None:
        return None
    builder = _Builder(yaml, dict(os.environ) if environ is None else environ)
    try:
        tree = builder.build(root)
    except RecursionError:
        raise LoadError.one("invalid YAML: nested too deeply", file) from None
    if builder.problems:
        raise LoadError(builder.problems).in_file(file)
    return tree


def read_yaml(path: str | Path, environ: dict[str, str] | None = None) -> YNode | None:
    """Read and parse a YAML file, reporting unreadable or non-UTF-8 files with a position."""
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise LoadError.one(f"cannot read file: {err.strerror or err}", file) from None
    text = decode_utf8(data, file)
    return parse_yaml(text, file, environ)
