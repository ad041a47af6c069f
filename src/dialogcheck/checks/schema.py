"""A check's file schema, declared on its own dataclass fields.

A check class is its schema: each field is a key of the file, read by the
type it is annotated with (`str`, `bool`, `int`, `float`, a tuple of strings,
a mapping, a tuple of smaller schema classes). What the type cannot say is
field metadata, given with `spec(...)`: the file's name for the field when it
differs from the Python name (`toolSlug`), bounds, and the rules a value must
follow. The one loader (`checks.load`) reads every check from this; adding a
check is adding its class to a registry.

Fields are read in declaration order (fields after a defaulted one that
must come later are `kw_only`). A rule that involves another field, or
where the check is written, is a small function given in the field's
`spec` (`refuse`, `check`, `check_item`); one about the whole object is its
class's `validate(values, fields, context)`, called once every field is read.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING
from functools import cache
from typing import Any, Union

import msgspec

#: The metadata key under which a field's `FieldSpec` is kept.
SPEC = "dialogcheck"


class FieldSpec(msgspec.Struct, frozen=True):
    """How a field is written in a file, beyond what its type says (a struct: every check module builds many)."""

    #: The file's key, when it is not the Python name (`toolSlug` for `tool_slug`).
    name: str | None = None
    #: Bounds of an integer or a number, inclusive.
    minimum: float | None = None
    maximum: float | None = None
    #: Fewest items a list may hold.
    min_items: int = 1
    #: The strings allowed, for a field that is one of a few words.
    choices: tuple[str, ...] = ()
    #: A regular expression, compiled at load time within the bounds of `checks.patterns`.
    regex: bool = False
    #: A string (or the strings of a list) may be empty.
    allow_empty: bool = False
    #: A JSON value (a field typed `Any`) may be null: a state's field may hold null, a memory value may not.
    nullable: bool = False
    #: A memory key name: a `session.` prefix can never match and is refused.
    memory_name: bool = False
    #: A tool as the SOP tool log names it: refused when a framework tool, or holding `|` (unless `alternatives`).
    tool_slug: bool = False
    #: Each item of the list may be `a|b` alternatives (`tool_sequence`).
    alternatives: bool = False
    #: The file writes the check's whole node as this field, not as a key: the text says what that node is
    #: ("a list of steps"), and appears in the messages about it.
    whole: str | None = None
    #: What one item of a list of schema classes is called in messages ("entry", "step").
    item: str | None = None
    #: Items written `{key: ...}`: the keys allowed and the class each builds (default: the item class's `key`).
    tags: Mapping[str, type] | None = None
    #: Keys of such items that are refused, with the reason (`sequencing` does not nest).
    refused_tags: Mapping[str, str] = msgspec.field(default_factory=dict)
    #: The message for any other key: a format of `key`, `what` and `hint` (a did-you-mean).
    unknown_tag: str = "unknown key `{key}`{hint}"
    #: The item's field that holds its key, for a list written as a mapping (`path: {op: ...}`).
    keyed_by: str | None = None
    #: The item's field whose value names its class, for items that are one of several (`op: gt`).
    tagged_by: str | None = None
    #: Keys of each item refused here, with the reason (`memory_was_cleared` takes no `value`): reported with
    #: the item's unknown keys, and never read.
    item_refuses: Mapping[str, str] = msgspec.field(default_factory=dict)
    #: Set by the loader from the definition's settings (the name of the setting), never read from the file.
    setting: str | None = None
    #: `refuse(cls, fields, context)`, asked before the field is read when the file sets it: a message refuses it.
    refuse: Callable[..., str | None] | None = None
    #: `check(values, fields, context)`, run once the field is read (or found absent): adds problems of its own.
    check: Callable[..., None] | None = None
    #: `check_item(item, node, problems, what, context)`, run on each item built for the field.
    check_item: Callable[..., None] | None = None


def spec(
    default: Any = MISSING, *, hash: bool | None = None, repr: bool = True, kw_only: bool = False, **rules: Any
) -> Any:
    """A dataclass field with its file rules: `tool_slug: str = spec(name="toolSlug", tool_slug=True)`."""
    return dataclasses.field(default=default, hash=hash, repr=repr, kw_only=kw_only, metadata={SPEC: FieldSpec(**rules)})


class SchemaField(msgspec.Struct, frozen=True):
    """One field of a schema class, as the loader reads it."""

    attr: str
    spec: FieldSpec
    #: The annotated type, `None` taken out of an optional one.
    type: Any
    required: bool

    @property
    def key(self) -> str:
        """The field's name in the file."""
        return self.spec.name or self.attr


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (Union, types.UnionType):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return args[0] if len(args) == 1 else Union[tuple(args)]
    return hint


@cache
def schema(cls: type) -> tuple[SchemaField, ...]:
    """The fields of `cls` in declaration order, the order the loader reads them in."""
    hints = typing.get_type_hints(cls)
    found = []
    for field in dataclasses.fields(cls):
        required = field.default is MISSING and field.default_factory is MISSING
        found.append(SchemaField(field.name, field.metadata.get(SPEC, FieldSpec()), _without_none(hints[field.name]), required))
    return tuple(found)


def file_keys(cls: type) -> tuple[str, ...]:
    """The keys a file may write for `cls` (the fields the loader sets from settings left out)."""
    return tuple(field.key for field in schema(cls) if field.spec.setting is None)


def item_type(hint: Any) -> Any:
    """`X` for `tuple[X, ...]`; None for any other type."""
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
    return None


def is_schema(hint: Any) -> bool:
    """Whether values of this type are read field by field (a dataclass), rather than as one value."""
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


__all__ = ["SPEC", "FieldSpec", "SchemaField", "file_keys", "is_schema", "item_type", "schema", "spec"]
