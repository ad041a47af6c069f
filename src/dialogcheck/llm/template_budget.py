"""How much work a prompt template may do while it renders, so a project's template cannot hold a run for hours.

A prompt is a few loops over a handful of values; jinja2's sandbox keeps a
template from Python's internals, not from spending time: nested
`range(100000)` loops ran 10^10 times. Here every loop iteration and every
call is a step of a per-render budget, with a wall-clock limit checked as
the steps go; `range` holds at most `MAX_RANGE` items; `*` and `**` may not
make a value past the bounds, nor may a width or a count given to a filter,
a string method or a `%` or `{}` format (`center(10**9)`); a concatenation
(`~`), `+`, what a filter or a call returns, or the rendered text may not pass
`MAX_CHARS`. What is over budget raises `OverBudget`.
`budget_problems` finds loops over constant ranges that would pass the
budget when the config is loaded, before anything runs.
"""

from __future__ import annotations

import functools
import re
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


#: The width or precision of a `%` or `{}` format spec (`%1000000000d`, `{:>1000000000}`, `{:.1000000000f}`).
_FORMAT_WIDTHS = re.compile(r"%[#0 +\-]*(\d*)(?:\.(\d*))?|\{[^{}]{0,200}?:[^{}]{0,200}?(\d+)(?:\.(\d+))?[^{}\d]{0,20}\}")
#: String methods and filters whose result grows with an integer they are given.
_WIDENING = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "indent", "wordwrap", "truncate"})


def _too_wide(name: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why calling `name` (a filter, or a method of `target`) with these arguments would make too big a value."""
    numbers = [n for n in (*args, *kwargs.values()) if isinstance(n, int) and not isinstance(n, bool)]
    if name in _WIDENING and any(n > MAX_CHARS for n in numbers):
        return f"`{name}` was given a width of {max(numbers):,}, past the bound of {MAX_CHARS:,}"
    if name in ("format", "format_map", "%") and isinstance(target, str):
        widths = [int(w) for found in _FORMAT_WIDTHS.finditer(target[:MAX_CHARS]) for w in found.groups() if w]
        if any(w > MAX_CHARS for w in widths) or ("*" in target and any(abs(n) > MAX_CHARS for n in numbers)):
            return f"a format of `{name}` asks for a width past the bound of {MAX_CHARS:,}"
    if name == "replace" and isinstance(target, str) and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]) and args[0]:
        grows = target.count(args[0]) * (len(args[1]) - len(args[0]))
        if len(target) + grows > MAX_CHARS:
            return f"`replace` would make a value of {len(target) + grows:,} items, past the bound of {MAX_CHARS:,}"
    return None


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a filter), refusing a width past the bounds before it runs and a result past them after."""

    @functools.wraps(function)  # keeps jinja2's `jinja_pass_arg` mark, so the filter still gets its context
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _step()
        values = [a for a in args if not hasattr(a, "environment")]  # what the filter is given, less the context
        target, rest = (values[0], tuple(values[1:])) if values else (None, ())
        refused = _too_wide("%" if name == "format" else name, target, rest, kwargs)
        if refused is not None:
            raise OverBudget(refused)
        return sized(function(*args, **kwargs))

    return bounded


class _Counting(NodeTransformer):
    """Rewrites a parsed template so each loop charges its iterations, and each `~` is bounded."""

    def visit_For(self, node: nodes.For) -> nodes.Node:  # noqa: N802 - jinja2's NodeTransformer dispatches on the node's class name
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, _COUNTED, [], [], None, None, lineno=node.iter.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:  # noqa: N802 - jinja2's NodeTransformer dispatches on the node's class name
        self.generic_visit(node)
        return nodes.Filter(node, _SIZED, [], [], None, None, lineno=node.lineno)


class BudgetedSandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, every render of which charges its work to the `Budget` in force."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.filters = {name: _bounded_filter(name, function) for name, function in self.filters.items()}
        self.globals["range"] = bounded_range
        self.filters[_COUNTED] = _counted
        self.filters[_SIZED] = sized

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        return _Counting().visit(super()._parse(source, name, filename))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        given = right if isinstance(right, tuple) else (right,)
        refused = _too_wide("%", left, given, {}) if operator == "%" else _too_big_product(operator, left, right)
        if refused is not None:
            raise OverBudget(refused)
        return sized(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja2's own signature
        _step()
        method = getattr(__obj, "__wrapped__", __obj)  # the sandbox hands `str.format` out wrapped
        refused = _too_wide(getattr(method, "__name__", ""), getattr(method, "__self__", None), args, kwargs)
        if refused is not None:
            raise OverBudget(refused)
        return sized(super().call(__context, __obj, *args, **kwargs))


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
    call = node.node if isinstance(node, nodes.Filter) and node.name == _COUNTED else node
    if not (isinstance(call, nodes.Call) and isinstance(call.node, nodes.Name) and call.node.name == "range"):
        return None
    bounds = [a.value for a in call.args if isinstance(a, nodes.Const) and isinstance(a.value, int)]
    if call.kwargs or call.dyn_args or call.dyn_kwargs or len(bounds) != len(call.args):
        return None
    try:
        return len(range(*bounds))
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
