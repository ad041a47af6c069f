"""Parse SOP steps (`goals.sop`, SOP files): each step's evaluator is read by its class's schema.

An evaluator is a mapping whose `type` names its class in `SOP_EVALUATORS`;
its other keys are the class's fields, in the seed's camelCase (`toolSlug`)
where the class's field metadata says so (`checks.schema`). The steps around
the evaluators, their ids and the SOP file are read here.
"""

from __future__ import annotations

import math
from pathlib import Path

from .._fields import Fields, Problems, file_body, framework_tools_setting, load_definition_file
from .._yaml import Pos, YMap, YNode
from ..checks.base import Check
from ..checks.load import Context, build
from ..checks.schema import file_keys
from ..checks.sop import SOP_EVALUATORS
from ..events.model import FRAMEWORK_TOOLS
from .model import Sop, Step, StepSet

STEP_FIELDS = ("id", "label", "required", "weight", "evaluator")
SOP_FIELDS = ("id", "name", "steps", "threshold", "framework_tools")


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
    kind = problems.kind_of(mapping, "type", SOP_EVALUATORS, what, lambda kind: f"unknown evaluator type `{kind}`")
    if kind is None:
        return None
    cls = SOP_EVALUATORS[kind]
    fields = Fields(mapping, problems, f"`{kind}` in {what}", ("type", *file_keys(cls), *ignore))
    return build(cls, fields, Context(framework_tools=framework_tools))


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


__all__ = ["SOP_FIELDS", "STEP_FIELDS", "load_sop", "parse_evaluator", "parse_sop", "parse_steps"]
