"""Parse SOP steps (`goals.sop`, SOP files) into evaluator objects, validating every rule.

Field names are the seed's camelCase (`toolSlug`, `withinLastNTurns`, ...);
the objects use snake_case. Every load-time rule of SPEC sections 3 and 10
lives here, so evaluation never re-validates.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from .._fields import Fields, Problems, file_body, framework_tools_setting, load_definition_file
from .._yaml import Pos, YMap, YNode, YScalar, describe
from ..checks.base import Check
from ..checks.sop import SOP_EVALUATORS
from ..checks.sop_confirmation import DEFAULT_WINDOW, ConfirmationRequested
from ..checks.sop_fields import (
    INPUT_OPS,
    OP_FIELDS,
    OUTPUT_OPS,
    FieldAssertion,
    ToolInputContains,
    ToolOutputContains,
)
from ..checks.sop_judge import LlmJudge
from ..checks.sop_tools import NoToolCalled, ToolCalled, ToolSequence
from ..errors import did_you_mean
from ..events.model import FRAMEWORK_TOOLS
from .model import Sop, Step, StepSet

STEP_FIELDS = ("id", "label", "required", "weight", "evaluator")
SOP_FIELDS = ("id", "name", "steps", "threshold", "framework_tools")
EVALUATOR_FIELDS: dict[str, tuple[str, ...]] = {
    "tool_called": ("toolSlug", "catalogSlug"),
    "tool_sequence": ("sequence", "contiguous", "catalogSlug"),
    "tool_input_contains": ("toolSlug", "catalogSlug", "assertions"),
    "tool_output_contains": ("toolSlug", "catalogSlug", "assertions"),
    "no_tool_called": ("toolSlugs", "catalogSlug"),
    "confirmation_requested": ("beforeToolSlug", "catalogSlug", "pattern", "withinLastNTurns"),
    "llm_judge": ("criterion", "rubric", "model"),
}
assert EVALUATOR_FIELDS.keys() == SOP_EVALUATORS.keys()

#: An evaluator's parser: its fields, the file's problems, how to name it, and the tools never counted as runs.
Parser = Callable[[Fields, Problems, str, frozenset[str]], "Check | None"]


def _slug_problem(slug: str, subject: str, framework_tools: frozenset[str], *, sequence: bool = False) -> str | None:
    """Why `slug` could never match a call, or None; `subject` says where it was written."""
    if "|" in slug and not sequence:
        return f"{subject} holds `|`: `a|b` alternatives exist only in `tool_sequence`"
    if slug in framework_tools:
        return (
            f"{subject} names the framework tool `{slug}`: the tool log leaves framework tools out, so it could never match"
            " (an agent that owns a tool of this name sets `framework_tools`)"
        )
    return None


def _slug(fields: Fields, key: str, framework_tools: frozenset[str], required: bool = False) -> str | None:
    slug = fields.string(key, required)
    message = _slug_problem(slug, f"`{key}` in {fields.what}", framework_tools) if slug is not None else None
    if message:
        fields.problems.add(message, fields.node.values[key].pos)
        return None
    return slug


def _slugs(fields: Fields, key: str, framework_tools: frozenset[str], *, sequence: bool = False) -> tuple[str, ...] | None:
    """A non-empty list of slugs; in a sequence each may be `a|b` alternatives."""
    seq = fields.seq(key, required=True)
    if seq is None:
        return None
    count = len(fields.problems.items)
    for i, item in enumerate(seq.items, 1):
        item_what = f"item {i} of `{key}` in {fields.what}"
        if not (isinstance(item, YScalar) and isinstance(item.value, str) and item.value.strip()):
            fields.problems.add(f"{item_what} must be a non-empty string, got {describe(item)}", item.pos)
            continue
        parts = [part.strip() for part in item.value.split("|")] if sequence else [item.value]
        if "" in parts:
            fields.problems.add(f"{item_what} has an empty alternative in {item.value!r}", item.pos)
            continue
        for message in filter(None, (_slug_problem(part, item_what, framework_tools, sequence=sequence) for part in parts)):
            fields.problems.add(message, item.pos)
    if len(fields.problems.items) > count:
        return None
    return tuple(item.value for item in seq.items)  # type: ignore[union-attr]


def _tool_called(fields: Fields, problems: Problems, what: str, framework_tools: frozenset[str]) -> Check | None:
    slug, catalog = _slug(fields, "toolSlug", framework_tools, required=True), fields.string("catalogSlug")
    return ToolCalled(slug, catalog, framework_tools) if slug is not None else None


def _tool_sequence(fields: Fields, problems: Problems, what: str, framework_tools: frozenset[str]) -> Check | None:
    sequence = _slugs(fields, "sequence", framework_tools, sequence=True)
    contiguous = fields.boolean("contiguous", required=True)
    catalog = fields.string("catalogSlug")
    if sequence is None or contiguous is None:
        return None
    return ToolSequence(sequence, contiguous, catalog, framework_tools)


def _no_tool_called(fields: Fields, problems: Problems, what: str, framework_tools: frozenset[str]) -> Check | None:
    slugs, catalog = _slugs(fields, "toolSlugs", framework_tools), fields.string("catalogSlug")
    return NoToolCalled(slugs, catalog, framework_tools) if slugs is not None else None


def _confirmation(fields: Fields, problems: Problems, what: str, framework_tools: frozenset[str]) -> Check | None:
    slug = _slug(fields, "beforeToolSlug", framework_tools, required=True)
    catalog = fields.string("catalogSlug")
    pattern = fields.regex("pattern", required=True)
    window = fields.integer("withinLastNTurns", minimum=1)
    if slug is None or pattern is None or (fields.has("withinLastNTurns") and window is None):
        return None
    return ConfirmationRequested(slug, pattern, catalog, DEFAULT_WINDOW if window is None else window, framework_tools)


def _llm_judge(fields: Fields, problems: Problems, what: str, framework_tools: frozenset[str]) -> Check | None:
    count = len(problems.items)
    criterion = fields.string("criterion", required=True)
    rubric, model = fields.string("rubric"), fields.string("model")
    if criterion is None or len(problems.items) > count:
        return None
    return LlmJudge(criterion, rubric, model)


def _other_evaluator(op: str, ops: tuple[str, ...]) -> str:
    """A hint for an op of the other field evaluator, else a did-you-mean."""
    for name, other in (("tool_input_contains", INPUT_OPS), ("tool_output_contains", OUTPUT_OPS)):
        if other is not ops and op in other:
            return f" (`{op}` is an op of `{name}`)"
    return did_you_mean(op, ops)


def _assertion(path: str, node: YNode, problems: Problems, what: str, ops: tuple[str, ...]) -> FieldAssertion | None:
    a_what = f"assertion `{path}` of {what}"
    mapping = problems.expect_map(node, a_what, node.pos)
    if mapping is None:
        return None
    op_node = mapping.get("op")
    op = op_node.value if isinstance(op_node, YScalar) and op_node.value in ops else None
    known = ("op", *OP_FIELDS[op]) if op else ("op", "value", "values", "pattern")
    fields = Fields(mapping, problems, a_what, known)
    count = len(problems.items)
    written = fields.string("op", required=True)
    if written is not None and op is None:
        problems.add(f"`op` in {a_what} must be one of {', '.join(ops)}, got {written!r}{_other_evaluator(written, ops)}", op_node.pos)
    if op is None:
        return None
    argument = _op_argument(op, fields, a_what)
    if argument is None or len(problems.items) > count:
        return None
    return FieldAssertion(path, op, **argument)


def _op_argument(op: str, fields: Fields, what: str) -> dict | None:
    """The field an op takes (`value`, `values` or `pattern`), typed as the seed types it."""
    if op == "exists":
        return {}
    if op in ("gt", "lt"):
        number = fields.number("value", required=True)
        return None if number is None else {"value": number}
    if op == "contains":
        text = fields.string("value", required=True)
        return None if text is None else {"value": text}
    if op == "matches":
        pattern = fields.regex("pattern", required=True)
        return None if pattern is None else {"pattern": pattern}
    key = "value" if op == "equals" else "values"
    node = fields.get(key, required=True)
    if node is None:
        return None
    if op == "equals":
        if isinstance(node, YScalar) and isinstance(node.value, (str, int, float)):
            return {"value": node.value}
        fields.problems.add(f"`value` in {what} must be a string, a number or a boolean, got {describe(node)}", node.pos)
        return None
    seq = fields.problems.expect_seq(node, f"`values` in {what}", node.pos)
    if seq is None:
        return None
    for i, item in enumerate(seq.items, 1):
        if not (isinstance(item, YScalar) and isinstance(item.value, str)):
            fields.problems.add(f"item {i} of `values` in {what} must be a string, got {describe(item)}", item.pos)
    return {"values": tuple(item.value for item in seq.items if isinstance(item, YScalar))}


def _field_check(cls: type) -> Parser:
    def parse(fields: Fields, problems: Problems, what: str, framework_tools: frozenset[str]) -> Check | None:
        count = len(problems.items)
        slug, catalog = _slug(fields, "toolSlug", framework_tools, required=True), fields.string("catalogSlug")
        mapping = fields.mapping("assertions", required=True)
        assertions = []
        if mapping is not None and not mapping.values:
            problems.add(f"`assertions` in {what} must hold at least one assertion", mapping.pos)
        for path, node in (mapping.values.items() if mapping is not None else ()):
            if not path.strip():
                problems.add(f"an assertion path in {what} must not be empty", mapping.keys[path])
                continue
            assertion = _assertion(path, node, problems, what, cls.ops)
            if assertion is not None:
                assertions.append(assertion)
        if slug is None or mapping is None or len(problems.items) > count:
            return None
        return cls(slug, tuple(assertions), catalog, framework_tools)

    return parse


PARSERS: dict[str, Parser] = {
    "tool_called": _tool_called,
    "tool_sequence": _tool_sequence,
    "tool_input_contains": _field_check(ToolInputContains),
    "tool_output_contains": _field_check(ToolOutputContains),
    "no_tool_called": _no_tool_called,
    "confirmation_requested": _confirmation,
    "llm_judge": _llm_judge,
}
assert PARSERS.keys() == SOP_EVALUATORS.keys()


def parse_evaluator(
    node: YNode | None,
    problems: Problems,
    pos: Pos,
    what: str,
    *,
    ignore: tuple[str, ...] = (),
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS,
) -> Check | None:
    """An evaluator mapping `{type: ..., ...}`; `ignore` names keys another reader handles."""
    mapping = problems.expect_map(node, what, pos)
    if mapping is None:
        return None
    type_node = mapping.get("type")
    if type_node is None:
        problems.add(f"{what} is missing required field `type` (one of {', '.join(PARSERS)})", mapping.pos)
        return None
    kind = type_node.value if isinstance(type_node, YScalar) else None
    if not isinstance(kind, str):
        problems.add(f"`type` in {what} must be a string, got {describe(type_node)}", type_node.pos)
        return None
    if kind not in PARSERS:
        hint = did_you_mean(kind, PARSERS) or f" (one of {', '.join(PARSERS)})"
        problems.add(f"unknown evaluator type `{kind}`{hint}", type_node.pos)
        return None
    evaluator_what = f"`{kind}` in {what}"
    fields = Fields(mapping, problems, evaluator_what, ("type", *EVALUATOR_FIELDS[kind], *ignore))
    return PARSERS[kind](fields, problems, evaluator_what, framework_tools)


def _weight(fields: Fields) -> float | None:
    weight = fields.number("weight", minimum=0)
    if weight is not None and math.isinf(weight):
        fields.problems.add(f"`weight` in {fields.what} must be a finite number, got {weight}", fields.node.values["weight"].pos)
        return None
    return weight


def _step(node: YNode, problems: Problems, number: int, what: str, framework_tools: frozenset[str]) -> tuple[Step | None, Pos | None]:
    """One step and the position of its `id` (None when the id is positional)."""
    step_what = f"step {number} of {what}"
    mapping = problems.expect_map(node, step_what, node.pos)
    if mapping is None:
        return None, None
    if "evaluator" not in mapping.values:
        return _inline_step(mapping, problems, number, step_what, framework_tools)
    fields = Fields(mapping, problems, step_what, STEP_FIELDS)
    step_id = fields.string("id")
    label = fields.string("label")
    required = fields.boolean("required")
    weight = _weight(fields)
    evaluator = parse_evaluator(
        fields.get("evaluator"), problems, fields.pos("evaluator"), f"the evaluator of {step_what}", framework_tools=framework_tools
    )
    if evaluator is None or (fields.has("id") and step_id is None):
        return None, None
    step = Step(
        step_id if step_id is not None else f"step-{number}",
        label,
        True if required is None else required,
        1.0 if weight is None else float(weight),
        evaluator,
    )
    return step, (fields.node.values["id"].pos if step_id is not None else None)


def _inline_step(
    mapping: YMap, problems: Problems, number: int, step_what: str, framework_tools: frozenset[str]
) -> tuple[Step | None, None]:
    """A step written as the evaluator mapping itself: its id is its position."""
    if "type" not in mapping.values:
        problems.add(f"{step_what} must have an `evaluator` (a step) or a `type` (an evaluator itself)", mapping.pos)
        return None, None
    inline = tuple(key for key in STEP_FIELDS if key in mapping.values)
    for key in inline:
        problems.add(
            f"`{key}` in {step_what} belongs to a step: write the step as `{{{key}: ..., evaluator: {{type: ...}}}}` to set it",
            mapping.keys[key],
        )
    evaluator = parse_evaluator(mapping, problems, mapping.pos, step_what, ignore=inline, framework_tools=framework_tools)
    if inline or evaluator is None:
        return None, None
    return Step(f"step-{number}", None, True, 1.0, evaluator), None


def parse_steps(
    node: YNode | None, problems: Problems, pos: Pos, what: str, framework_tools: frozenset[str] = FRAMEWORK_TOOLS
) -> StepSet | None:
    """A list of steps (`goals.sop`, `sop.steps`); None when any problem was found.

    `framework_tools`: the tools the evaluators leave out of the tool log (the definition's setting).
    """
    seq = problems.expect_seq(node, f"{what} (a list of steps)", pos)
    if seq is None:
        return None
    count = len(problems.items)
    steps: list[Step] = []
    seen: dict[str, tuple[int, Pos]] = {}
    for number, item in enumerate(seq.items, 1):
        step, id_pos = _step(item, problems, number, what, framework_tools)
        if step is None:
            continue
        if step.id in seen:
            first, first_pos = seen[step.id]
            by_position = "" if id_pos is not None else f" (step {number} has no `id`, so it gets `{step.id}` by position)"
            problems.add(
                f"duplicate step id `{step.id}` in {what}: step {first} at line {first_pos.line} already uses it{by_position}",
                id_pos or item.pos,
            )
            continue
        seen[step.id] = (number, id_pos or item.pos)
        steps.append(step)
    if len(problems.items) > count:
        return None
    return StepSet(tuple(steps))


def parse_sop(root: YNode | None, problems: Problems, path: str) -> Sop | None:
    body = file_body(root, problems, "sop", "an SOP")
    if body is None:
        return None
    fields = Fields(body, problems, "`sop`", SOP_FIELDS)
    sop_id = fields.string("id", required=True)
    name = fields.string("name", required=True)
    threshold = fields.number("threshold", minimum=0, maximum=1)
    framework_tools = framework_tools_setting(fields)
    steps_node = fields.get("steps", required=True)
    steps = parse_steps(steps_node, problems, fields.pos("steps"), "`sop.steps`", framework_tools) if steps_node is not None else None
    if problems or sop_id is None or name is None or steps is None:
        return None
    return Sop(sop_id, name, StepSet(steps.steps, threshold), path, framework_tools)


def load_sop(path: str | Path, environ: dict[str, str] | None = None) -> Sop:
    """Read and validate one SOP file; raises `LoadError` listing every problem."""
    return load_definition_file(path, parse_sop, "an SOP", environ)


__all__ = ["EVALUATOR_FIELDS", "PARSERS", "load_sop", "parse_evaluator", "parse_sop", "parse_steps"]
