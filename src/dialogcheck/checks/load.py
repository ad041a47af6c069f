"""The one loader of checks: YAML nodes to check objects, by each class's schema (`checks.schema`).

Scenario assertions and SOP evaluators alike are read here: the annotated
type of each field and its `spec` say what the file may hold, `Fields` and
`Problems` report every problem with its position, and a check is built only
when its fields had none, so evaluation never sees raw data.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Union

from .._fields import Fields, Problems
from .._yaml import Pos, YNode, YScalar, YSeq, describe, plain
from ..errors import did_you_mean
from ..events.model import FRAMEWORK_TOOLS
from .patterns import PatternError, PatternTooLarge, compile_pattern
from .schema import SchemaField, file_keys, is_schema, item_type, schema

#: The scalars a field typed `str | int | float | bool` takes.
_SCALAR_TYPES = {str, int, float, bool}


class _Null:
    """A null read for a `nullable` field, until the check is built: None means "no value read" in between."""


_NULL: Any = _Null()


@dataclass(frozen=True)
class Context:
    """What reading a check needs besides its node: where it is written, and its definition's settings."""

    #: The key of the check it is written inside (`sequencing`, `tools_within_one_turn`); "" at the top.
    inside: str = ""
    #: Tools never counted as runs: the definition's `framework_tools` setting, `FRAMEWORK_TOOLS` by default.
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS


def read_tagged(
    node: YNode, problems: Problems, what: str, tags: Mapping[str, type], unknown: str, context: Context
) -> Any | None:
    """A check written as `{key: ...}`, its class found by key in `tags`; `unknown` formats the message for any other key."""
    entry = _tagged_entry(node, problems, what, tags, {}, unknown.format)
    if entry is None:
        return None
    cls, key, key_pos, value = entry
    return read(cls, value, problems, key_pos, f"`{key}`", context)


def _tagged_entry(
    node: YNode,
    problems: Problems,
    what: str,
    tags: Mapping[str, type],
    refused: Mapping[str, str],
    unknown: Callable[..., str],
) -> tuple[type, str, Pos, YNode] | None:
    """The class, key, key position and value of an item written `{key: ...}`; None after reporting why there is none.

    `refused` holds keys known but not allowed here, with their message; `unknown(key=, hint=)` words any other key.
    """
    entry = problems.single_key(node, what, node.pos)
    if entry is None:
        return None
    key, key_pos, value = entry
    if key in refused:
        problems.add(refused[key], key_pos)
        return None
    if key not in tags:
        problems.add(unknown(key=key, hint=did_you_mean(key, tags)), key_pos)
        return None
    return tags[key], key, key_pos, value


def read(
    cls: type, node: YNode, problems: Problems, pos: Pos, what: str, context: Context, refused: Mapping[str, str] | None = None
) -> Any | None:
    """An object of `cls` written as `node`: a mapping of its fields, or, for a class with a `whole` field, that field's value.

    `refused` holds keys of the mapping reported at once with the message given, and never read.
    """
    whole = next((field for field in schema(cls) if field.spec.whole is not None), None)
    if whole is None:
        mapping = problems.expect_map(node, what, pos)
        if mapping is None:
            return None
        fields = Fields(mapping, problems, what, file_keys(cls))
        for key, message in (refused or {}).items():
            if fields.has(key):
                problems.add(message, fields.pos(key))
        return build(cls, fields, context, skip=refused or ())
    count = len(problems.items)
    value = _read_whole(cls, whole, node, problems, pos, what, context)
    if len(problems.items) > count or value is None:
        return None
    return cls(**{whole.attr: value}, **_settings(cls, context))


