"""What `dialogcheck compare` reads and what it concludes, as plain frozen data.

Reading keeps, of each conversation or run, only what comparing needs: the
key it pairs by, its verdict, and each check's identity and outcome (`Run`).
A `Comparison` is the whole answer: per key a `KeyChange`, per check a
`CheckFlips`, and the overall change with its paired test and verdict; and,
for a batch run with its environment's faults on against the same batch run
with them off, its `Robustness`. The text, JSON and HTML views, the exit code
and the MCP tool all read it.

Errored runs are never a pass: they say nothing about the agent (a judge that
broke, an agent that was down), so, as in a batch's pass rate, they are left
out of every pass rate, interval and test, and counted apart per key and per
side. A key whose runs all errored on one side is not compared.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from ..checks.base import Outcome
from ..results.model import CheckKind


class Status(str, Enum):
    """How a key's verdicts moved from BASE to NEW."""

    FIXED = "fixed"
    REGRESSED = "regressed"
    STILL_FAILING = "still failing"
    STILL_PASSING = "still passing"
    #: Passed some runs and failed others on a side, and the change is not significant (its interval holds zero).
    #: A significant change is `REGRESSED` or `FIXED`, however mixed the runs.
    FLAKY = "flaky"

    def __str__(self) -> str:
        return self.value


#: The order statuses are listed in: what changed first.
STATUS_ORDER = (Status.REGRESSED, Status.FIXED, Status.FLAKY, Status.STILL_FAILING, Status.STILL_PASSING)


class Verdict(str, Enum):
    """The overall answer at the chosen significance level."""

    REGRESSED = "regressed"
    IMPROVED = "improved"
    NO_CHANGE = "no significant change"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class CheckId:
    """One check, named the same in both batches: where it is (scenario or SOP), its kind, number and label.

    Its hash is computed once: comparing counts a check's outcomes in dicts, a hundred thousand runs over.
    """

    kind: CheckKind
    #: The scenario or SOP it belongs to (the name its results give).
    subject: str
    #: An assertion's label, an SOP step's label (else its type), a criterion's text.
    label: str
    #: Assertions and criteria count from 1 in file order.
    index: int | None = None
    #: An SOP step's id.
    id: str | None = None
    #: Decided by the LLM judge (a criterion, an `llm_judge` step): its flip is a judge flip.
    judged: bool = False
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.kind, self.subject, self.label, self.index, self.id, self.judged)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def title(self) -> str:
        """`assertion 2 <label>`, `SOP <id> <label>`, `criterion 1 '<text>'`."""
        if self.kind is CheckKind.SOP:
            return f"SOP {self.id} {self.label}"
        if self.kind is CheckKind.CRITERION:
            return f"criterion {self.index} {self.label!r}"
        return f"assertion {self.index} {self.label}"


@dataclass(frozen=True, slots=True)
class Run:
    """One conversation or run, reduced to what comparing reads: its verdict and each check's outcome, and for
    robustness whether its environment's fault schedule was on (None: it had no environment) and the kinds of
    fault it met."""

    verdict: Outcome
    checks: tuple[tuple[CheckId, Outcome], ...] = ()
    faults_on: bool | None = None
    fault_kinds: tuple[str, ...] = ()


#: What a side was read from (`Side.form`).
RUN_FOLDER = "run results folder"
CHECK_FOLDER = "check --output folder"
JSON_DOCUMENT = "check --format json document"


@dataclass(frozen=True)
class Side:
    """One batch (BASE or NEW) as read: its runs by key, in the order the keys first appear."""

    #: The file or folder it was read from.
    source: str
    #: What that was: a `run` results folder, a `check --output` folder, a `check --format json` document.
    form: str
    runs: dict[str, list[Run]]
    #: A `run` results folder's planned runs that never finished, as (slug, number); and how many it planned.
    unfinished: tuple[tuple[str, int], ...] = ()
    planned: int | None = None

    @property
    def count(self) -> int:
        return sum(len(runs) for runs in self.runs.values())

    @property
    def errored(self) -> int:
        return sum(run.verdict is Outcome.ERROR for runs in self.runs.values() for run in runs)


@dataclass(frozen=True, slots=True)
class Rate:
    """A key's runs on one side: how many passed, how many were judged (passed or failed), how many errored."""

    passed: int
    judged: int
    errored: int = 0

    @property
    def value(self) -> float:
        return self.passed / self.judged

    @property
    def runs(self) -> int:
        return self.judged + self.errored

    @property
    def mixed(self) -> bool:
        return 0 < self.passed < self.judged

    def __str__(self) -> str:
        return f"{self.passed:,}/{self.judged:,}"


@dataclass(frozen=True, slots=True)
class KeyChange:
    """One key (a scenario, or what `--match` captured): its pass rate on each side, the change and its class."""

    key: str
    base: Rate
    new: Rate
    status: Status
    #: The 95% interval of NEW's pass rate minus BASE's (Newcombe's score interval).
    interval: tuple[float, float]
    #: Checks whose pass rate at this key fell from BASE to NEW, and rose.
    broke: tuple[CheckId, ...] = ()
    mended: tuple[CheckId, ...] = ()

    @property
    def change(self) -> float:
        return self.new.value - self.base.value

    @property
    def repeated(self) -> bool:
        return self.base.judged > 1 or self.new.judged > 1

    @property
    def noisy(self) -> bool:
        """Too noisy to call: flaky, so its interval holds both a gain and a loss (zero inside)."""
        return self.status is Status.FLAKY


#: Keys of a check's flips kept as examples, each way.
EXAMPLES = 5


