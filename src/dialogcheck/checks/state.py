"""State checks: what the agent's calls left in its environment (`eval/environments/NAME.yml`).

They read `Conversation.world`, the starting and final state the environment recorded, and say where the two
states (or the final one and what was expected) first differ, with both values. A conversation without a
recorded state cannot be judged by them: each is then `error`, never a pass. Paths are the SOP evaluators'
(`sop_fields.locate`): dots into objects and lists, `items.0.sku`, `$` the whole state.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from typing import TYPE_CHECKING, Any

from .._shown import counted, listed
from ..events.model import Conversation, ReplayRefused, World
from ..events.values import ABSENT, differences, json_equal, show
from .base import Check, CheckResult, Difference, Outcome
from .schema import file_keys, spec
from .sop_fields import WHOLE, locate

if TYPE_CHECKING:
    from .._fields import Fields
    from .load import Context

NO_WORLD = (
    "no environment state was recorded for this conversation: the scenario names no `environment`, "
    "or the conversation was recorded without one"
)
NO_REPLAY = "the environment is not at hand to replay the calls (only its starting and final states were recorded)"

#: Paths a label or a detail lists before it says how many more there are.
SHOWN_PATHS = 5
#: Places a detail counts past its first difference: the count of more is only a hint of how far off it is.
COUNTED_PLACES = 1_000

Keys = tuple[Any, ...]


def dotted(keys: Iterable[Any]) -> str:
    """Keys written as a path of the syntax the checks are written in: `orders.O1.items.0`, `$` for none."""
    return ".".join(map(str, keys)) or WHOLE


def _under(path: str, keys: Keys) -> str:
    """The path of `keys` taken from the value at `path`."""
    return dotted(keys) if path == WHOLE else ".".join((path, *map(str, keys)))


def _at(value: Any, keys: Keys) -> Any:
    """The value `keys` (as `differences` gives them) lead to."""
    for key in keys:
        value = value[key]
    return value


def _held(value: Any) -> str:
    return "no value there" if value is ABSENT else show(value)


def _no_such_path(state: Any, path: str) -> str:
    """Why `path` reaches nothing in `state`: the longest start of it that reaches something, and what is there."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        found = locate(state, head)
        if found is not None:
            return _lacks(head, found[1], parts[cut])
    return _lacks("the state", state, parts[0])


def _lacks(head: str, value: Any, step: str) -> str:
    """What the value at `head` is, that the next `step` of a path finds nothing in it."""
    if isinstance(value, dict):
        return f"{head} has no key `{step}`; its keys: {listed(list(map(str, value)), SHOWN_PATHS) or 'none'}"
    if isinstance(value, list):
        return f"{head} is a list of {counted(len(value), 'item')}"
    return f"{head} is {show(value)}, with nothing inside"


def _difference(field: str, path: str, actual: Any, expected: Any) -> list[Difference]:
    """The `differences` entry of a compared place; none when nothing was expected there (JSON keeps no ABSENT)."""
    return [] if expected is ABSENT else [Difference(field, path, actual, expected)]


@dataclass(frozen=True)
class StateCheck(Check):
    """A check of the environment's state; `judge` sees the recorded world."""

    def evaluate(self, conversation: Conversation) -> CheckResult:
        if conversation.world is None:
            return self.errored(NO_WORLD)
        return self.judge(conversation.world)

    @abstractmethod
    def judge(self, world: World) -> CheckResult:
        """The verdict on the recorded states."""

    def errored(self, detail: str) -> CheckResult:
        """A check that cannot decide: counted as `error`, never as a pass or a failure."""
        return CheckResult(self, Outcome.ERROR, detail)


@dataclass(frozen=True)
class StateEquals(StateCheck):
    """The value at `path` of the final state equals `value` (the typed JSON equality of docs/concepts.md)."""

    key = "state_equals"

    path: str
    value: Any = spec(hash=False, nullable=True)

    @cached_property
    def label(self) -> str:
        return f"{self.key} {self.path}"

    def judge(self, world: World) -> CheckResult:
        final = world.final
        found = locate(final, self.path)
        if found is None:
            reason = _no_such_path(final, self.path)
            detail = f"{self.path}: no such path in the final state ({reason}), expected {show(self.value)}"
            return self.result(False, detail, differences=[Difference(self.path, self.path, ABSENT, self.value)])
        actual = found[1]
        if json_equal(actual, self.value):
            return self.result(True, f"{self.path} is {show(self.value)} in the final state")
        keys, mine, theirs = next(differences(actual, self.value))
        where = _under(self.path, keys)
        detail = f"{where}: final state has {_held(mine)}, expected {_held(theirs)}"
        return self.result(False, detail, differences=[Difference(self.path, where, actual, self.value)])


