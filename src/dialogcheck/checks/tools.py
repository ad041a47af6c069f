"""Tool checks: `tool_executed` and `tools_within_one_turn`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .._shown import counted
from ..events.model import Conversation, Record, ToolRun
from ..events.values import ABSENT, first_difference
from .base import Check, CheckResult, Difference, EventCheck, at, framework_tools_field
from .compared import SUBSET, Compared
from .schema import spec

if TYPE_CHECKING:
    from .._fields import Fields, Problems
    from .._yaml import YMap
    from .load import Context

def _first_path(name: str, actual: Any, expected: Any) -> str:
    """The path of the first difference inside field `name` (the field itself for values that are not both containers)."""
    found = None if actual is ABSENT else first_difference(actual, expected)
    return name if found is None else name + found[0]


def _says_outcome(field: str, actual: Any, expected: Any) -> str:
    outcome = "the run failed" if actual else "the run succeeded"
    return f"{outcome} (is_error {str(actual).lower()}, expected {str(expected).lower()})"


def _mcp_server_goes_with_mcp(values: Mapping[str, Any], fields: Fields, context: Context) -> None:
    """`mcp_server` is needed with `source: mcp` (it is not inferred from the tool name), and refused with `local`."""
    source = values.get("source")
    if source == "mcp" and not fields.has("mcp_server"):
        fields.problems.add(f"{fields.what} with `source: mcp` needs `mcp_server` (it is not inferred from the tool name)", fields.node.pos)
    if source == "local" and fields.has("mcp_server"):
        fields.problems.add(f"{fields.what} with `source: local` must not set `mcp_server`", fields.pos("mcp_server"))


def _times_at_top_level(cls: type, fields: Fields, context: Context) -> str | None:
    """Inside `sequencing` or `tools_within_one_turn` each entry matches one run, so a count means nothing there."""
    if context.inside:
        return f"`times` is not allowed inside `{context.inside}`: each entry there matches one run"
    return None


def _not_a_framework_tool(call: ToolExecuted, node: YMap, problems: Problems, what: str, context: Context) -> None:
    """A framework tool is never a counted run, so a call of `tools_within_one_turn` naming one could never match."""
    if call.tool_name in context.framework_tools:
        problems.add(
            f"`{call.tool_name}` is a framework tool: it is never counted, so {what} could never match it"
            " (an agent that owns a tool of this name sets `framework_tools` in eval/conftest.yml)",
            node.values["tool_name"].pos,
        )


@dataclass(frozen=True)
class ToolExecuted(EventCheck[ToolRun]):
    """One recorded tool run matching every field set; with `times`, exactly that many."""

    key = "tool_executed"
    compared = (
        Compared("tool_name", "tool_name"),
        Compared("source", "source"),
        Compared("mcp_server", "mcp_server"),
        Compared("skill_id", "skill_id"),
        Compared("arguments", "arguments", SUBSET),
        Compared("is_error", "is_error", says=_says_outcome),
    )

    tool_name: str
    source: str = spec(choices=("local", "mcp"))
    mcp_server: str | None = spec(None, check=_mcp_server_goes_with_mcp)
    skill_id: str | None = None
    arguments: Mapping[str, Any] | None = spec(None, hash=False)
    is_error: bool | None = None
    times: int | None = spec(None, minimum=0, refuse=_times_at_top_level)

    def __hash__(self) -> int:
        return hash((self.tool_name, self.source, self.mcp_server, self.skill_id, self.is_error, self.times))

    @cached_property
    def label(self) -> str:
        where = f"mcp:{self.mcp_server}" if self.source == "mcp" else "local"
        # Two checks of one tool (its arguments; how often it ran) must not read alike in a report.
        arguments = " with arguments" if self.arguments else ""
        times = f" times {self.times}" if self.times is not None else ""
        return f"tool_executed {self.tool_name} ({where}){arguments}{times}"

    def candidates(self, conversation: Conversation) -> Sequence[ToolRun]:
        return conversation.tool_runs

    def same_subject(self, event: ToolRun) -> bool:
        return event.tool_name == self.tool_name

    def differences(self, event: ToolRun) -> list[Difference]:
        return [
            Difference(name, _first_path(name, actual, expected), actual, expected)
            for _, name, actual, expected in self.comparison.differences(event)
        ]

    def describe_event(self, event: ToolRun) -> str:
        return f"tool_executed {event.label}"

    def evaluate(self, conversation: Conversation) -> CheckResult:
        if self.times is None:
            return super().evaluate(conversation)
        candidates = self.candidates(conversation)
        runs = [e for e in candidates if self.matches(e)]
        where = ", ".join(at(e) for e in runs[:5]) + (" …" if len(runs) > 5 else "")
        if len(runs) == self.times:
            detail = f"ran {counted(len(runs), 'time')} as expected" + (f": {where}" if runs else "")
            return self.result(True, detail, [e.index for e in runs])
        if not runs:
            miss, evidence, differences = self.explain_miss(candidates)
            return self.result(False, f"ran 0 times, expected exactly {self.times:,}: {miss}", evidence, differences)
        return self.result(
            False, f"ran {counted(len(runs), 'time')}, expected exactly {self.times:,}: {where}", [e.index for e in runs]
        )


def _max_matching(edges: Sequence[Sequence[int]], run_count: int) -> list[int | None]:
    """Kuhn's augmenting paths: assign each call a distinct run it accepts.

    Returns, per call, the run position assigned or None. Exact, not greedy.
    """
    run_owner: list[int | None] = [None] * run_count

    def augment(call: int, seen: list[bool]) -> bool:
        for run in edges[call]:
            if seen[run]:
                continue
            seen[run] = True
            owner = run_owner[run]
            if owner is None or augment(owner, seen):
                run_owner[run] = call
                return True
        return False

    for call in range(len(edges)):
        augment(call, [False] * run_count)
    assigned: list[int | None] = [None] * len(edges)
    for run, owner in enumerate(run_owner):
        if owner is not None:
            assigned[owner] = run
    return assigned


def _ordered_matching(edges: Sequence[Sequence[int]]) -> list[int | None]:
    """Earliest run for each call after the previous one's: optimal for an ordered subsequence."""
    assigned: list[int | None] = []
    after = -1
    for accepted in edges:
        run = next((r for r in accepted if r > after), None)
        assigned.append(run)
        if run is None:
            break
        after = run
    return assigned + [None] * (len(edges) - len(assigned))