@dataclass(frozen=True)
class CheckFlips:
    """One check: at how many keys its pass rate fell from BASE to NEW, and rose (with one run a side: flips)."""

    check: CheckId
    pass_to_fail: int
    fail_to_pass: int
    #: A few keys of each way, in key order.
    examples_pass_to_fail: tuple[str, ...] = ()
    examples_fail_to_pass: tuple[str, ...] = ()


@dataclass(frozen=True)
class RateRatio:
    """Runs under faults against runs without: both pass rates, the first over the second, and its interval.

    `ratio` and `interval` are None when no baseline run passed: a rate over zero is undefined.
    """

    faulted: Rate
    baseline: Rate
    #: The keys these runs are of.
    keys: int
    ratio: float | None
    #: Koopman's score interval of the ratio at the comparison's confidence (1 - alpha).
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class KeyRobustness:
    key: str
    ratio: RateRatio


@dataclass(frozen=True)
class KindRobustness:
    """One kind of fault: the faulted runs that met it, against the baseline runs of the keys those runs are of."""

    kind: str
    ratio: RateRatio


#: `Robustness.faulted`: which side ran with its faults on.
BASE, NEW = "base", "new"


@dataclass(frozen=True)
class Robustness:
    """Pass rate under faults over pass rate without, when one side ran its environment's fault schedule and the
    other the same scenarios with it off (`run --faults off`).

    A key counts when both sides ran it with an environment, the one side's schedule on and the other's off, and
    each side has a judged run of it; rates pool those runs (a key with more runs weighs more), errored runs
    left out. Per kind of fault, the faulted runs that met it count against every baseline run of their keys; a
    faulted run that met no fault counts in the overall and per-key figures only.
    """

    #: `new` or `base`: the side whose schedule was on.
    faulted: str
    confidence: float
    #: Over every key that counts; None when none does.
    overall: RateRatio | None
    #: Per kind of fault met, by name.
    kinds: tuple[KindRobustness, ...]
    #: Per key, the lowest ratio first, undefined ones last.
    keys: tuple[KeyRobustness, ...]
    #: Judged runs under faults that met no fault.
    met_no_fault: int
    #: Keys run with an environment on one side only (BASE's first), left out.
    unpaired: tuple[str, ...] = ()
    #: Keys both sides ran without an environment, left out.
    without_environment: tuple[str, ...] = ()
    #: Keys with no judged run on a side (every run errored), left out.
    not_judged: tuple[str, ...] = ()

    @property
    def baseline(self) -> str:
        return BASE if self.faulted == NEW else NEW

    def left_out(self) -> list[tuple[str, tuple[str, ...]]]:
        """(why, keys) of each group of keys left out that has some, for every view to say alike."""
        groups = (
            ("with an environment on one side only", self.unpaired),
            ("without an environment", self.without_environment),
            ("with every run errored on a side", self.not_judged),
        )
        return [(why, keys) for why, keys in groups if keys]


@dataclass(frozen=True)
class SideSummary:
    """What the report says of one side: where it came from, and how many runs and keys it held."""

    source: str
    form: str
    runs: int
    keys: int
    errored: int
    #: The pass rate over the compared keys, each key weighing the same.
    pass_rate: float | None
    #: Its planned runs that never finished (a batch cut short), as (slug, number); and how many it planned.
    unfinished: tuple[tuple[str, int], ...] = ()
    planned: int | None = None


@dataclass(frozen=True)
class Comparison:
    """What changed from BASE to NEW: per key, per check, and overall with a paired test and a verdict."""

    base: SideSummary
    new: SideSummary
    #: The keys both sides judged, in the order BASE first names them.
    keys: tuple[KeyChange, ...]
    #: Every check that flipped at some key, most flips to a failure first.
    checks: tuple[CheckFlips, ...]
    #: The mean over compared keys of NEW's pass rate minus BASE's, and its 95% interval (None under 2 keys).
    change: float
    interval: tuple[float, float] | None
    #: `mcnemar` (every key has one judged run a side) or `permutation` (per-key pass rates, paired).
    test: str
    p_value: float
    alpha: float
    verdict: Verdict
    #: The `--match` pattern keys were taken with, if any.
    match: str | None = None
    only_base: tuple[str, ...] = ()
    only_new: tuple[str, ...] = ()
    #: Keys on both sides with no judged run on one of them (every run errored).
    not_judged: tuple[str, ...] = ()
    #: When one side ran with its environment's faults on and the other with them off; else None.
    robustness: Robustness | None = None

    @property
    def noisy(self) -> list[KeyChange]:
        return [key for key in self.keys if key.noisy]

    @property
    def drivers(self) -> list[KeyChange]:
        """The keys that moved the way the verdict says (their pass rate fell for `regressed`, rose for `improved`);
        none without a significant change."""
        if self.verdict is Verdict.REGRESSED:
            return [key for key in self.keys if key.change < 0]
        if self.verdict is Verdict.IMPROVED:
            return [key for key in self.keys if key.change > 0]
        return []

    @property
    def judge_flips(self) -> int:
        """Flips, either way, of checks the LLM judge decided."""
        return sum(flips.pass_to_fail + flips.fail_to_pass for flips in self.checks if flips.check.judged)

    def by_status(self, status: Status) -> list[KeyChange]:
        return [key for key in self.keys if key.status is status]

    def status_counts(self) -> Counter[Status]:
        """How many keys have each status (every status present, zero or not)."""
        counts = Counter(dict.fromkeys(Status, 0))
        counts.update(key.status for key in self.keys)
        return counts
