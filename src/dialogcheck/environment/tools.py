"""A tool of an environment: what an agent is shown of it, and its one behaviour.

A behaviour is a small frozen dataclass whose fields are its file schema, with one `answer(state, arguments)`
that returns the result or raises `ToolError` (what the agent sees as an error answer). The run's environment
hands a writing behaviour (`writes`) a copy of the state and keeps the copy only when the answer is not an
error, so a call that fails halfway changes nothing, as a transaction would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import orjson

from .._project_import import import_from_project
from .paths import NotFound, PathError, StatePath, Template, append_at, delete_at, fill_value, follow, set_at, text_of
from .schema import ArgumentsValidator


class ToolError(Exception):
    """An error answer of a tool: its message is the result the agent receives."""


def json_copy(value: Any) -> Any:
    """A deep copy of plain JSON data (also a check that it is JSON: `TypeError` when not)."""
    return orjson.loads(orjson.dumps(value))


@dataclass(frozen=True)
class Returns:
    """`returns: VALUE`: the same answer to every call."""

    value: Any
    key: ClassVar[str] = "returns"
    writes: ClassVar[bool] = False
    reads: ClassVar[bool] = False

    def answer(self, state: dict[str, Any], arguments: Mapping[str, Any]) -> Any:
        return json_copy(self.value)


_NO_FALLBACK = object()


@dataclass(frozen=True)
class Responses:
    """`responses: {by: ARG, values: {VALUE: RESULT, "*": RESULT}}`: the answer chosen by one argument's text."""

    by: str
    values: dict[str, Any]
    fallback: Any = _NO_FALLBACK
    key: ClassVar[str] = "responses"
    writes: ClassVar[bool] = False
    reads: ClassVar[bool] = False

    def answer(self, state: dict[str, Any], arguments: Mapping[str, Any]) -> Any:
        given = arguments.get(self.by)
        if self.by in arguments and not isinstance(given, (dict, list)) and text_of(given) in self.values:
            return json_copy(self.values[text_of(given)])
        if self.fallback is _NO_FALLBACK:
            shown = "not given" if self.by not in arguments else f"= {text_of(given)}"
            raise ToolError(f"not found: no answer for `{self.by}` {shown}")
        return json_copy(self.fallback)


@dataclass(frozen=True)
class Read:
    """`read: {path, not_found?}`: the value at a path of the state; a path that is not there answers `not_found`."""

    path: StatePath
    not_found: Template | None = None
    key: ClassVar[str] = "read"
    writes: ClassVar[bool] = False
    reads: ClassVar[bool] = True

    def answer(self, state: dict[str, Any], arguments: Mapping[str, Any]) -> Any:
        try:
            return json_copy(follow(state, self.path.keys(arguments)))
        except NotFound as err:
            if self.not_found is None:
                raise ToolError(str(err)) from None
            try:
                raise ToolError(text_of(self.not_found.fill(arguments))) from None
            except PathError as unfilled:
                raise ToolError(str(unfilled)) from None
        except PathError as err:
            raise ToolError(str(err)) from None


@dataclass(frozen=True)
class Change:
    """One change of a `write`: `set` or `append` a value at a path, or `delete` what is there."""

    op: str  # "set", "append" or "delete"
    path: StatePath
    value: Any = None

    def apply(self, state: dict[str, Any], arguments: Mapping[str, Any]) -> None:
        keys = self.path.keys(arguments)
        if self.op == "delete":
            delete_at(state, keys)
        elif self.op == "append":
            append_at(state, keys, fill_value(self.value, arguments))
        else:
            set_at(state, keys, fill_value(self.value, arguments))


@dataclass(frozen=True)
class Write:
    """`write: {changes: [...], returns?}`: the changes in order, then `returns` (null when absent) filled from the arguments."""

    changes: tuple[Change, ...]
    returns: Any = None
    key: ClassVar[str] = "write"
    writes: ClassVar[bool] = True
    reads: ClassVar[bool] = False

    def answer(self, state: dict[str, Any], arguments: Mapping[str, Any]) -> Any:
        try:
            for change in self.changes:
                change.apply(state, arguments)
            return json_copy(fill_value(self.returns, arguments))
        except PathError as err:
            raise ToolError(str(err)) from None


def _error_text(err: BaseException) -> str:
    message = str(err)
    return f"{type(err).__name__}: {message}" if message else type(err).__name__


@dataclass(frozen=True)
class PythonCall:
    """`python: module:function`, a function of the project called as `function(state, arguments)`.

    Imported on its first call, not when the file is read: reading an environment runs no code of the project.
    What the function raises is a tool error the agent sees; a result that is not JSON is one too.
    """

    module: str
    function: str
    root: Path = field(compare=False)
    key: ClassVar[str] = "python"
    writes: ClassVar[bool] = True
    reads: ClassVar[bool] = True

    @cached_property
    def _callable(self) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
        obj = import_from_project(self.module, self.root)
        for part in self.function.split("."):
            obj = getattr(obj, part)
        if not callable(obj):
            raise TypeError(f"`{self.module}:{self.function}` is not callable (it is {type(obj).__name__})")
        return obj

    def answer(self, state: dict[str, Any], arguments: Mapping[str, Any]) -> Any:
        try:
            function = self._callable
        except (Exception, SystemExit) as err:  # noqa: BLE001 - whatever the import raises, the tool cannot be loaded: an API's error
            raise ToolError(f"the tool's function `{self.module}:{self.function}` could not be loaded: {_error_text(err)}") from None
        try:
            result = function(state, dict(arguments))
        except (Exception, SystemExit) as err:  # noqa: BLE001 - the tool's own failure, answered as an API's error
            raise ToolError(_error_text(err)) from None
        try:
            return json_copy(result)
        except TypeError:
            raise ToolError(f"the tool returned a value that is not JSON (a {type(result).__name__})") from None


Behaviour = Returns | Responses | Read | Write | PythonCall
BEHAVIOURS: tuple[str, ...] = ("returns", "responses", "read", "write", "python")


@dataclass(frozen=True)
class Tool:
    """A tool as the agent is shown it (`name`, `description`, `parameters`) and how it answers."""

    name: str
    description: str
    parameters: dict[str, Any]
    behaviour: Behaviour

    @cached_property
    def validator(self) -> ArgumentsValidator:
        """Its schema, ready to check arguments: built once for every run of the environment."""
        return ArgumentsValidator(self.parameters)

    def shown(self) -> dict[str, Any]:
        """What an LLM agent is given to call the tool: its name, description and arguments' JSON Schema."""
        return {"name": self.name, "description": self.description, "parameters": json_copy(self.parameters)}


__all__ = ["BEHAVIOURS", "Behaviour", "Change", "PythonCall", "Read", "Responses", "Returns", "Tool", "ToolError", "Write", "json_copy"]
