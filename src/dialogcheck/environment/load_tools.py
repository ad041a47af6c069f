"""Reading `environment.tools`: each tool's name, description, JSON Schema and its one behaviour, with positions.

Everything a call will rely on is checked here, once: the schema is a JSON Schema, every `{ARG}` a path or
value names is one of the tool's parameters, a path starts at a table the state has, and a `python:` tool
names a module of the project (refused under `--safe-env`, where no code of the project may run).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from .._fields import Fields, Problems
from .._project_import import project_holds
from .._yaml import Pos, YMap, YNode, YScalar, YSeq, describe, plain
from ..errors import did_you_mean
from .bounds import MAX_CHANGES, MAX_TOOLS
from .paths import StatePath, Template, parse_path, parse_template
from .schema import INSTALL_HINT, schema_problem
from .tools import BEHAVIOURS, Behaviour, Change, PythonCall, Read, Responses, Returns, Tool, Write

TOOL_FIELDS = ("name", "description", "parameters", *BEHAVIOURS)
#: What LLM providers take as a function's name.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_TARGET = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\Z")
CHANGE_OPS = ("set", "append", "delete")


class ToolReader:
    """Reads the tools of one file; `project` is where `python:` modules and state files must be."""

    def __init__(self, problems: Problems, state: dict[str, Any] | None, project: Path, safe_env: bool):
        self.problems = problems
        self.state = state
        self.project = project
        self.safe_env = safe_env
        self.schema_unreadable = False

    def tools(self, node: YNode | None, pos: Pos) -> tuple[Tool, ...]:
        seq = self.problems.expect_seq(node, "`tools` in `environment`", pos)
        if seq is None:
            return ()
        if len(seq.items) > MAX_TOOLS:
            self.problems.add(f"`tools` in `environment` holds {len(seq.items):,} tools, more than the {MAX_TOOLS} an environment may", seq.pos)
            return ()
        tools: list[Tool] = []
        seen: dict[str, int] = {}
        for number, item in enumerate(seq.items, 1):
            tool = self.tool(item, number)
            if tool is None:
                continue
            if tool.name in seen:
                self.problems.add(f"tool {number} is named `{tool.name}`, like tool {seen[tool.name]}: tool names must differ", item.pos)
                continue
            seen[tool.name] = number
            tools.append(tool)
        return tuple(tools)

    def tool(self, node: YNode, number: int) -> Tool | None:
        what = f"tool {number} of `environment.tools`"
        mapping = self.problems.expect_map(node, what, node.pos)
        if mapping is None:
            return None
        fields = Fields(mapping, self.problems, what, TOOL_FIELDS)
        name = fields.string("name", required=True)
        if name is not None and not _TOOL_NAME.match(name):
            self.problems.add(f"`name` in {what} must be 1 to 64 letters, digits, `_` or `-` (what LLM providers take), got {name!r}", fields.node.values["name"].pos)
            name = None
        if name is not None:
            what = f"tool `{name}`"
            fields.what = what
        description = fields.string("description", required=True)
        parameters = self.parameters(fields)
        behaviour = self.behaviour(fields, parameters)
        if name is None or description is None or parameters is None or behaviour is None:
            return None
        return Tool(name, description, parameters, behaviour)

    def parameters(self, fields: Fields) -> dict[str, Any] | None:
        node = fields.get("parameters", required=True)
        if node is None:
            return None
        schema = plain(node)
        try:
            problem = schema_problem(schema)
        except ImportError:
            if not self.schema_unreadable:  # said once a file, not once a tool
                self.problems.add(f"checking a tool's `parameters` needs the jsonschema package: {INSTALL_HINT}", node.pos)
            self.schema_unreadable = True
            return None
        if problem is not None:
            self.problems.add(f"`parameters` of {fields.what} {problem}", node.pos)
            return None
        return schema

    def behaviour(self, fields: Fields, parameters: dict[str, Any] | None) -> Behaviour | None:
        given = [key for key in BEHAVIOURS if fields.has(key)]
        if not given:
            self.problems.add(f"{fields.what} needs a behaviour: one of {', '.join(f'`{b}`' for b in BEHAVIOURS)}", fields.node.pos)
            return None
        if len(given) > 1:
            listed = ", ".join(f"`{key}`" for key in given)
            self.problems.add(f"{fields.what} has {len(given)} behaviours ({listed}): give exactly one", fields.pos(given[1]))
            return None
        key = given[0]
        names = _parameter_names(parameters)
        node = fields.get(key)
        where = f"`{key}` of {fields.what}"
        if key == "returns":
            return Returns(self.json_value(node, where))
        if key == "python":
            return self.python(node, where)
        mapping = self.problems.expect_map(node, where, fields.pos(key))
        if mapping is None:
            return None
        if key == "responses":
            return self.responses(Fields(mapping, self.problems, where, ("by", "values")), names)
        if key == "read":
            return self.read(Fields(mapping, self.problems, where, ("path", "not_found")), names)
        return self.write(Fields(mapping, self.problems, where, ("changes", "returns")), names)

    def json_value(self, node: YNode | None, where: str) -> Any:
        value = plain(node)
        try:
            orjson.dumps(value)
        except TypeError:
            self.problems.add(f"{where} holds an integer past 64 bits, which no results file can hold", node.pos if node else Pos(1, 1))
        return value

    def responses(self, fields: Fields, names: frozenset[str] | None) -> Responses | None:
        by = fields.string("by", required=True)
        values = fields.mapping("values", required=True)
        if by is not None and names is not None and by not in names:
            self.problems.add(f"`by` in {fields.what} names `{by}`, which is not a parameter of the tool{did_you_mean(by, names)}", fields.node.values["by"].pos)
            by = None
        if by is None or values is None:
            return None
        answers = {key: self.json_value(value, f"`values.{key}` in {fields.what}") for key, value in values.values.items()}
        if "*" in answers:
            fallback = answers.pop("*")
            return Responses(by, answers, fallback)
        return Responses(by, answers)

    def path(self, fields: Fields, key: str, names: frozenset[str] | None, required: bool = True) -> StatePath | None:
        text = fields.string(key, required=required)
        if text is None:
            return None
        pos = fields.node.values[key].pos
        try:
            path = parse_path(text)
        except ValueError as err:
            self.problems.add(f"`{key}` in {fields.what}: {err}", pos)
            return None
        self.names_known(path.names, names, f"`{key}` in {fields.what}", pos)
        first = path.steps[0]
        if self.state is not None and not first.names and first.text not in self.state:
            tables = ", ".join(f"`{t}`" for t in self.state) or "none"
            self.problems.add(
                f"`{key}` in {fields.what} starts at `{first.text}`, a table the state does not have{did_you_mean(first.text, self.state)} (its tables: {tables})",
                pos,
            )
            return None
        return path

    def names_known(self, used: tuple[str, ...], names: frozenset[str] | None, what: str, pos: Pos) -> bool:
        if names is None:  # the schema could not be read: said already
            return True
        unknown = [name for name in used if name not in names]
        for name in dict.fromkeys(unknown):
            self.problems.add(f"`{{{name}}}` in {what} names no parameter of the tool{did_you_mean(name, names)}", pos)
        return not unknown

    def read(self, fields: Fields, names: frozenset[str] | None) -> Read | None:
        path = self.path(fields, "path", names)
        not_found = self.template(fields, "not_found", names)
        if path is None or (fields.has("not_found") and not_found is None):
            return None
        return Read(path, not_found)

    def template(self, fields: Fields, key: str, names: frozenset[str] | None) -> Template | None:
        text = fields.string(key)
        if text is None:
            return None
        pos = fields.node.values[key].pos
        try:
            template = parse_template(text)
        except ValueError as err:
            self.problems.add(f"`{key}` in {fields.what}: {err}", pos)
            return None
        return template if self.names_known(template.names, names, f"`{key}` in {fields.what}", pos) else None

    def value(self, node: YNode | None, what: str, names: frozenset[str] | None) -> Any:
        """A value whose strings with braces are templates filled from the arguments."""
        if isinstance(node, YMap):
            return {key: self.value(inner, what, names) for key, inner in node.values.items()}
        if isinstance(node, YSeq):
            return [self.value(inner, what, names) for inner in node.items]
        if isinstance(node, YScalar) and isinstance(node.value, str) and ("{" in node.value or "}" in node.value):
            try:
                template = parse_template(node.value)
            except ValueError as err:
                self.problems.add(f"{what}: {err}", node.pos)
                return None
            self.names_known(template.names, names, what, node.pos)
            return template
        return self.json_value(node, what)

    def write(self, fields: Fields, names: frozenset[str] | None) -> Write | None:
        seq = fields.seq("changes", required=True)
        returns = self.value(fields.get("returns"), f"`returns` in {fields.what}", names)
        if seq is None:
            return None
        if len(seq.items) > MAX_CHANGES:
            self.problems.add(f"`changes` in {fields.what} holds {len(seq.items):,} changes, more than the {MAX_CHANGES} a write may make", seq.pos)
            return None
        changes = [self.change(item, f"change {i} of {fields.what}", names) for i, item in enumerate(seq.items, 1)]
        if any(change is None for change in changes):
            return None
        return Write(tuple(c for c in changes if c is not None), returns)

    def change(self, node: YNode, what: str, names: frozenset[str] | None) -> Change | None:
        mapping = self.problems.expect_map(node, what, node.pos)
        if mapping is None:
            return None
        fields = Fields(mapping, self.problems, what, (*CHANGE_OPS, "value"))
        ops = [op for op in CHANGE_OPS if fields.has(op)]
        if len(ops) != 1:
            self.problems.add(f"{what} must name one path with exactly one of `set`, `append` or `delete`, got {len(ops)}", mapping.pos)
            return None
        op = ops[0]
        if op == "delete" and fields.has("value"):
            self.problems.add(f"`value` in {what} is not used by `delete`: remove it", fields.pos("value"))
            return None
        if op != "delete" and not fields.has("value"):
            self.problems.add(f"{what} is missing required field `value` (what `{op}` writes)", mapping.pos)
            return None
        path = self.path(fields, op, names)
        value = self.value(fields.get("value"), f"`value` in {what}", names) if op != "delete" else None
        return None if path is None else Change(op, path, value)

    def python(self, node: YNode | None, where: str) -> PythonCall | None:
        if not (isinstance(node, YScalar) and isinstance(node.value, str)):
            self.problems.add(f"{where} must be a string `module:function`, got {describe(node)}", node.pos if node else Pos(1, 1))
            return None
        found = _TARGET.match(node.value)
        if found is None:
            self.problems.add(f"{where} must name a function as `module:function` (like `tools.orders:cancel`), got {node.value!r}", node.pos)
            return None
        if self.safe_env:
            self.problems.add(f"{where} runs code of the project ({node.value}), which --safe-env refuses: declare the tool with `returns`, `responses`, `read` or `write`", node.pos)
            return None
        module, function = found.groups()
        if not _module_inside(module, self.project):
            self.problems.add(f"{where} names the module `{module}`, which is not a module of the project folder {self.project}", node.pos)
            return None
        return PythonCall(module, function, self.project)


def _parameter_names(parameters: dict[str, Any] | None) -> frozenset[str] | None:
    """The names the tool's schema lists under `properties`; None when the schema could not be read."""
    if parameters is None:
        return None
    properties = parameters.get("properties")
    return frozenset(properties) if isinstance(properties, dict) else frozenset()


def _module_inside(module: str, project: Path) -> bool:
    """Whether `module` is a file of the project (`a/b.py` or `a/b/__init__.py`) once links are resolved."""
    if not project_holds(module, project):
        return False
    base = project.resolve()
    stem = project.joinpath(*module.split("."))
    for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve().is_relative_to(base)
    return False


__all__ = ["CHANGE_OPS", "TOOL_FIELDS", "ToolReader"]
