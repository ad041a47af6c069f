"""`plan.json`: what a batch set out to run, kept so `--resume` finishes exactly that batch, from any folder.

The plan names each scenario by its absolute path with the sha256 of the file
it was loaded from (a resume refuses a scenario that changed or went missing:
its finished runs were judged under the old definition), the config by its
absolute path, and the runs of each scenario: `runs` repeats, each of them
once per persona trait when the scenario runs as a persona matrix (its
`personas`), numbered repeat by repeat (with traits a, b: run 1 a, run 2 b,
run 3 a, ...), so every run keeps one `run_N` of its own and a resume knows
the trait of each. It is read back as bad input
when it is not that shape, at the line and column of the value at fault; its
`runs` are bounded like `--runs`, so a hand-edited `1e8` is refused, not run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import msgspec
import orjson

from ..config import SEED_RANGE
from ..errors import LoadError
from ..scenario.traits import unknown_trait

#: The most runs of one scenario a batch plans (`--runs` has the same bound).
MAX_RUNS = 1000
#: A plan lists each scenario in a line or five; one past this size was not written by dialogcheck.
MAX_PLAN_BYTES = 16 << 20
#: Plans before this version kept paths relative to the working folder and no scenario hashes.
PLAN_VERSION = 2


class PlannedScenario(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    slug: str
    path: str
    #: Repeats: each runs the scenario once per persona trait, or once when it has none.
    runs: Annotated[int, msgspec.Meta(ge=1, le=MAX_RUNS)]
    #: The sha256 of the scenario file's bytes; None in a plan of an older dialogcheck.
    sha256: str | None = None
    #: The persona traits of the matrix, in run order; empty (and not written) for a scenario run as it is.
    personas: list[str] = []
    #: The LLM user's sampling seed of repeat 1 (repeat r samples with seed + r - 1); None (not written): none given.
    seed: Annotated[int, msgspec.Meta(ge=0, lt=SEED_RANGE)] | None = None

    @property
    def count(self) -> int:
        """How many runs: repeats times traits."""
        return self.runs * max(len(self.personas), 1)

    def persona_of(self, number: int) -> str | None:
        """The trait run `number` (from 1) plays; None without a matrix."""
        return self.personas[(number - 1) % len(self.personas)] if self.personas else None

    def repeat_of(self, number: int) -> int:
        """Which repeat (from 1) run `number` belongs to."""
        return (number - 1) // max(len(self.personas), 1) + 1

    def seed_of(self, number: int) -> int | None:
        """The seed run `number` samples with: one per repeat, so each repeat differs and every trait of a
        repeat is asked alike; it wraps around within the seed range."""
        return None if self.seed is None else (self.seed + self.repeat_of(number) - 1) % SEED_RANGE


class Plan(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    version: int = 1
    started: str | None = None
    project: str | None = None
    #: The absolute path of the `eval/conftest.yml` the batch used; None when it had none.
    config: str | None = None
    scenarios: Annotated[list[PlannedScenario], msgspec.Meta(min_length=1)]
    total_runs: int

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2)

    def run_keys(self) -> list[tuple[str, int]]:
        """Every planned run as (slug, number), in plan order."""
        return [(item.slug, number) for item in self.scenarios for number in range(1, item.count + 1)]


def new_plan(started: str, project: str, config: str | None, scenarios: Sequence[PlannedScenario]) -> Plan:
    return Plan(
        version=PLAN_VERSION,
        started=started,
        project=project,
        config=config,
        scenarios=list(scenarios),
        total_runs=sum(item.count for item in scenarios),
    )


def read_plan(path: Path) -> Plan:
    """The plan at `path`, or a `LoadError` at the line and column of what is wrong with it."""
    file = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PLAN_BYTES + 1)  # no more than the bound, whatever the file is
    except FileNotFoundError:
        raise LoadError.one(f"not a dialogcheck results folder: {path.name} is missing", file) from None
    except OSError as err:
        raise LoadError.one(f"cannot read: {err.strerror or err}", file) from None
    if len(data) > MAX_PLAN_BYTES:
        raise LoadError.one(f"larger than {MAX_PLAN_BYTES >> 20} MB: not a plan dialogcheck wrote", file)
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not valid JSON: {err.msg}", file, err.lineno, err.colno) from None
    try:
        plan = msgspec.convert(raw, Plan)
    except msgspec.ValidationError as err:
        raise _shape_error(str(err), data, file) from None
    if plan.total_runs != sum(item.count for item in plan.scenarios):
        message = f"invalid plan: `total_runs` is {plan.total_runs}, but the scenarios' `runs` add up to {sum(item.count for item in plan.scenarios)}"
        raise _at(message, data, file, ["total_runs"])
    seen: set[str] = set()
    for index, item in enumerate(plan.scenarios):
        if item.slug in seen:
            raise _at(f"invalid plan: the slug {item.slug!r} is planned twice", data, file, ["scenarios", index, "slug"])
        seen.add(item.slug)
        for place, name in enumerate(item.personas):
            if (why := unknown_trait(name)) is not None:
                raise _at(f"invalid plan: {why}", data, file, ["scenarios", index, "personas", place])
    return plan


def _shape_error(message: str, data: bytes, file: str) -> LoadError:
    """msgspec's `Expected ... - at `$.a[0].b`` as a problem at that value's place in the file."""
    what, _, where = message.partition(" - at `$")
    path = _parse_path(where.rstrip("`"))
    place = "`" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path).lstrip(".") + "`" if path else "the plan"
    field = what.split("`")[1] if "`" in what else ""
    if what.startswith("Object contains unknown field"):
        return _at(f"invalid plan: unknown field `{field}` in {place}", data, file, [*path, field], at_key=True)
    if what.startswith("Object missing required field"):
        return _at(f"invalid plan: {place} is missing the field `{field}`", data, file, path)
    expected = what[:1].lower() + what[1:]
    return _at(f"invalid plan: {place}: {expected}" if path else f"invalid plan: {expected}", data, file, path)


def _parse_path(text: str) -> list[str | int]:
    """`.scenarios[0].runs` as ["scenarios", 0, "runs"]."""
    path: list[str | int] = []
    for part in text.replace("[", ".[").split("."):
        if part.startswith("[") and part.endswith("]"):
            path.append(int(part[1:-1]))
        elif part:
            path.append(part)
    return path


def _at(message: str, data: bytes, file: str, path: Sequence[str | int], *, at_key: bool = False) -> LoadError:
    text = data.decode("utf-8", "replace")
    offset = value_offset(text, path, at_key=at_key)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return LoadError.one(message, file, line, column)


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def value_offset(text: str, path: Sequence[str | int], *, at_key: bool = False) -> int:
    """Where the value at `path` starts in the JSON `text` (with `at_key`, where its key starts).

    Used only to place an error, so it settles for the deepest place it found when the path runs out.
    """
    decoder = json.JSONDecoder()
    here = _skip_space(text, 0)
    try:
        for number, step in enumerate(path, 1):
            found = _child(text, here, step, decoder, at_key=at_key and number == len(path))
            if found is None:
                break
            here = found
    except (ValueError, RecursionError):  # a sibling it could not skip: the place found so far
        pass
    return here


def _child(text: str, start: int, step: str | int, decoder: json.JSONDecoder, *, at_key: bool) -> int | None:
    """The offset of entry `step` of the array, or of the value (or key) `step` of the object, at `start`."""
    opening, closing = ("[", "]") if isinstance(step, int) else ("{", "}")
    if not text.startswith(opening, start):
        return None
    i, index = _skip_space(text, start + 1), 0
    while i < len(text) and text[i] != closing:
        if index == step:
            return i
        if isinstance(step, str):
            key, end = decoder.raw_decode(text, i)
            value = _skip_space(text, _skip_space(text, end) + 1)  # past the colon
            if key == step:
                return i if at_key else value
            i = value
        _, i = decoder.raw_decode(text, i)
        i = _skip_space(text, i)
        if text.startswith(",", i):
            i = _skip_space(text, i + 1)
        index += 1
    return None
