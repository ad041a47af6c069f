"""Reading an environment's starting `state`: tables of records, written inline or in a JSON or YAML file of the project.

A state file is named by a path inside the project folder; a path that leaves it, or a link that leads out,
is refused before anything is read (`_paths.inside`), and so is anything but a regular file of bounded size.
The state is kept as JSON bytes: each run parses its own fresh copy, and nothing can change the original.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from .._fields import Problems
from .._paths import inside, read_regular
from .._yaml import MAX_FILE_BYTES, Pos, YMap, YNode, YScalar, describe, parse_yaml, plain
from ..errors import LoadError, Problem, decode_utf8, os_reason
from .bounds import MAX_RECORDS, MAX_STATE_BYTES, MAX_STATE_DEPTH

STATE_SUFFIXES = (".json", ".yml", ".yaml")


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_STATE_DEPTH:
            return True
        if isinstance(node, dict):
            stack.extend((inner, depth + 1) for inner in node.values())
        elif isinstance(node, list):
            stack.extend((inner, depth + 1) for inner in node)
    return False


def _shape_problem(data: Any, what: str) -> str | None:
    """Why `data` is no state: not a mapping of tables, each a mapping or list of records, within the bounds."""
    if not isinstance(data, dict):
        return f"{what} must be a mapping of tables (like `orders: {{O1: {{...}}}}`), got {_json_kind(data)}"
    for name, table in data.items():
        if not isinstance(table, (dict, list)):
            return f"table `{name}` of {what} must be a mapping of records by key, or a list of records, got {_json_kind(table)}"
    records = sum(len(table) for table in data.values())
    if records > MAX_RECORDS:
        return f"{what} holds {records:,} records, more than the {MAX_RECORDS:,} an environment may start with"
    if _too_deep(data):
        return f"{what} is nested more than {MAX_STATE_DEPTH} levels deep"
    try:
        orjson.dumps(data)
    except TypeError:
        return f"{what} holds an integer past 64 bits, which no results file can hold"
    return None


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"), (list, "a list"), (dict, "a mapping")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _from_file(node: YScalar, problems: Problems, project: Path) -> Any:
    """The data of the state file `node` names; None (with a problem) when it cannot be read."""
    name = node.value
    try:
        target = inside(project, name)
    except LoadError as err:
        problems.add(f"`state` names the file {name!r}: {err.problems[0].message}", node.pos)
        return None
    shown = str(project / name)
    if target.suffix.lower() not in STATE_SUFFIXES:
        problems.add(f"`state` names {name!r}: a state file is JSON (.json) or YAML (.yml, .yaml)", node.pos)
        return None
    is_json = target.suffix.lower() == ".json"
    try:
        data = read_regular(target, MAX_STATE_BYTES if is_json else MAX_FILE_BYTES)
    except OSError as err:
        problems.add(f"`state` names {name!r}, which cannot be read: {os_reason(err)}", node.pos)
        return None
    if not is_json:
        try:
            return plain(parse_yaml(decode_utf8(data, shown), shown))
        except LoadError as err:
            problems.items.extend(err.in_file(shown).problems)
            return None
    try:
        orjson.loads(data)  # its syntax errors say where
    except orjson.JSONDecodeError as err:
        problems.items.append(Problem(f"invalid JSON: {err.msg}", shown, err.lineno, err.colno))
        return None
    try:  # read again for what orjson lets through: a key twice (the last kept), an integer past 64 bits (a float)
        return json.loads(decode_utf8(data, shown), object_pairs_hook=_once, parse_int=_int64, parse_constant=_no_constant)
    except (json.JSONDecodeError, _Refused) as err:
        problems.items.append(Problem(f"invalid state file: {err.msg if isinstance(err, json.JSONDecodeError) else err}", shown))
    except LoadError as err:
        problems.items.extend(err.problems)
    return None


class _Refused(ValueError):
    """What a state file holds that JSON lets through and a state must not: a key twice, a number no file keeps."""


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose every key is given once: a state with a record twice has no one meaning."""
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise _Refused(f"the key {twice!r} is given twice in one object")
    return mapping


def _int64(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value < 2**64:
        raise _Refused(f"the integer {text[:40]} is past 64 bits, which no results file can hold")
    return value


def _no_constant(text: str) -> Any:
    raise _Refused(f"{text} is not a JSON value")


def parse_state(node: YNode | None, problems: Problems, pos: Pos, project: Path) -> bytes | None:
    """`environment.state` as JSON bytes; `{}` when absent; None when any problem was found."""
    if node is None or (isinstance(node, YScalar) and node.value is None):
        return b"{}"
    if isinstance(node, YScalar) and isinstance(node.value, str):
        data, what = _from_file(node, problems, project), f"the state file {node.value!r}"
        if data is None:
            return None
    elif isinstance(node, YMap):
        data, what = plain(node), "`state`"
    else:
        problems.add(f"`state` in `environment` must be a mapping of tables or the path of a JSON or YAML file, got {describe(node)}", node.pos)
        return None
    problem = _shape_problem(data, what)
    if problem is not None:
        problems.add(problem, node.pos)
        return None
    return orjson.dumps(data)


__all__ = ["STATE_SUFFIXES", "parse_state"]
