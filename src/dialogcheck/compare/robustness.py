"""Robustness: pass rate under faults over pass rate without, of one batch against its `run --faults off` baseline.

It applies when every run of one side that had an environment ran with its
fault schedule on, and every such run of the other with it off (and each side
has one). Keys pair as everywhere in `compare`; a key counts when both sides
ran it with an environment and each has a judged run of it. Errored (and
suspect) runs are left out of every rate, as in the rest of the comparison.

- Overall and per key: the faulted side's passed over judged runs, over the
  baseline's, pooled across keys (a key with more runs weighs more). A faulted
  run that met no fault counts here, and only here.
- Per kind of fault K: the faulted runs that met K (once, however many times),
  against every baseline run of the keys those runs are of.
- The interval is Koopman's score interval of a ratio of two independent
  proportions at the comparison's confidence, 1 - alpha. When no baseline run
  passed the ratio is undefined: ratio and interval are None.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..checks.base import Outcome
from .model import BASE, NEW, RUN_FOLDER, KeyRobustness, KindRobustness, Rate, RateRatio, Robustness, Run, Side
from .stats import ratio_interval


def robustness_of(base: Side, new: Side, alpha: float) -> Robustness | None:
    """The robustness of the faulted side against the baseline; None unless one side's schedule was on and the other's off."""
    schedules = _schedule(base), _schedule(new)
    if schedules == (False, True):
        faulted, baseline, which = new, base, NEW
    elif schedules == (True, False):
        faulted, baseline, which = base, new, BASE
    else:
        return None
    confidence = 1 - alpha
    keys: list[KeyRobustness] = []
    kinds: dict[str, _KindTally] = {}
    pooled_faulted, pooled_baseline = _Tally(), _Tally()
    met_no_fault = 0
    unpaired: list[str] = []
    without: list[str] = []
    not_judged: list[str] = []
    for key in _keys(base, new):
        under = [run for run in faulted.runs.get(key, ()) if run.faults_on is True]
        clear = [run for run in baseline.runs.get(key, ()) if run.faults_on is False]
        if not under and not clear:
            without.append(key)
            continue
        if not under or not clear:
            unpaired.append(key)
            continue
        under_tally, clear_tally = _Tally.of(under), _Tally.of(clear)
        if not under_tally.judged or not clear_tally.judged:
            not_judged.append(key)
            continue
        pooled_faulted.add(under_tally)
        pooled_baseline.add(clear_tally)
        keys.append(KeyRobustness(key, _ratio(under_tally, clear_tally, 1, confidence)))
        for run in under:
            if _judged(run) and not run.fault_kinds:
                met_no_fault += 1
            for kind in run.fault_kinds:
                kinds.setdefault(kind, _KindTally()).add(key, run, clear_tally)
    return Robustness(
        faulted=which,
        confidence=confidence,
        overall=_ratio(pooled_faulted, pooled_baseline, len(keys), confidence) if keys else None,
        kinds=tuple(KindRobustness(kind, kinds[kind].ratio(confidence)) for kind in sorted(kinds)),
        keys=tuple(sorted(keys, key=_worst_first)),
        met_no_fault=met_no_fault,
        unpaired=tuple(unpaired),
        without_environment=tuple(without),
        not_judged=tuple(not_judged),
    )


def _schedule(side: Side) -> bool | None:
    """True when every run of the side that had an environment ran its fault schedule, False when every one ran
    without it; None when no run had an environment, or some ran each way."""
    if side.form != RUN_FOLDER:  # recorded conversations have no environment: no need to look at each
        return None
    seen = {run.faults_on for runs in side.runs.values() for run in runs if run.faults_on is not None}
    return seen.pop() if len(seen) == 1 else None


def _keys(base: Side, new: Side) -> Iterable[str]:
    """Every key of either side: BASE's in its order, then those only NEW has."""
    yield from base.runs
    yield from (key for key in new.runs if key not in base.runs)


def _judged(run: Run) -> bool:
    return run.verdict is Outcome.PASS or run.verdict is Outcome.FAIL


class _Tally:
    """Passed, judged and errored (or suspect) runs, as they are counted."""

    __slots__ = ("passed", "judged", "errored")

    def __init__(self) -> None:
        self.passed = self.judged = self.errored = 0

    @classmethod
    def of(cls, runs: Sequence[Run]) -> _Tally:
        tally = cls()
        for run in runs:
            tally.count(run)
        return tally

    def count(self, run: Run) -> None:
        if _judged(run):
            self.judged += 1
            self.passed += run.verdict is Outcome.PASS
        else:
            self.errored += 1

    def add(self, other: _Tally) -> None:
        self.passed += other.passed
        self.judged += other.judged
        self.errored += other.errored

    def rate(self) -> Rate:
        return Rate(self.passed, self.judged, self.errored)


class _KindTally:
    """One kind of fault: the faulted runs that met it, and the baseline runs of their keys (each key once)."""

    __slots__ = ("faulted", "baseline", "keys")

    def __init__(self) -> None:
        self.faulted, self.baseline = _Tally(), _Tally()
        self.keys: set[str] = set()

    def add(self, key: str, run: Run, baseline: _Tally) -> None:
        """A faulted run that met the kind; a key's baseline counts once one of its runs that met it was judged."""
        self.faulted.count(run)
        if _judged(run) and key not in self.keys:
            self.keys.add(key)
            self.baseline.add(baseline)

    def ratio(self, confidence: float) -> RateRatio:
        return _ratio(self.faulted, self.baseline, len(self.keys), confidence)


def _ratio(faulted: _Tally, baseline: _Tally, keys: int, confidence: float) -> RateRatio:
    """The ratio of the rates and its interval; both None when no baseline run passed (a rate over zero), and
    when no faulted run that met a kind was judged (every one errored)."""
    if not baseline.passed or not faulted.judged:
        return RateRatio(faulted.rate(), baseline.rate(), keys, None, None)
    ratio = (faulted.passed / faulted.judged) / (baseline.passed / baseline.judged)
    interval = ratio_interval(faulted.passed, faulted.judged, baseline.passed, baseline.judged, confidence)
    return RateRatio(faulted.rate(), baseline.rate(), keys, ratio, interval)


def _worst_first(key: KeyRobustness) -> tuple[bool, float]:
    """The lowest ratio first, undefined ones last; keys of equal ratio stay in key order (the sort is stable)."""
    ratio = key.ratio.ratio
    return (ratio is None, ratio if ratio is not None else 0.0)
