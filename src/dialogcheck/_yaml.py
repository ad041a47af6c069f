"""YAML 1.2 read safely into small nodes that remember their line and column.

Every file dialogcheck reads from a user (scenarios, SOPs, config) goes
through `read_yaml`, so every later error can point at the exact place.
Duplicate keys, unset `${VAR}`s and unsupported tags are reported together.
Files are read by a CI job that did not write them, so their size, their
nesting and what their aliases expand to are bounded, and `env_policy` can
limit which environment variables `${VAR}` may read.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer, ComposerError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scanner import Scanner, ScannerError

from ._shown import clip
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
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
#: Plain numbers as YAML 1.2's core schema reads them. ruamel's 1.2 resolver also takes 1.1's forms (`1_000`,
#: `0b101`); the spec reads those as strings, and a value compared with a recorded string must stay one.
_CORE_NUMBER = {
    _INT: re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"),
    _FLOAT: re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"),
}
_TAG_NOUNS = {"int": "an integer", "float": "a number", "bool": "true or false"}
_MERGE = "tag:yaml.org,2002:merge"
_VARIABLE = re.compile(r"\$(\$?)\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SURROGATE = re.compile("[\ud800-\udfff]")

#: YAML versions a `%YAML` directive may name; the files are read as 1.2 unless a directive says 1.1.
YAML_VERSIONS = ((1, 1), (1, 2))
#: A definition file is a page or two; a bigger one is refused before it is parsed (the pure-Python parser reads ~1 MB/s).
MAX_FILE_BYTES = 1 << 20
#: Deeper nesting than any definition needs; also keeps every recursive walk far from Python's recursion limit.
MAX_DEPTH = 100
#: Values (scalars, lists, mappings) a document may hold once its aliases are expanded: a big SOP holds
#: a few thousand; parsing 20,000 takes about a second; an "alias bomb" expands to billions.
MAX_VALUES = 20_000

#: Names `${VAR}` may read, or None for any variable (see `env_policy`).
_ALLOWED_ENV: ContextVar[frozenset[str] | None] = ContextVar("dialogcheck_allowed_env", default=None)


@contextmanager
def env_policy(allowed: Iterable[str] | None) -> Iterator[None]:
    """Within the block, `${VAR}` in the files read may use only the names in `allowed` (None: any variable).

    `dialogcheck --safe-env` sets it, so a scenario from an untrusted branch cannot copy a
    secret from the CI environment into a prompt or a results file.
    """
    token = _ALLOWED_ENV.set(None if allowed is None else frozenset(allowed))
    try:
        yield
    finally:
        _ALLOWED_ENV.reset(token)


def allowed_env() -> frozenset[str] | None:
    """The names `${VAR}` may read now; None when any variable may be read."""
    return _ALLOWED_ENV.get()


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


class _BoundedComposer(Composer):
    """ruamel's composer with limits: nesting depth, and how many values the document holds, aliases expanded.

    Sizes and depths are counted once per node, so an alias costs the size of what it names, and
    a billion-laughs file is refused at the alias that crosses the limit, in linear time.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._level = 0
        self._values = 0
        self._sizes: dict[int, tuple[int, int]] = {}  # node id -> (values in its expansion, its depth)

    def _count(self, values: int, mark: Any, through_alias: bool) -> None:
        self._values += values
        if self._values > MAX_VALUES:
            if through_alias:
                message = f"aliases expand this document to more than {MAX_VALUES:,} values (an alias bomb?)"
            else:
                message = f"this document holds more than {MAX_VALUES:,} values: scenario, SOP and config files are much smaller"
            raise ComposerError(None, None, message, mark)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            node = super().compose_node(parent, index)
            self._count(self._sizes.get(id(node), (1, 1))[0], event.start_mark, through_alias=True)
            return node
        self._level += 1
        if self._level > MAX_DEPTH:
            raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep", event.start_mark)
        self._count(1, event.start_mark, through_alias=False)
        node = super().compose_node(parent, index)
        self._level -= 1
        children = [c for pair in node.value for c in pair] if isinstance(node, MappingNode) else node.value if isinstance(node, SequenceNode) else ()
        sizes = [self._sizes.get(id(child), (1, 1)) for child in children]
        depth = 1 + max((d for _, d in sizes), default=0)
        if depth > MAX_DEPTH:  # deep through aliases, each level only one deeper than the last
            raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep (through aliases)", node.start_mark)
        self._sizes[id(node)] = (1 + sum(n for n, _ in sizes), depth)
        return node