def _compared(initial: Any, final: Any, path: str, *, absent: bool = False) -> tuple[str, list[Difference]] | None:
    """How the value at `path` changed from `initial` to `final`, and its difference; None when it did not. A path
    present in one state only is a change; one in neither is said as such (a misspelt path must never pass as
    unchanged), unless `absent` takes it as no change."""
    before, after = locate(initial, path), locate(final, path)
    if before is None and after is None:
        return None if absent else (f"{path}: no such path in either state ({_no_such_path(initial, path)})", [])
    if after is None:
        removed = before[1]  # type: ignore[index]  # `before` is set when `after` is not
        return f"{path} was removed: starting state had {show(removed)}", _difference(path, path, ABSENT, removed)
    if before is None:
        return f"{path} was added: final state has {show(after[1])}", []
    if json_equal(before[1], after[1]):
        return None
    keys, mine, theirs = next(differences(after[1], before[1]))
    where = _under(path, keys)
    text = f"{where} changed: starting state had {_held(theirs)}, final state has {_held(mine)}"
    return text, [Difference(path, where, after[1], before[1])]


@dataclass(frozen=True)
class StateUnchanged(StateCheck):
    """Each path holds the same value in the final state as in the starting state."""

    key = "state_unchanged"

    paths: tuple[str, ...]

    @cached_property
    def label(self) -> str:
        return f"{self.key} {listed(list(self.paths), SHOWN_PATHS)}"

    def judge(self, world: World) -> CheckResult:
        initial, final = world.initial, world.final
        found = [change for path in self.paths if (change := _compared(initial, final, path)) is not None]
        if not found:
            return self.result(True, f"unchanged: {', '.join(self.paths)}")
        return self.result(False, "; ".join(text for text, _ in found), differences=[d for _, diff in found for d in diff])


def state_paths(check: StateCheck) -> tuple[str, ...]:
    """The paths into the state a state check names (none for `state_matches_replay`, which names calls)."""
    if isinstance(check, StateEquals):
        return (check.path,)
    if isinstance(check, StateUnchanged):
        return check.paths
    if isinstance(check, StateChanges):
        return (*(check.allowed or ()), *(check.required or ()))
    return ()


def _reached(paths: Iterable[str], *states: Any) -> set[Keys]:
    """The keys each path takes into any of `states`: one state may hold a record the other lacks."""
    found = (locate(state, path) for path in paths for state in states)
    return {place[0] for place in found if place is not None}


def _covered(keys: Keys, prefixes: set[Keys]) -> bool:
    """Whether `keys` is one of `prefixes` or under one."""
    return any(keys[:length] in prefixes for length in range(len(keys) + 1))