def build(
    cls: type, fields: Fields, context: Context, preset: Mapping[str, Any] | None = None, skip: Iterable[str] = ()
) -> Any | None:
    """An object of `cls` from a mapping's fields (already checked for unknown keys); None when a field had a problem.

    `preset` holds values not written among the fields (an item's key); `skip` names keys already refused.
    The rules of each field's spec run in turn, and the class's `validate(values, fields, context)` at the end.
    """
    problems = fields.problems
    count = len(problems.items)
    values: dict[str, Any] = dict(preset or {})
    for field in schema(cls):
        if field.attr in values or field.spec.setting is not None or field.key in skip:
            continue
        if fields.has(field.key):
            reason = field.spec.refuse(cls, fields, context) if field.spec.refuse else None
            if reason is not None:
                problems.add(reason, fields.pos(field.key))
                continue
            value = _read_field(cls, field, fields, context)
            if value is not None:
                values[field.attr] = value
        elif field.required:
            fields.get(field.key, required=True)
        if field.spec.check is not None:
            field.spec.check(values, fields, context)
    validate = getattr(cls, "validate", None)
    if validate is not None:
        validate(values, fields, context)
    if len(problems.items) > count:
        return None
    values = {attr: None if value is _NULL else value for attr, value in values.items()}
    return cls(**values, **_settings(cls, context))


def _settings(cls: type, context: Context) -> dict[str, Any]:
    """The fields the loader sets from the definition's settings."""
    return {field.attr: getattr(context, field.spec.setting) for field in schema(cls) if field.spec.setting is not None}


# --- one field ----------------------------------------------------------------------------------


def _read_field(cls: type, field: SchemaField, fields: Fields, context: Context) -> Any:
    """The value of a field the file sets, or None after reporting why it is not one."""
    kind, key, spec = field.type, field.key, field.spec
    items = item_type(kind)
    if items is str:
        seq = fields.seq(key, min_items=spec.min_items)
        return None if seq is None else _strings(field, seq, fields, context)
    if items is not None:
        return _items_field(cls, field, items, fields, context)
    if kind is str:
        return _string(field, fields, context)
    if kind is bool:
        return fields.boolean(key)
    if kind is int:
        return fields.integer(key, minimum=spec.minimum, maximum=spec.maximum)  # type: ignore[arg-type]  # an int field's bounds are ints
    if kind is float:
        return fields.number(key, minimum=spec.minimum, maximum=spec.maximum)
    if typing.get_origin(kind) is Mapping:
        mapping = fields.mapping(key)
        return None if mapping is None else plain(mapping)
    if kind is Any:
        return _json_value(key, fields, spec.nullable)
    if typing.get_origin(kind) in (Union, types.UnionType) and set(typing.get_args(kind)) <= _SCALAR_TYPES:
        return _scalar(key, fields)
    raise TypeError(f"{cls.__name__}.{field.attr}: no reader for {kind!r}")


def _string(field: SchemaField, fields: Fields, context: Context) -> str | None:
    spec, key = field.spec, field.key
    if spec.regex:
        return _regex(key, fields)
    value = fields.choice(key, spec.choices) if spec.choices else fields.string(key, allow_empty=spec.allow_empty)
    if value is None:
        return None
    problem = _string_problem(field, value, f"`{key}` in {fields.what}", context)
    if problem is not None:
        fields.problems.add(problem, fields.node.values[key].pos)
        return None
    return value


def _string_problem(field: SchemaField, value: str, subject: str, context: Context) -> str | None:
    """What the rules of `field.spec` find wrong with one string (named `subject` in the message), or None."""
    if field.spec.memory_name and value.startswith("session."):
        return (
            f"memory name `{value}` starts with `session.`: tracker keys carry no session prefix, "
            f"so this check would never match (write `{value.removeprefix('session.')}`)"
        )
    if field.spec.tool_slug:
        if "|" in value:
            return f"{subject} holds `|`: `a|b` alternatives exist only in `tool_sequence`"
        if value in context.framework_tools:
            return (
                f"{subject} names the framework tool `{value}`: the tool log leaves framework tools out, so it could never match"
                " (an agent that owns a tool of this name sets `framework_tools`)"
            )
    return None