class _Scanner(Scanner):
    """ruamel's scanner, refusing a `%YAML` version it cannot read where the directive names it (ruamel asserts)."""

    def scan_yaml_directive_value(self, start_mark: Any) -> Any:
        version = super().scan_yaml_directive_value(start_mark)
        if tuple(version) not in YAML_VERSIONS:
            major, minor = version
            readable = " and ".join(f"{a}.{b}" for a, b in YAML_VERSIONS)
            message = f"unsupported YAML version {major}.{minor} in the `%YAML` directive: YAML {readable} are read"
            raise ScannerError(None, None, message, start_mark)
        return version


def _bad_scalar(node: ScalarNode) -> str:
    """Why a tagged scalar's text is not a value of its type: `!!int abc`, or an integer too long to read."""
    text = node.value
    digits, limit = text.lstrip("+-").replace("_", ""), sys.get_int_max_str_digits()
    if node.tag == _INT and len(digits) > limit and digits.isdigit():
        return f"an integer of {len(digits):,} digits is too long: at most {limit:,} digits are read"
    kind = node.tag.rsplit(":", 1)[-1]  # type: ignore[union-attr]  # a tagged scalar: ruamel's None is for no tag
    shown = clip(text, 40)
    return f"{shown!r}, tagged `!!{kind}`, is not {_TAG_NOUNS.get(kind, 'a ' + kind)}"


def _too_long(value: int) -> bool:
    """Whether `value` has more decimal digits than Python will print (`sys.get_int_max_str_digits`)."""
    return abs(value) >= 10 ** sys.get_int_max_str_digits()


def _lone_surrogate(text: str) -> str | None:
    """The first UTF-16 surrogate of `text` that is not half of a pair, as an escape (`\\ud800`); None when there is none.

    A lone surrogate is no character: no UTF-8 output (terminal, JSON, results files) can hold it.
    """
    found = _SURROGATE.search(text)
    if found is None:
        return None
    i = found.start()
    while i < len(text):
        code = ord(text[i])
        if 0xD800 <= code <= 0xDBFF and i + 1 < len(text) and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            i += 2
            continue
        if 0xD800 <= code <= 0xDFFF:
            return f"\\u{code:04x}"
        i += 1
    return None


