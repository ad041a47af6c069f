"""Paths into the state (`orders.{order_id}.status`) and values filled from a call's arguments.

A path is split on dots into steps once, when the file is read; a step may hold `{ARG}`, replaced by the
argument's text when a call comes, so an argument holding a dot (`"a.b"`) stays one step and can never
reach another record. A step of digits indexes a list. In a value, a string that is exactly `{ARG}` becomes
the argument's value with its type (a number stays a number); `{ARG}` inside a longer string becomes its
text; `{{` and `}}` stand for literal braces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


class PathError(Exception):
    """A path or value a call cannot fill or follow: answered to the agent as a tool error."""


class NotFound(PathError):
    """A step of a path that the state does not hold: the answer an API gives for a record it does not have (404)."""


def text_of(value: Any) -> str:
    """An argument as a key: a string is itself, anything else its JSON text (`5` reads as "5", `true` as "true")."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


@dataclass(frozen=True)
class Template:
    """A string that may name arguments: literal pieces and argument names, in order."""

    pieces: tuple[str, ...]  # literal text at even places, argument names at odd places
    text: str

    @property
    def names(self) -> tuple[str, ...]:
        return self.pieces[1::2]

    @property
    def whole(self) -> str | None:
        """The argument's name when the string is exactly `{ARG}`: then its value keeps its type."""
        return self.pieces[1] if len(self.pieces) == 3 and not self.pieces[0] and not self.pieces[2] else None

    def fill(self, arguments: Mapping[str, Any]) -> Any:
        for name in self.names:
            if name not in arguments:
                raise PathError(f"the argument `{name}` is missing")
        if (whole := self.whole) is not None:
            return arguments[whole]
        return "".join(piece if i % 2 == 0 else text_of(arguments[piece]) for i, piece in enumerate(self.pieces))


def parse_template(text: str) -> Template:
    """`text` as a template; `ValueError` saying what is wrong (an unclosed brace, a name that is not one)."""
    pieces, literal, end = [], [], 0
    for found in _PLACEHOLDER.finditer(text):
        literal.append(text[end:found.start()])
        end = found.end()
        token = found.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
        elif found.group(1) is None:
            raise ValueError(f"a lone `{token}` at character {found.start() + 1}: write `{token * 2}` for a literal brace")
        elif not _NAME.match(found.group(1)):
            raise ValueError(f"`{token}` does not name an argument (write `{{{{` and `}}}}` for literal braces)")
        else:
            pieces += ["".join(literal), found.group(1)]
            literal = []
    literal.append(text[end:])
    pieces.append("".join(literal))
    return Template(tuple(pieces), text)


@dataclass(frozen=True)
class StatePath:
    """A path into the state, its steps templates filled from the arguments."""

    steps: tuple[Template, ...]
    text: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for step in self.steps for name in step.names)

    def keys(self, arguments: Mapping[str, Any]) -> list[str]:
        return [text_of(step.fill(arguments)) for step in self.steps]


def parse_path(text: str) -> StatePath:
    """`text` as a path; `ValueError` for an empty step (`orders..status`) or a bad template."""
    parts = text.split(".")
    if any(not part for part in parts):
        raise ValueError(f"the path {text!r} has an empty step: write steps separated by single dots, like `orders.{{order_id}}`")
    return StatePath(tuple(parse_template(part) for part in parts), text)


def _child(container: Any, key: str, shown: str) -> Any:
    if isinstance(container, dict):
        if key in container:
            return container[key]
    elif isinstance(container, list) and key.isascii() and key.isdigit() and int(key) < len(container):
        return container[int(key)]
    raise NotFound(f"not found: {shown}")


def follow(state: Any, keys: list[str]) -> Any:
    """The value at `keys`; `PathError` ("not found: orders.O9") at the first step that is not there."""
    value = state
    for i, key in enumerate(keys):
        value = _child(value, key, ".".join(keys[: i + 1]))
    return value


def set_at(state: Any, keys: list[str], value: Any) -> None:
    """Set the last step (a new key of a mapping may be made; every step before it must exist)."""
    parent, last = follow(state, keys[:-1]), keys[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list) and last.isascii() and last.isdigit() and int(last) < len(parent):
        parent[int(last)] = value
    else:
        raise NotFound(f"not found: {'.'.join(keys)}")


def append_at(state: Any, keys: list[str], value: Any) -> None:
    target = follow(state, keys)
    if not isinstance(target, list):
        raise PathError(f"cannot append to {'.'.join(keys)}: it is not a list")
    target.append(value)


def delete_at(state: Any, keys: list[str]) -> None:
    parent, last = follow(state, keys[:-1]), keys[-1]
    _child(parent, last, ".".join(keys))
    if isinstance(parent, dict):
        del parent[last]
    else:
        del parent[int(last)]


def fill_value(value: Any, arguments: Mapping[str, Any]) -> Any:
    """A value with its templates (parsed by `parse_value`) filled from the arguments."""
    if isinstance(value, Template):
        return value.fill(arguments)
    if isinstance(value, dict):
        return {key: fill_value(inner, arguments) for key, inner in value.items()}
    if isinstance(value, list):
        return [fill_value(inner, arguments) for inner in value]
    return value


__all__ = ["NotFound", "PathError", "StatePath", "Template", "append_at", "delete_at", "fill_value", "follow", "parse_path", "parse_template", "set_at", "text_of"]