def _strings(field: SchemaField, seq: YSeq, fields: Fields, context: Context) -> tuple[str, ...] | None:
    """A list of strings, each item checked by the field's rules (and split into `a|b` alternatives where allowed)."""
    problems, spec = fields.problems, field.spec
    count = len(problems.items)
    for number, item in enumerate(seq.items, 1):
        item_what = f"item {number} of `{field.key}` in {fields.what}"
        if not (isinstance(item, YScalar) and isinstance(item.value, str) and (spec.allow_empty or item.value.strip())):
            expected = "a string" if spec.allow_empty else "a non-empty string"
            problems.add(f"{item_what} must be {expected}, got {describe(item)}", item.pos)
            continue
        parts = [part.strip() for part in item.value.split("|")] if spec.alternatives else [item.value]
        if "" in parts:
            problems.add(f"{item_what} has an empty alternative in {item.value!r}", item.pos)
            continue
        for problem in filter(None, (_string_problem(field, part, item_what, context) for part in parts)):
            problems.add(problem, item.pos)
    if len(problems.items) > count:
        return None
    return tuple(item.value for item in seq.items)  # type: ignore[union-attr]  # a non-scalar item is a problem above, and problems return None


def _regex(key: str, fields: Fields) -> str | None:
    """A regular expression (empty allowed), compiled now: within the bounds of `checks.patterns`, or a problem."""
    pattern = fields.string(key, allow_empty=True)
    if pattern is None:
        return None
    try:
        compile_pattern(pattern)
    except PatternError as err:
        verdict = "is too large a regular expression" if isinstance(err, PatternTooLarge) else "is not a valid regular expression"
        fields.problems.add(f"`{key}` in {fields.what} {verdict}: {err}", fields.node.values[key].pos)
        return None
    return pattern


def _json_value(key: str, fields: Fields, nullable: bool) -> Any:
    """Any JSON value, null only where the field is `nullable`, as plain data."""
    node = fields.node.values[key]
    if isinstance(node, YScalar) and node.value is None:
        if nullable:
            return _NULL
        fields.problems.add(f"`{key}` in {fields.what} must not be null: null is not accepted as a value", node.pos)
        return None
    return plain(node)


def _scalar(key: str, fields: Fields) -> str | int | float | None:
    node = fields.node.values[key]
    if isinstance(node, YScalar) and isinstance(node.value, (str, int, float)):
        return node.value
    fields.problems.add(f"`{key}` in {fields.what} must be a string, a number or a boolean, got {describe(node)}", node.pos)
    return None


# --- fields holding other schema classes ------------------------------------------------------------


def _read_whole(cls: type, field: SchemaField, node: YNode, problems: Problems, pos: Pos, what: str, context: Context) -> Any:
    """The value of the field a check is written as: a list of items, a mapping of another class's fields, or a string."""
    items = item_type(field.type)
    if items is not None:
        seq = problems.expect_seq(node, f"{what} ({field.spec.whole})", pos, min_items=field.spec.min_items)
        return None if seq is None else _list_items(cls, field, items, seq, problems, what, context)
    if is_schema(field.type):
        return read(field.type, node, problems, pos, what, context)
    if isinstance(node, YScalar) and isinstance(node.value, str) and node.value.strip():
        problem = _string_problem(field, node.value, what, context)
        if problem is None:
            return node.value
        problems.add(problem, node.pos)
        return None
    inside = f"inside `{context.inside}`, " if context.inside else ""
    problems.add(f"{inside}{what} takes {field.spec.whole}", getattr(node, "pos", pos))
    return None