def _join_surrogate_pairs(text: str) -> str:
    """Each escaped surrogate pair (`\\ud83d\\ude00`, as JSON writes astral characters) made the character it encodes."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


class _Builder:
    def __init__(self, yaml: YAML, environ: dict[str, str]):
        self.yaml = yaml
        self.environ = environ
        self.allowed = allowed_env()
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
            if self.allowed is not None and name not in self.allowed:
                self.problem(
                    f"environment variable `{name}` may not be read with --safe-env (used as `${{{name}}}`): allow it with --allow-env {name}",
                    pos,
                )
                return match.group(0)
            if name not in self.environ:
                self.problem(f"environment variable `{name}` is not set (used as `${{{name}}}`)", pos)
                return match.group(0)
            value = self.environ[name]
            if _lone_surrogate(value) is not None:  # bytes that are not UTF-8, as Python decodes them
                self.problem(f"environment variable `{name}` holds bytes that are not UTF-8 text (used as `${{{name}}}`)", pos)
                return match.group(0)
            return value

        return _VARIABLE.sub(replace, text) if "${" in text else text

    def scalar(self, node: ScalarNode, is_key: bool) -> YScalar:
        pos = _pos(node)
        if node.tag == _TIMESTAMP or self._not_a_core_number(node):
            value: Any = node.value  # dates, and numbers only YAML 1.1 reads, stay the text the user wrote
        elif node.tag in _SCALAR_TAGS:
            value = self.construct(node, pos)
        else:
            self.problem(f"unsupported YAML tag `{node.tag}`: only plain YAML data is read", pos)
            value = node.value
        if isinstance(value, str):
            value = self.characters(value, pos)
            if not is_key:
                value = self.expand(value, pos)
        return YScalar(value, pos)

    def _not_a_core_number(self, node: ScalarNode) -> bool:
        """A plain, untagged scalar ruamel read as a number that YAML 1.2's core schema reads as a string."""
        pattern = _CORE_NUMBER.get(node.tag)  # type: ignore[arg-type]  # an untagged node's None is simply not in the table
        return (
            pattern is not None and node.style is None and node.ctag.handle is None
            and self.yaml.resolver.processing_version == (1, 2) and pattern.fullmatch(node.value) is None
        )

    def construct(self, node: ScalarNode, pos: Pos) -> Any:
        """The scalar's value; a text its tag cannot read (`!!int abc`, 5,000 digits) is a problem, never a crash.

        An integer written in hex, octal or binary has no digit limit when read, but one past the decimal
        limit could not be printed in any later message: it is refused the same way.
        """
        try:
            value = self.yaml.constructor.construct_object(node, deep=True)
        except (ValueError, KeyError, IndexError):  # int(), float(), the bool table, an empty text
            self.problem(_bad_scalar(node), pos)
            return node.value
        if isinstance(value, int) and value.bit_length() > 3 * sys.get_int_max_str_digits() and _too_long(value):
            digits = int(value.bit_length() * math.log10(2)) + 1
            self.problem(f"an integer of about {digits:,} digits is too long: at most {sys.get_int_max_str_digits():,} digits are read", pos)
            return node.value
        return value

    def characters(self, text: str, pos: Pos) -> str:
        """`text` with escaped surrogate pairs joined; a lone surrogate (`"\\ud800"`) is a problem."""
        if text.isascii() or _SURROGATE.search(text) is None:
            return text
        lone = _lone_surrogate(text)
        if lone is not None:
            self.problem(f"`{lone}` is half of a UTF-16 surrogate pair, not a character: write the character itself", pos)
            return text.encode("utf-8", "backslashreplace").decode("utf-8")  # printable in any later message
        return _join_surrogate_pairs(text)

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
            if isinstance(value_node, ScalarNode) and value_node.value == "" and value.value is None:  # type: ignore[union-attr]  # a scalar node builds a YScalar
                value = YScalar(None, key.pos)  # `key:` with nothing after it: the parser marks the next token
            values[key.value] = value
            keys[key.value] = key.pos
        for source in merged:
            for name, value in source.values.items():
                if name not in values:
                    values[name] = value
                    keys[name] = source.keys[name]
        return YMap(values, keys, _pos(node))


def parse_yaml(text: str, file: str, environ: dict[str, str] | None = None) -> YNode | None:
    """Parse YAML text; `None` for an empty document. Raises `LoadError`."""
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.Composer = _BoundedComposer
    yaml.Scanner = _Scanner
    try:
        root = yaml.compose(text)
    except ReaderError as err:  # a character YAML does not allow (NUL, most control characters)
        line, column = _text_position(text, err.position)
        character = f"#x{err.character:04x}" if isinstance(err.character, int) else repr(err.character)
        raise LoadError.one(f"invalid YAML: unacceptable character {character}: {err.reason}", file, line, column) from None
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


def _text_position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset (a lone CR ends a line too, as YAML says)."""
    before = text[:offset].replace("\r\n", "\n").replace("\r", "\n")
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def read_yaml(path: str | Path, environ: dict[str, str] | None = None) -> YNode | None:
    """Read and parse a YAML file, reporting unreadable, oversized or non-UTF-8 files with a position."""
    file = str(path)
    try:
        with open(path, "rb") as handle:  # no more than the limit is read, whatever the file is (even /dev/zero)
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise LoadError.of_os("cannot read file", err, file) from None
    if len(data) > MAX_FILE_BYTES:
        raise LoadError.one(f"the file is larger than {MAX_FILE_BYTES >> 20} MB: scenario, SOP and config files must be smaller", file)
    text = decode_utf8(data, file)
    return parse_yaml(text, file, environ)