class TurnAttempt(Record, frozen=True):
    """How well one turn's counted runs cover the listed calls (a record: one per turn per conversation)."""

    turn: int
    runs: Sequence[ToolRun]
    assigned: list[int | None]

    @property
    def matched(self) -> int:
        """How many calls were assigned a run."""
        return len(self.assigned) - self.assigned.count(None)

    @property
    def extras(self) -> list[ToolRun]:
        used = {run for run in self.assigned if run is not None}
        return [run for i, run in enumerate(self.runs) if i not in used]


@dataclass(frozen=True)
class ToolsWithinOneTurn(Check):
    """Some single turn holds distinct counted runs, one per listed call."""

    key = "tools_within_one_turn"

    allow_extra_calls: bool
    ordered: bool = False
    #: Read after the flags, so keyword-only.
    calls: tuple[ToolExecuted, ...] = spec(
        kw_only=True,
        item="call",
        min_items=2,
        unknown_tag="each call of {what} is a `tool_executed` entry, got `{key}`{hint}",
        check_item=_not_a_framework_tool,
    )
    framework_tools: frozenset[str] = framework_tools_field()

    @cached_property
    def label(self) -> str:
        return "tools_within_one_turn " + ", ".join(call.tool_name for call in self.calls)

    def attempt(self, turn: int, runs: Sequence[ToolRun]) -> TurnAttempt:
        edges = [[i for i, run in enumerate(runs) if call.matches(run)] for call in self.calls]
        assigned = _ordered_matching(edges) if self.ordered else _max_matching(edges, len(runs))
        return TurnAttempt(turn, runs, assigned)

    def succeeded(self, attempt: TurnAttempt) -> bool:
        if attempt.matched < len(self.calls):
            return False
        return self.allow_extra_calls or not attempt.extras

    def evaluate(self, conversation: Conversation) -> CheckResult:
        by_turn: dict[int, list[ToolRun]] = {}
        for run in conversation.tool_log(self.framework_tools):
            by_turn.setdefault(run.turn, []).append(run)
        if not by_turn:
            return self.result(False, "no counted tool run was recorded in any turn")
        best: TurnAttempt | None = None
        best_closeness = (-1, 0)
        for turn, runs in by_turn.items():
            attempt = self.attempt(turn, runs)
            if self.succeeded(attempt):
                chosen = [runs[r] for r in attempt.assigned if r is not None]
                listed = ", ".join(f"{run.tool_name} at event {run.index}" for run in chosen)
                return self.result(True, f"turn {turn} holds {listed}", [run.index for run in chosen])
            closeness = self._closeness(attempt)
            if closeness > best_closeness:  # every closeness beats (-1, 0): the first turn is always taken
                best, best_closeness = attempt, closeness
        assert best is not None
        return self.result(False, self._explain(best), [run.index for run in best.runs])

    def _closeness(self, attempt: TurnAttempt) -> tuple[int, int]:
        """More matched calls first; then, when extras are not allowed, fewer extras. Ties keep the earlier turn."""
        return attempt.matched, 0 if self.allow_extra_calls else -len(attempt.extras)

    def _explain(self, best: TurnAttempt) -> str:
        order = " in the listed order" if self.ordered else ""
        head = f"no turn holds all {len(self.calls)} calls{order}; closest: turn {best.turn}"
        if best.matched < len(self.calls):
            missing = [self.calls[i] for i, run in enumerate(best.assigned) if run is None]
            names = ", ".join(call.label.removeprefix("tool_executed ") for call in missing)
            ran = ", ".join(f"{run.tool_name} (event {run.index})" for run in best.runs)
            return f"{head} matched {best.matched} of {len(self.calls)}, lacking {names}; its counted runs: {ran}"
        extras = ", ".join(f"{run.tool_name} at event {run.index}" for run in best.extras)
        return f"{head} holds every call but also extra counted runs ({extras}) and allow_extra_calls is false"