def _items_field(cls: type, field: SchemaField, items: type, fields: Fields, context: Context) -> tuple[Any, ...] | None:
    """A field holding a list of items, or a mapping of them by key (`keyed_by`)."""
    spec, key, problems = field.spec, field.key, fields.problems
    if spec.keyed_by is None:
        seq = fields.seq(key, min_items=spec.min_items)
        return None if seq is None else _list_items(cls, field, items, seq, problems, fields.what, context)
    mapping = fields.mapping(key)
    if mapping is None:
        return None
    if len(mapping.values) < spec.min_items:
        problems.add(f"`{key}` in {fields.what} must hold at least one {spec.item}", mapping.pos)
    found = []
    for name, node in mapping.values.items():
        if not name.strip():
            problems.add(f"an {spec.item} {spec.keyed_by} in {fields.what} must not be empty", mapping.keys[name])
            continue
        item = _read_by_tag(field, items, node, problems, f"{spec.item} `{name}` of {fields.what}", context, {spec.keyed_by: name})
        if item is not None:
            found.append(item)
    return tuple(found)


def _list_items(
    cls: type, field: SchemaField, items: type, seq: YSeq, problems: Problems, what: str, context: Context
) -> tuple[Any, ...]:
    """Each item of a list: a mapping of the item class's fields, or, for checks inside a check, `{key: ...}`."""
    spec = field.spec
    inner = replace(context, inside=getattr(cls, "key", context.inside))
    tags = spec.tags if spec.tags is not None else ({items.key: items} if hasattr(items, "key") else None)
    refused_keys = {key: f"{what} {reason}" for key, reason in spec.item_refuses.items()}
    refused_tags = {key: f"`{key}` is not allowed inside {what}: {reason}" for key, reason in spec.refused_tags.items()}
    unknown = partial(spec.unknown_tag.format, what=what)
    found = []
    for number, node in enumerate(seq.items, 1):
        item_what = f"{spec.item} {number} of {what}"
        if tags is None:
            item, item_node = read(items, node, problems, node.pos, item_what, inner, refused_keys), node
        else:
            entry = _tagged_entry(node, problems, item_what, tags, refused_tags, unknown)
            if entry is None:
                continue
            item_cls, key, key_pos, item_node = entry
            item = read(item_cls, item_node, problems, key_pos, f"`{key}`", inner)
        if item is not None and spec.check_item is not None:
            spec.check_item(item, item_node, problems, what, inner)
        if item is not None:
            found.append(item)
    return tuple(found)


def _read_by_tag(
    field: SchemaField, base: type, node: YNode, problems: Problems, what: str, context: Context, preset: Mapping[str, Any]
) -> Any | None:
    """An item whose class is named by one of its own fields (`op: gt`): one of `field.spec.tags`."""
    spec = field.spec
    tag = spec.tagged_by
    assert tag is not None and spec.tags is not None, f"{field.attr}: a keyed list needs `tagged_by` and `tags`"
    mapping = problems.expect_map(node, what, node.pos)
    if mapping is None:
        return None
    tag_node = mapping.get(tag)
    written = tag_node.value if isinstance(tag_node, YScalar) else None
    cls = spec.tags.get(written) if isinstance(written, str) else None
    every = [cls] if cls is not None else _subclasses(base)
    known = (tag, *dict.fromkeys(key for sub in every for key in file_keys(sub) if key not in preset))
    fields = Fields(mapping, problems, what, known)
    named = fields.string(tag, required=True)
    if named is not None and cls is None:
        hint = f" ({spec.refused_tags[named]})" if named in spec.refused_tags else did_you_mean(named, spec.tags)
        problems.add(f"`{tag}` in {what} must be one of {', '.join(spec.tags)}, got {named!r}{hint}", tag_node.pos)  # type: ignore[union-attr]  # `named` was read, so its node exists
    if cls is None:
        return None
    return build(cls, fields, context, preset)


def _subclasses(base: type) -> list[type]:
    """Every concrete class under `base`: what an item may be when its tag names none of them."""
    found: list[type] = []
    subclasses: list[type] = base.__subclasses__()
    for sub in subclasses:
        if not getattr(sub, "__abstractmethods__", None):
            found.append(sub)
        found.extend(_subclasses(sub))
    return found


__all__ = ["Context", "build", "read", "read_tagged"]
