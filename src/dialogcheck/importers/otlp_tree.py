"""The span tree of one trace, built once, so every walk over parent ids is one pass over the trace.

A span whose parent is not in the trace (a partial export) is a root. Parent
ids that form a cycle are refused as bad input: a cycle has no root to order
it from and no innermost span, so whatever order or nesting the import chose
would be a guess that a verdict then trusts.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._shown import counted
from ..errors import LoadError
from .otlp_spans import Span

_SHOWN = 4  # span ids of a cycle named in its error; a longer one is cut in the middle


def _start(span: Span) -> tuple[int, str]:
    return span.start, span.span_id


@dataclass(frozen=True)
class SpanTree:
    """A trace's spans in depth-first order (a parent before its children, siblings by start), with their children."""

    #: Every span of the trace, in that order (a span id written twice: both, at its first place).
    ordered: tuple[Span, ...]
    order: dict[str, int]
    children: dict[str, tuple[Span, ...]]

    @classmethod
    def of(cls, spans: list[Span]) -> SpanTree:
        by_id = {s.span_id: s for s in spans}
        roots: list[Span] = []
        children: dict[str, list[Span]] = {}
        for span in spans:
            if span.parent_id in by_id:
                children.setdefault(span.parent_id, []).append(span)
            else:
                roots.append(span)
        kids = {parent: tuple(sorted(found, key=_start)) for parent, found in children.items()}
        order: dict[str, int] = {}
        stack = sorted(roots, key=_start, reverse=True)
        while stack:
            span = stack.pop()
            if span.span_id in order:
                continue  # a span id written twice: its first place stands
            order[span.span_id] = len(order)
            stack.extend(reversed(kids.get(span.span_id, ())))
        if len(order) < len(by_id):
            _refuse_cycle(next(s for s in spans if s.span_id not in order), by_id)
        return cls(tuple(sorted(spans, key=lambda s: order[s.span_id])), order, kids)

    def descendants_first(self) -> tuple[Span, ...]:
        """Every span after all the spans under it."""
        return self.ordered[::-1]


def _refuse_cycle(unreached: Span, by_id: dict[str, Span]) -> None:
    """A span no root reaches has a cycle above it: name the cycle, at the first of its spans in the file."""
    seen: dict[str, int] = {}
    path: list[str] = []
    span_id = unreached.span_id
    while span_id not in seen:  # every step is a new id, so this ends within the trace's size
        seen[span_id] = len(path)
        path.append(span_id)
        span_id = by_id[span_id].parent_id  # type: ignore[assignment]  # unreached: its parent is in the trace and unreached too
    cycle = path[seen[span_id]:]
    first = min((by_id[s] for s in cycle), key=lambda s: (s.item.index, s.path))
    at = cycle.index(first.span_id)
    cycle = [*cycle[at:], *cycle[:at]]
    shown = " -> ".join([*cycle, first.span_id] if len(cycle) <= _SHOWN else [*cycle[:_SHOWN - 1], "...", cycle[-1], first.span_id])
    raise LoadError([first.item.problem(
        f"the parents of span {first.span_id} form a cycle of {counted(len(cycle), 'span')} "
        f"({shown}, each arrow to the span's parent): expected the spans of a trace to form a tree under `parentSpanId`",
        (*first.path, "parentSpanId"),
    )])
