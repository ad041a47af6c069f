"""SOP tool-log evaluators: `tool_called`, `tool_sequence`, `no_tool_called`.

They read only the tool log (counted runs: framework tools left out, by the
list the SOP was loaded with) and share one name resolution, so
`catalogSlug` means the same in every SOP evaluator (docs/sop-reference.md,
"Catalog").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from .._shown import counted
from ..events.model import Conversation, ToolRun
from .base import Check, CheckResult, at, framework_tools_field
from .schema import spec

#: How many calls an explanation lists before it says "and N more".
SHOWN_CALLS = 8


def resolves(run: ToolRun, tool_slug: str, catalog_slug: str | None = None) -> bool:
    """Whether `run` is a call of `tool_slug` (from `catalog_slug`, when given)."""
    if catalog_slug is None:
        return run.tool_name == tool_slug
    name = run.tool_name
    if name == tool_slug:
        return run.connector == catalog_slug
    # `endswith` first: most runs are other tools, and it spares building the two qualified names.
    if name.endswith(tool_slug) and name in (f"{catalog_slug}_{tool_slug}", f"{catalog_slug}.{tool_slug}"):
        connector = run.connector
        return connector is None or connector == catalog_slug
    return False


def calls_of(log: Sequence[ToolRun], tool_slug: str, catalog_slug: str | None = None) -> list[ToolRun]:
    """The calls of one tool in a tool log, in order."""
    return [run for run in log if resolves(run, tool_slug, catalog_slug)]


def slug_name(tool_slug: str, catalog_slug: str | None) -> str:
    """`get_order`, or `get_order` from catalog `shop`, as explanations write it."""
    return f"`{tool_slug}`" if catalog_slug is None else f"`{tool_slug}` (catalog `{catalog_slug}`)"


def call_name(run: ToolRun) -> str:
    """A call as explanations write it: `name [connector] at event 4 (turn 2)`."""
    connector = run.connector
    shown = f" [{connector}]" if connector is not None else ""
    return f"{run.tool_name}{shown} at {at(run)}"


def listing(runs: Sequence[ToolRun], limit: int = SHOWN_CALLS) -> str:
    shown = ", ".join(call_name(run) for run in runs[:limit])
    return shown + (f" and {len(runs) - limit:,} more" if len(runs) > limit else "")


def describe_log(log: Sequence[ToolRun]) -> str:
    """What the tool log held, for a failure: every call looked at."""
    if not log:
        return "the tool log is empty (no counted tool calls)"
    return f"tool log ({counted(len(log), 'call')}): {listing(log)}"


@dataclass(frozen=True)
class ToolCalled(Check):
    """The tool log holds at least one call of the tool."""

    key = "tool_called"

    tool_slug: str = spec(name="toolSlug", tool_slug=True)
    catalog_slug: str | None = spec(None, name="catalogSlug")
    framework_tools: frozenset[str] = framework_tools_field()

    @cached_property
    def label(self) -> str:
        return f"tool_called {self.tool_slug}"

    def evaluate(self, conversation: Conversation) -> CheckResult:
        log = conversation.tool_log(self.framework_tools)
        calls = calls_of(log, self.tool_slug, self.catalog_slug)
        name = slug_name(self.tool_slug, self.catalog_slug)
        if not calls:
            return self.result(False, f"{name} was never called; {describe_log(log)}")
        more = f" ({counted(len(calls), 'call')}: {listing(calls)})" if len(calls) > 1 else ""
        return self.result(True, f"{name} called at {at(calls[0])}{more}", [run.index for run in calls])


def alternatives(element: str) -> tuple[str, ...]:
    """`get_order|look_up_order` -> both slugs; the loader rejects empty parts."""
    return tuple(part.strip() for part in element.split("|"))


@dataclass(frozen=True)
class ToolSequence(Check):
    """Tools in order: as a subsequence of the log, or as consecutive log entries."""

    key = "tool_sequence"

    sequence: tuple[str, ...] = spec(tool_slug=True, alternatives=True)
    contiguous: bool  # type: ignore[misc]  # `sequence` before it is required too: `spec()` without a default is no default
    catalog_slug: str | None = spec(None, name="catalogSlug")
    framework_tools: frozenset[str] = framework_tools_field()

    @cached_property
    def label(self) -> str:
        return "tool_sequence " + " → ".join(self.sequence)

    @cached_property
    def _alternatives(self) -> tuple[tuple[str, ...], ...]:
        """Each element's slugs, split once per check rather than once per run looked at."""
        return tuple(alternatives(element) for element in self.sequence)

    def _hit(self, run: ToolRun, position: int) -> bool:
        slugs = self._alternatives[position]
        if self.catalog_slug is None:
            return run.tool_name in slugs  # what `resolves` is without a catalog, minus a call per slug
        return any(resolves(run, slug, self.catalog_slug) for slug in slugs)

    def evaluate(self, conversation: Conversation) -> CheckResult:
        log = conversation.tool_log(self.framework_tools)
        return self._contiguous(log) if self.contiguous else self._gapped(log)

    def _chain(self, matched: Sequence[ToolRun]) -> str:
        return ", ".join(call_name(run) for run in matched)

    def _gapped(self, log: Sequence[ToolRun]) -> CheckResult:
        # Earliest match each time: if any in-order choice exists, this finds one.
        matched: list[ToolRun] = []
        start = 0
        for position, element in enumerate(self.sequence):
            found = next((i for i in range(start, len(log)) if self._hit(log[i], position)), None)
            if found is None:
                after = f" after {call_name(matched[-1])}" if matched else ""
                so_far = f"matched {self._chain(matched)}; " if matched else ""
                detail = f"{so_far}no call of `{element}`{after}; {describe_log(log)}"
                return self.result(False, detail, [run.index for run in matched])
            matched.append(log[found])
            start = found + 1
        return self.result(True, f"in order: {self._chain(matched)}", [run.index for run in matched])

    def _contiguous(self, log: Sequence[ToolRun]) -> CheckResult:
        best: list[ToolRun] = []
        best_next: ToolRun | None = None
        for start in range(len(log)):
            run_length = 0
            while (
                run_length < len(self.sequence)
                and start + run_length < len(log)
                and self._hit(log[start + run_length], run_length)
            ):
                run_length += 1
            matched = list(log[start : start + run_length])
            if run_length == len(self.sequence):
                return self.result(True, f"consecutive: {self._chain(matched)}", [run.index for run in matched])
            if run_length > len(best):
                best = matched
                best_next = log[start + run_length] if start + run_length < len(log) else None
        if not best:
            detail = f"no call of `{self.sequence[0]}`; {describe_log(log)}"
            return self.result(False, detail, [])
        wanted = f"`{self.sequence[len(best)]}`"
        instead = f"then {call_name(best_next)} instead of {wanted}" if best_next else f"then the log ended before {wanted}"
        detail = f"longest consecutive run: {self._chain(best)}, {instead}; {describe_log(log)}"
        return self.result(False, detail, [run.index for run in best])


