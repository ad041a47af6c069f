"""A tool's `parameters`: checked as a JSON Schema when the file is read, and applied to each call's arguments.

jsonschema is imported only here and only when an environment is read, so the rest of dialogcheck runs without
it; without it, reading an environment is a load error that names the extra to install.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

INSTALL_HINT = "pip install 'dialogcheck[environment]'"


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError:
        raise ImportError(f"checking a tool's `parameters` needs the jsonschema package: {INSTALL_HINT}") from None
    return jsonschema


def _refs(schema: Any) -> Iterator[str]:
    """Every `$ref` value in the schema (the YAML reader bounds its nesting, so the walk is bounded too)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield ref
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot describe a tool's arguments, or None: not a JSON Schema, not an object, a `$ref` out of it.

    `ImportError` when jsonschema is not installed.
    """
    jsonschema = _jsonschema()
    if not isinstance(schema, dict):
        return "must be a JSON Schema mapping, like `{type: object, properties: {...}}`"
    if schema.get("type") != "object":
        return "must describe an object (`type: object`): a tool's arguments are one JSON object"
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as err:
        where = "/".join(str(step) for step in err.absolute_path)
        return f"is not a valid JSON Schema{f' at `{where}`' if where else ''}: {err.message}"
    for ref in _refs(schema):
        if not ref.startswith("#"):
            return f"holds `$ref: {ref}`, outside the schema: only references inside it (`#/...`) are read"
    return None


class ArgumentsValidator:
    """Applies one tool's schema to the arguments of a call."""

    def __init__(self, schema: dict[str, Any]):
        jsonschema = _jsonschema()
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        self._validator = cls(schema)
        self._best_match = jsonschema.exceptions.best_match

    def problem(self, arguments: Any) -> str | None:
        """What the arguments break, as an API would answer a request that does not fit (None when they fit)."""
        error = self._best_match(self._validator.iter_errors(arguments))
        if error is None:
            return None
        where = ".".join(str(step) for step in error.absolute_path)
        return f"invalid arguments{f' at `{where}`' if where else ''}: {error.message}"


__all__ = ["INSTALL_HINT", "ArgumentsValidator", "schema_problem"]