@dataclass(frozen=True)
class StateChanges(StateCheck):
    """The whole change (every place the final state differs from the starting one) lies under the `allowed`
    paths, and each `required` path changed. A path allows itself and everything under it."""

    key = "state_changes"

    allowed: tuple[str, ...] | None = None
    required: tuple[str, ...] | None = None

    @classmethod
    def validate(cls, values: Mapping[str, Any], fields: Fields, context: Context) -> None:
        keys = file_keys(cls)
        if not any(fields.has(key) for key in keys):
            listed_keys = ", ".join(f"`{key}`" for key in keys)
            fields.problems.add(f"{fields.what} must set at least one of {listed_keys}", fields.node.pos)

    @cached_property
    def label(self) -> str:
        named = (("allowed", self.allowed), ("required", self.required))
        parts = [f"{name} {listed(list(paths), SHOWN_PATHS)}" for name, paths in named if paths]
        return f"{self.key} " + "; ".join(parts)

    def judge(self, world: World) -> CheckResult:
        initial, final = world.initial, world.final
        problems: list[str] = []
        found: list[Difference] = []
        changes = list(differences(final, initial))  # (keys, after, before)
        if self.allowed is not None:
            prefixes = _reached(self.allowed, initial, final)
            outside = [change for change in changes if not _covered(change[0], prefixes)]
            if outside:
                problems.append(self._outside(outside))
                for keys, after, before in outside:
                    found += _difference(dotted(keys), dotted(keys), after, before)
        for path in self.required or ():
            if _compared(initial, final, path, absent=True) is None:
                problems.append(f"required path {path} did not change: {self._still(final, path)}")
        if problems:
            return self.result(False, "; ".join(problems), differences=found)
        if not changes:
            return self.result(True, "the state did not change")
        said = [f"the state changed at {listed([dotted(keys) for keys, _, _ in changes], SHOWN_PATHS)}"]
        if self.allowed is not None:
            said.append(": all under the allowed paths")
        if self.required:
            said.append("; every required path changed")
        return self.result(True, "".join(said))

    def _outside(self, outside: Sequence[tuple[Keys, Any, Any]]) -> str:
        keys, after, before = outside[0]
        text = (
            f"{dotted(keys)} changed outside the allowed paths ({', '.join(self.allowed or ())}): "
            f"starting state had {_held(before)}, final state has {_held(after)}"
        )
        if len(outside) > 1:
            others = listed([dotted(k) for k, _, _ in outside[1:]], SHOWN_PATHS)
            text += f"; and {counted(len(outside) - 1, 'more change')} outside them ({others})"
        return text

    @staticmethod
    def _still(final: Any, path: str) -> str:
        found = locate(final, path)
        return "it is in neither state" if found is None else f"it is {show(found[1])} in both states"


@dataclass(frozen=True)
class ExpectedCall:
    """One `{tool, arguments}` item of `state_matches_replay`; no `arguments` reads as `{}`."""

    tool: str
    arguments: Mapping[str, Any] | None = spec(None, hash=False)

    def as_call(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": dict(self.arguments or {})}


@dataclass(frozen=True)
class StateMatchesReplay(StateCheck):
    """The final state equals the state the expected calls leave on a fresh copy of the starting state, the
    faults off: tau-bench's grading rule."""

    key = "state_matches_replay"

    calls: tuple[ExpectedCall, ...] = spec(item="call")

    @cached_property
    def label(self) -> str:
        return f"{self.key} {listed([call.tool for call in self.calls], SHOWN_PATHS)}"

    def judge(self, world: World) -> CheckResult:
        if world.replay is None:
            return self.errored(NO_REPLAY)
        try:
            replayed = world.replay([call.as_call() for call in self.calls])
        except ReplayRefused as err:
            return self.errored(f"{err}; the scenario's expected calls must all succeed on the starting state")
        final = world.final
        calls = len(self.calls)
        expected = "the state the expected call leaves" if calls == 1 else f"the state the {calls:,} expected calls leave"
        places = list(islice(differences(final, replayed), COUNTED_PLACES + 1))
        if not places:
            return self.result(True, f"the final state equals {expected}")
        keys, mine, theirs = places[0]
        where = dotted(keys)
        count = f"{counted(COUNTED_PLACES, 'place')} or more" if len(places) > COUNTED_PLACES else counted(len(places), "place")
        detail = (
            f"the final state differs from {expected} in {count}; "
            f"first at {where}: final state has {_held(mine)}, replay has {_held(theirs)}"
        )
        if theirs is ABSENT:  # a key the replay lacks: the values are kept whole one level up, where both have one
            keys = keys[:-1]
            mine, theirs = _at(final, keys), _at(replayed, keys)
        return self.result(False, detail, differences=[Difference(dotted(keys), where, mine, theirs)])


STATE_CHECKS: tuple[type[Check], ...] = (StateEquals, StateUnchanged, StateChanges, StateMatchesReplay)

__all__ = [
    "StateCheck",
    "state_paths",
    "NO_REPLAY",
    "NO_WORLD",
    "STATE_CHECKS",
    "ExpectedCall",
    "StateChanges",
    "StateEquals",
    "StateMatchesReplay",
    "StateUnchanged",
    "dotted",
]
