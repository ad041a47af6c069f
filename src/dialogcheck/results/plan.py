"""`plan.json`: what a batch set out to run, kept so `--resume` finishes exactly that batch, from any folder.

The plan names each scenario by its absolute path with the sha256 of the file
it was loaded from (a resume refuses a scenario that changed or went missing:
its finished runs were judged under the old definition), the config by its
absolute path, and the runs of each scenario: `runs` repeats, each of them
once per persona trait when the scenario runs as a persona matrix (its
`personas`), numbered repeat by repeat (with traits a, b: run 1 a, run 2 b,
run 3 a, ...), so every run keeps one `run_N` of its own and a resume knows
the trait of each. It is read back as bad input
when it is not that shape, at the line and column of the value at fault, and
only what dialogcheck could have written is taken: `runs` bounded like
`--runs`, traits built-in and each named once, a batch of at most
`MAX_BATCH_RUNS` runs, strings no longer than what they stand for (a file
name, a path, a hash), so a hand-edited `1e8` or 2,000 traits are refused
before anything is listed or run. A resume also holds each scenario's traits
to what its file (or the batch's `--persona`) declares (`runner.project`).
"""

from __future__ import annotations

import errno
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import msgspec
import orjson

from .._paths import NAME_MAX_BYTES, PATH_MAX_BYTES, read_regular
from .._shown import clip, visible
from ..config import SEED_RANGE
from ..errors import LoadError
from ..scenario.traits import TRAITS, unknown_trait

#: The most runs of one scenario a batch plans (`--runs` has the same bound).
MAX_RUNS = 1000
#: The most runs of one batch: a hundred scenarios at the most repeats `--runs` takes.
MAX_BATCH_RUNS = 100 * MAX_RUNS
#: A plan lists each scenario in a line or five; one past this size was not written by dialogcheck.
MAX_PLAN_BYTES = 16 << 20
#: Plans before this version kept paths relative to the working folder and no scenario hashes.
PLAN_VERSION = 2

#: A path as the system takes one; a slug is a file's stem; a hash is sha256's hex; a time is ISO 8601.
PathText = Annotated[str, msgspec.Meta(max_length=PATH_MAX_BYTES)]
Slug = Annotated[str, msgspec.Meta(min_length=1, max_length=NAME_MAX_BYTES)]
Sha256 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
Started = Annotated[str, msgspec.Meta(max_length=64)]
#: The persona traits of a matrix: built-in ones, each once (checked on reading), so no more than there are.
Traits = Annotated[list[Annotated[str, msgspec.Meta(max_length=32)]], msgspec.Meta(max_length=len(TRAITS))]