@dataclass(frozen=True)
class NoToolCalled(Check):
    """None of the forbidden tools appears in the tool log."""

    key = "no_tool_called"

    tool_slugs: tuple[str, ...] = spec(name="toolSlugs", tool_slug=True)
    catalog_slug: str | None = spec(None, name="catalogSlug")
    framework_tools: frozenset[str] = framework_tools_field()

    @cached_property
    def label(self) -> str:
        return "no_tool_called " + ", ".join(self.tool_slugs)

    def evaluate(self, conversation: Conversation) -> CheckResult:
        log = conversation.tool_log(self.framework_tools)
        hits = [run for run in log if any(resolves(run, slug, self.catalog_slug) for slug in self.tool_slugs)]
        names = ", ".join(slug_name(slug, self.catalog_slug) for slug in self.tool_slugs)
        if hits:
            return self.result(False, f"forbidden tool called: {listing(hits)}", [run.index for run in hits])
        count = f"{counted(len(log), 'call')} in the tool log"
        return self.result(True, f"none of {names} was called ({count})")


__all__ = [
    "NoToolCalled",
    "ToolCalled",
    "ToolSequence",
    "alternatives",
    "call_name",
    "calls_of",
    "describe_log",
    "listing",
    "resolves",
    "slug_name",
]
