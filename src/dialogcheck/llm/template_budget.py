"""How much work a prompt template may do while it renders, so a project's template cannot hold a run for hours.

A prompt is a few loops over a handful of values; jinja2's sandbox keeps a
template from Python's internals, not from spending time: nested
`range(100000)` loops ran 10^10 times. Here every loop iteration and every
call is a step of a per-render budget, with a wall-clock limit checked as
the steps go; `range` holds at most `MAX_RANGE` items; `*` and `**` may not
make a value past the bounds; a concatenation (`~`), `+` or the rendered
text may not pass `MAX_CHARS`. What is over budget raises `OverBudget`.
`budget_problems` finds loops over constant ranges that would pass the
budget when the config is loaded, before anything runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

#: The most items a template's `range` may hold.
MAX_RANGE = 10_000
#: Loop iterations and calls one render may take.
MAX_STEPS = 1_000_000
#: The longest text a render may make, rendered or on the way (a judge prompt holds up to `max_prompt_chars`).
MAX_CHARS = 16_000_000
#: The bits an integer power may have.
MAX_POWER_BITS = 100_000
#: Wall-clock seconds one render may take.
MAX_SECONDS = 30.0
#: How often (in steps) the clock is read.
_CLOCK_EVERY = 1024
_COUNTED = "dialogcheck_counted_loop"
_SIZED = "dialogcheck_sized_text"


class OverBudget(Exception):
    """A template did more work than a prompt needs; says which bound it passed."""


class Budget:
    """The steps and the deadline of one render."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, seconds: float = MAX_SECONDS):
        self.steps = 0
        self.clock = clock
        self.seconds = seconds
        self.deadline = clock() + seconds

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise OverBudget(f"it took more than {MAX_STEPS:,} loop iterations and calls")
        if self.steps % _CLOCK_EVERY == 0 and self.clock() > self.deadline:
            raise OverBudget(f"it rendered for more than {self.seconds:g} s")


_budget: ContextVar[Budget | None] = ContextVar("dialogcheck_template_budget", default=None)


@contextmanager
def budgeted(budget: Budget) -> Iterator[Budget]:
    """Charge every step of what renders inside to `budget`."""
    token = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(token)


def _step() -> None:
    budget = _budget.get()
    if budget is not None:
        budget.step()


def sized(value: Any) -> Any:
    """`value`, when it is no longer than `MAX_CHARS`."""
    if isinstance(value, (str, list, tuple)) and len(value) > MAX_CHARS:
        raise OverBudget(f"it made a value of {len(value):,} items, past the bound of {MAX_CHARS:,}")
    return value


def bounded_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise OverBudget(f"`range` of {len(numbers):,} items passes the bound of {MAX_RANGE:,}")
    return numbers


def _counted(values: Iterable[Any]) -> Iterator[Any]:
    for value in values:
        _step()
        yield value


def _too_big_product(operator: str, left: Any, right: Any) -> str | None:
    """Why `left OPERATOR right` would be too big to make, before it is made."""
    def whole(n: Any) -> bool:
        return isinstance(n, int) and not isinstance(n, bool)

    if operator == "*":
        for times, sequence in ((left, right), (right, left)):
            if whole(times) and isinstance(sequence, (str, list, tuple)) and len(sequence) * times > MAX_CHARS:
                return f"`*` would make a value of {len(sequence) * times:,} items, past the bound of {MAX_CHARS:,}"
    if operator == "**" and whole(left) and whole(right) and abs(left) > 1 and right * abs(left).bit_length() > MAX_POWER_BITS:
        return f"`**` would make a number of more than {MAX_POWER_BITS:,} bits"
    return None


class _Counting(NodeTransformer):
    """Rewrites a parsed template so each loop charges its iterations, and each `~` is bounded."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, _COUNTED, [], [], None, None, lineno=node.iter.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(node, _SIZED, [], [], None, None, lineno=node.lineno)


class BudgetedSandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, every render of which charges its work to the `Budget` in force."""

    intercepted_binops = frozenset({"*", "**", "+"})

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.globals["range"] = bounded_range
        self.filters[_COUNTED] = _counted
        self.filters[_SIZED] = sized

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        return _Counting().visit(super()._parse(source, name, filename))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        refused = _too_big_product(operator, left, right)
        if refused is not None:
            raise OverBudget(refused)
        return sized(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja2's own signature
        _step()
        return super().call(__context, __obj, *args, **kwargs)


def render_within(template: Any, variables: dict[str, Any], budget: Budget) -> str:
    """The rendered text, streamed so a render past `MAX_CHARS` stops there; `OverBudget` when any bound is passed."""
    pieces, length = [], 0
    with budgeted(budget):
        for piece in template.generate(**variables):
            length += len(piece)
            if length > MAX_CHARS:
                raise OverBudget(f"its text passed {MAX_CHARS:,} characters")
            pieces.append(piece)
            budget.step()
    return "".join(pieces)


def _loop_range(node: nodes.Node) -> int | None:
    """How many items a loop's `range(...)` of constants holds; None for anything else."""
    if isinstance(node, nodes.Filter) and node.name == _COUNTED:
        node = node.node
    if not (isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name == "range"):
        return None
    if node.kwargs or node.dyn_args or node.dyn_kwargs or not all(isinstance(a, nodes.Const) and isinstance(a.value, int) for a in node.args):
        return None
    try:
        return len(range(*(a.value for a in node.args)))
    except (TypeError, ValueError):
        return None


def budget_problems(tree: nodes.Node, outer: int = 1) -> Iterator[tuple[str, int, str]]:
    """(message, line, the word to point at) for each loop over constant ranges that would pass a bound."""
    for child in tree.iter_child_nodes():
        if not isinstance(child, nodes.For):
            yield from budget_problems(child, outer)
            continue
        items = _loop_range(child.iter)
        if items is not None and items > MAX_RANGE:
            yield f"`range` of {items:,} items passes the bound of {MAX_RANGE:,} a prompt template may loop over", child.lineno, "range"
            continue
        total = outer * (items if items is not None else 1)
        if total > MAX_STEPS:
            yield f"the loops nested here run {total:,} times, past the budget of {MAX_STEPS:,} loop iterations a prompt template may take", child.lineno, "for"
            continue
        yield from budget_problems(child, total)