class PlannedScenario(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    slug: Slug
    path: PathText
    #: Repeats: each runs the scenario once per persona trait, or once when it has none.
    runs: Annotated[int, msgspec.Meta(ge=1, le=MAX_RUNS)]
    #: The sha256 of the scenario file's bytes; None in a plan of an older dialogcheck.
    sha256: Sha256 | None = None
    #: The persona traits of the matrix, in run order; empty (and not written) for a scenario run as it is.
    personas: Traits = []
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


class Plan(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    version: int = 1
    started: Started | None = None
    project: PathText | None = None
    #: The absolute path of the `eval/conftest.yml` the batch used; None when it had none.
    config: PathText | None = None
    scenarios: Annotated[list[PlannedScenario], msgspec.Meta(min_length=1)]
    total_runs: int
    #: The batch's `--persona` traits, which its LLM-played scenarios run under instead of their own; empty (and not written): none given.
    personas: Traits = []
    #: The batch's seed (`--seed`, else `simulation.seed`), which every run's environment faults are drawn from; None (not written): none.
    seed: Annotated[int, msgspec.Meta(ge=0, lt=SEED_RANGE)] | None = None
    #: Whether the environments' fault schedules are on (`run --faults on|off`); true is not written.
    faults: bool = True
    #: The sha256 of each scenario's environment (`Environment.digest`: its file and the state it gives), by slug; none: not written.
    environments: Annotated[dict[Slug, Sha256], msgspec.Meta(max_length=10_000)] = {}

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2)

    def run_keys(self) -> list[tuple[str, int]]:
        """Every planned run as (slug, number), in plan order."""
        return [(item.slug, number) for item in self.scenarios for number in range(1, item.count + 1)]


def new_plan(
    started: str, project: str, config: str | None, scenarios: Sequence[PlannedScenario], personas: Sequence[str] = (),
    seed: int | None = None, faults: bool = True, environments: Mapping[str, str] | None = None,
) -> Plan:
    return Plan(
        version=PLAN_VERSION,
        started=started,
        project=project,
        config=config,
        scenarios=list(scenarios),
        total_runs=sum(item.count for item in scenarios),
        personas=list(personas),
        seed=seed,
        faults=faults,
        environments=dict(environments or {}),
    )


def read_plan(path: Path) -> Plan:
    """The plan at `path`, or a `LoadError` at the line and column of what is wrong with it."""
    file = str(path)
    try:
        data = read_regular(path, MAX_PLAN_BYTES)  # never more than the bound, and never a pipe or a device
    except FileNotFoundError:
        raise LoadError.one(f"not a dialogcheck results folder: {path.name} is missing", file) from None
    except OSError as err:
        if err.errno == errno.EFBIG:
            raise LoadError.one(f"larger than {MAX_PLAN_BYTES >> 20} MB: not a plan dialogcheck wrote", file) from None
        raise LoadError.of_os("cannot read", err, file) from None
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not valid JSON: {err.msg}", file, err.lineno, err.colno) from None
    try:
        plan = msgspec.convert(raw, Plan)
    except msgspec.ValidationError as err:
        raise _shape_error(str(err), data, file) from None
    planned = sum(item.count for item in plan.scenarios)
    if planned > MAX_BATCH_RUNS:
        raise _at(f"invalid plan: its scenarios plan {planned:,} runs, more than the {MAX_BATCH_RUNS:,} a batch may run", data, file, ["total_runs"])
    if plan.total_runs != planned:
        message = f"invalid plan: `total_runs` is {plan.total_runs:,}, but the scenarios' `runs` add up to {planned:,}"
        raise _at(message, data, file, ["total_runs"])
    _refuse_traits(plan.personas, data, file, ["personas"])
    seen: set[str] = set()
    for index, item in enumerate(plan.scenarios):
        if item.slug in seen:
            raise _at(f"invalid plan: the slug {item.slug!r} is planned twice", data, file, ["scenarios", index, "slug"])
        seen.add(item.slug)
        _refuse_traits(item.personas, data, file, ["scenarios", index, "personas"])
    return plan


def _refuse_traits(names: Sequence[str], data: bytes, file: str, where: list[str | int]) -> None:
    """A `LoadError` at the first trait of `names` that is not a built-in one, or that is named a second time."""
    seen: set[str] = set()
    for place, name in enumerate(names):
        if (why := unknown_trait(name)) is not None:
            raise _at(f"invalid plan: {why}", data, file, [*where, place])
        if name in seen:
            raise _at(f"invalid plan: {named(where)} names the trait {name!r} twice", data, file, [*where, place])
        seen.add(name)


def plan_error(path: Path, message: str, where: Sequence[str | int]) -> LoadError:
    """`message` at the value `where` of the plan at `path` (read again, only to place it): for what a resume finds
    wrong with a plan once it has the scenarios' files."""
    try:
        data = read_regular(path, MAX_PLAN_BYTES)
    except OSError:
        return LoadError.one(message, str(path))
    return _at(message, data, str(path), where)


def _shape_error(message: str, data: bytes, file: str) -> LoadError:
    """msgspec's `Expected ... - at `$.a[0].b`` as a problem at that value's place in the file."""
    what, _, where = message.partition(" - at `$")
    path = _parse_path(where.rstrip("`"))
    place = named(path) if path else "the plan"
    field = what.split("`")[1] if "`" in what else ""
    shown = clip(visible(field), 60)  # a key of a damaged plan may be megabytes long
    if what.startswith("Object contains unknown field"):
        return _at(f"invalid plan: unknown field `{shown}` in {place}", data, file, [*path, field], at_key=True)
    if what.startswith("Object missing required field"):
        return _at(f"invalid plan: {place} is missing the field `{shown}`", data, file, path)
    expected = clip(visible(what[:1].lower() + what[1:]), 200)
    return _at(f"invalid plan: {place}: {expected}" if path else f"invalid plan: {expected}", data, file, path)


def named(path: Sequence[str | int]) -> str:
    """["scenarios", 0, "runs"] as `scenarios[0].runs`, the way a message names a value of the plan."""
    return "`" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path).lstrip(".") + "`"


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
