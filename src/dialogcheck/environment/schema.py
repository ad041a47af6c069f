"""A tool's `parameters`: checked as a JSON Schema when the file is read, and applied to each call's arguments.

jsonschema (a dependency of dialogcheck's) is imported only here and only when an environment is read, so the rest
of dialogcheck starts without it; an install that lacks it makes reading an environment a load error saying so. The schema's `pattern`
and `patternProperties` are searched by the bounded engine of the checks (`checks.patterns`), not Python's
`re`: arguments come from an agent, and a pattern that backtracks must not hang a run on a long one.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from ..checks.patterns import PatternError, PatternTimeout, compile_pattern, one_budget, search

INSTALL_HINT = "it is one of dialogcheck's dependencies: pip install 'jsonschema>=4'"


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ImportError:
        raise ImportError(f"checking a tool's `parameters` needs the jsonschema package: {INSTALL_HINT}") from None
    return jsonschema


def _mappings(schema: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in the schema (the YAML reader bounds its size and nesting, so the walk is bounded too)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _patterns(schema: Any) -> Iterator[str]:
    for node in _mappings(schema):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        if isinstance(node.get("patternProperties"), dict):
            yield from node["patternProperties"]


@lru_cache(maxsize=16)
def _bounded(cls: Any) -> Any:
    """`cls` with `pattern` and `patternProperties` searched within a time budget (`checks.patterns.search`)."""
    jsonschema = _jsonschema()

    def pattern(validator: Any, source: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(source, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {source!r}")

    def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "object"):
            for source, subschema in patterns.items():
                for key, value in instance.items():
                    if search(source, key):
                        yield from validator.descend(value, subschema, path=key, schema_path=source)

    return jsonschema.validators.extend(cls, {"pattern": pattern, "patternProperties": pattern_properties})


def _validator_class(schema: dict[str, Any]) -> Any:
    """The validator of the draft `$schema` names (2020-12 without one); None for a `$schema` jsonschema does not know."""
    jsonschema = _jsonschema()
    if "$schema" not in schema:
        return jsonschema.Draft202012Validator
    named = schema["$schema"]
    return jsonschema.validators.validator_for(schema, default=None) if isinstance(named, str) else None


def schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot describe a tool's arguments, or None: not a JSON Schema, not an object, a `$ref` out of it.

    `ImportError` when jsonschema is not installed.
    """
    jsonschema = _jsonschema()
    if not isinstance(schema, dict):
        return "must be a JSON Schema mapping, like `{type: object, properties: {...}}`"
    if schema.get("type") != "object":
        return "must describe an object (`type: object`): a tool's arguments are one JSON object"
    cls = _validator_class(schema)
    if cls is None:
        return f"names `$schema: {schema['$schema']}`, which is no JSON Schema draft jsonschema knows (draft 3 to 2020-12)"
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as err:
        where = "/".join(str(step) for step in err.absolute_path)
        return f"is not a valid JSON Schema{f' at `{where}`' if where else ''}: {err.message}"
    for node in _mappings(schema):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return f"holds `$ref: {ref}`, outside the schema: only references inside it (`#/...`) are read"
    for source in _patterns(schema):
        try:
            compile_pattern(source)
        except PatternError as err:
            return f"holds the pattern /{source}/, which cannot be used: {err}"
    return None


class ArgumentsValidator:
    """Applies one tool's schema to the arguments of a call."""

    def __init__(self, schema: dict[str, Any]):
        jsonschema = _jsonschema()
        self._validator = _bounded(_validator_class(schema))(schema)
        self._best_match = jsonschema.exceptions.best_match

    @one_budget
    def problem(self, arguments: Any) -> str | None:
        """What the arguments break, as an API would answer a request that does not fit (None when they fit).

        The patterns' searches of one call share one time budget; past it the call is refused, saying why.
        """
        try:
            error = self._best_match(self._validator.iter_errors(arguments))
        except PatternTimeout as err:
            return f"the arguments could not be checked: {err}"
        if error is None:
            return None
        where = ".".join(str(step) for step in error.absolute_path)
        return f"invalid arguments{f' at `{where}`' if where else ''}: {error.message}"


__all__ = ["INSTALL_HINT", "ArgumentsValidator", "schema_problem"]
