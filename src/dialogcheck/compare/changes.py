"""What changed between two sides: per key, per check, and overall with a paired test and a verdict.

Keys pair the sides: runs of one key on one side are its repeats. Per key, the
pass rate on each side (errored runs left out), the 95% interval of its
change, and a status: a change whose interval leaves out zero is `regressed`
or `fixed` whatever the rates; a key whose repeats disagree without one is
`flaky`. Per check, at how many keys its pass rate fell and rose.
Overall, the mean per-key change with its interval, and a paired test across
keys: exact McNemar when every key has one judged run a side, else a paired
permutation test on the per-key pass rates. The verdict is `regressed` or
`improved` when the test's p-value is under `alpha`, in the direction of the
change; else `no significant change`. When one side ran with its environment's
faults on and the other with them off, robustness too (`robustness`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from ..checks.base import Outcome
from ..errors import LoadError
from ..pairing import compile_pair
from .model import EXAMPLES, CheckFlips, CheckId, Comparison, KeyChange, Rate, Run, Side, SideSummary, Status, Verdict
from .read import Interner, read_side
from .robustness import robustness_of
from .stats import change_interval, mcnemar_exact, paired_interval, paired_permutation, scipy_stats

ALPHA = 0.05
#: Keys a "nothing pairs" error shows of each side.
_SHOWN_KEYS = 3


def compare_results(
    base: str | Path, new: str | Path, *, match: str | re.Pattern[str] | None = None, alpha: float = ALPHA
) -> Comparison:
    """Compare two batches, each a `run` results folder, a `check --output` folder or `check --format json` output.

    `match` is a pattern with one capturing group: runs and conversations pair by what it captures
    from their scenario slug or conversation id, searched as the checks' patterns are (`pairing`).
    Raises `LoadError` for bad input (a `match` that backtracks catastrophically on a name too),
    `ValueError` for a bad `match` or `alpha`, and `stats.MissingStats` when scipy is not installed.
    """
    pattern = compile_pair(match) if match is not None else None
    _check_alpha(alpha)
    scipy_stats()  # before reading anything: without scipy nothing can be concluded
    interner = Interner()
    base_side = read_side(base, pattern, interner)
    new_side = read_side(new, pattern, interner)
    return compare_sides(base_side, new_side, alpha=alpha, match=pattern.pattern if pattern is not None else None)


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), not {alpha}")


def compare_sides(base: Side, new: Side, *, alpha: float = ALPHA, match: str | None = None) -> Comparison:
    """The comparison of two sides already read; `LoadError` when no key is on both."""
    _check_alpha(alpha)
    shared = [key for key in base.runs if key in new.runs]
    if not shared:
        raise _nothing_pairs(base, new, match)
    keys: list[KeyChange] = []
    not_judged: list[str] = []
    flips: dict[CheckId, _Flips] = {}
    for key in shared:
        before, after = _rate(base.runs[key]), _rate(new.runs[key])
        if not before.judged or not after.judged:
            not_judged.append(key)
            continue
        broke, mended = _check_moves(base.runs[key], new.runs[key])
        for check in broke:
            flips.setdefault(check, _Flips()).down(key)
        for check in mended:
            flips.setdefault(check, _Flips()).up(key)
        interval = _interval(before.passed, before.judged, after.passed, after.judged)
        keys.append(KeyChange(key, before, after, _status(before, after, interval), interval, broke, mended))
    base_rates = [k.base.value for k in keys]
    new_rates = [k.new.value for k in keys]
    test, p_value = _test(keys, base_rates, new_rates)
    change = (sum(new_rates) - sum(base_rates)) / len(keys) if keys else 0.0
    return Comparison(
        base=_summary(base, base_rates),
        new=_summary(new, new_rates),
        keys=tuple(keys),
        checks=tuple(sorted((f.result(check) for check, f in flips.items()), key=lambda f: (-f.pass_to_fail, -f.fail_to_pass))),
        change=change,
        interval=paired_interval(base_rates, new_rates) if keys else None,
        test=test,
        p_value=p_value,
        alpha=alpha,
        verdict=_verdict(change, p_value, alpha),
        match=match,
        only_base=tuple(key for key in base.runs if key not in new.runs),
        only_new=tuple(key for key in new.runs if key not in base.runs),
        not_judged=tuple(not_judged),
        robustness=robustness_of(base, new, alpha),
    )


def _nothing_pairs(base: Side, new: Side, match: str | None) -> LoadError:
    def some(side: Side) -> str:
        return ", ".join(f"`{key}`" for key in list(side.runs)[:_SHOWN_KEYS]) + (", ..." if len(side.runs) > _SHOWN_KEYS else "")

    how = f"--match /{match}/ takes" if match else "pairing by scenario slug or conversation id gives"
    hint = "" if match else ": pair them with --match REGEX, whose one group captures the key (e.g. 'task-(\\d+)')"
    return LoadError.one(f"nothing to compare: {how} no key both sides have (BASE {some(base)}; NEW {some(new)}){hint}", new.source)


def _rate(runs: Sequence[Run]) -> Rate:
    passed = failed = 0
    for run in runs:
        if run.verdict is Outcome.PASS:
            passed += 1
        elif run.verdict is Outcome.FAIL:
            failed += 1
    return _shared_rate(passed, passed + failed, len(runs) - passed - failed)


@cache
def _shared_rate(passed: int, judged: int, errored: int) -> Rate:
    """One `Rate` for every key that ran alike (a batch has few distinct ones)."""
    return Rate(passed, judged, errored)


@cache
def _interval(base_passed: int, base_judged: int, new_passed: int, new_judged: int) -> tuple[float, float]:
    """`stats.change_interval`, once per distinct pair of rates (a batch has few)."""
    return change_interval(base_passed, base_judged, new_passed, new_judged)


def _status(before: Rate, after: Rate, interval: tuple[float, float]) -> Status:
    """A significant change (its interval leaves out zero) is regressed or fixed however mixed the runs; else runs
    that disagree on a side are flaky; else the key passed or failed every run of each side (a single flip is
    regressed or fixed: McNemar's test counts them)."""
    low, high = interval
    if high < 0:
        return Status.REGRESSED
    if low > 0:
        return Status.FIXED
    if before.mixed or after.mixed:
        return Status.FLAKY
    was, now = before.passed > 0, after.passed > 0
    if was and now:
        return Status.STILL_PASSING
    if was:
        return Status.REGRESSED
    return Status.FIXED if now else Status.STILL_FAILING


def _check_moves(base: Sequence[Run], new: Sequence[Run]) -> tuple[tuple[CheckId, ...], tuple[CheckId, ...]]:
    """The checks whose pass rate at this key fell, and rose; a check counts where it passed or failed."""
    if len(base) == len(new) == 1 and base[0] is new[0]:  # interned: the same verdict and outcomes, nothing moved
        return (), ()
    before, after = _check_rates(base), _check_rates(new)
    broke, mended = [], []
    for check, rate in before.items():
        other = after.get(check)
        if other is None:
            continue
        if other < rate:
            broke.append(check)
        elif other > rate:
            mended.append(check)
    return tuple(broke), tuple(mended)


def _check_rates(runs: Sequence[Run]) -> dict[CheckId, float]:
    """Each check's pass rate over the runs; a run whose simulated user was suspect says nothing of the agent's checks."""
    counts: dict[CheckId, list[int]] = {}
    for run in runs:
        if run.verdict is Outcome.SUSPECT:
            continue
        for check, outcome in run.checks:
            if outcome is Outcome.PASS or outcome is Outcome.FAIL:
                tally = counts.setdefault(check, [0, 0])
                tally[outcome is Outcome.FAIL] += 1
    return {check: passed / (passed + failed) for check, (passed, failed) in counts.items()}


class _Flips:
    """A check's flips as they are counted, with the first few keys of each way."""

    __slots__ = ("to_fail", "to_pass", "failing", "passing")

    def __init__(self) -> None:
        self.to_fail = self.to_pass = 0
        self.failing: list[str] = []
        self.passing: list[str] = []

    def down(self, key: str) -> None:
        self.to_fail += 1
        if len(self.failing) < EXAMPLES:
            self.failing.append(key)

    def up(self, key: str) -> None:
        self.to_pass += 1
        if len(self.passing) < EXAMPLES:
            self.passing.append(key)

    def result(self, check: CheckId) -> CheckFlips:
        return CheckFlips(check, self.to_fail, self.to_pass, tuple(self.failing), tuple(self.passing))


def _test(keys: Sequence[KeyChange], base_rates: list[float], new_rates: list[float]) -> tuple[str, float]:
    """(test, p-value): exact McNemar with one judged run a side at every key, else the paired permutation test."""
    if not keys:
        return "none", 1.0
    if all(k.base.judged == 1 and k.new.judged == 1 for k in keys):
        regressed = sum(k.status is Status.REGRESSED for k in keys)
        fixed = sum(k.status is Status.FIXED for k in keys)
        return "mcnemar", mcnemar_exact(regressed, fixed)
    return "permutation", paired_permutation(base_rates, new_rates)


def _verdict(change: float, p_value: float, alpha: float) -> Verdict:
    if p_value < alpha and change < 0:
        return Verdict.REGRESSED
    if p_value < alpha and change > 0:
        return Verdict.IMPROVED
    return Verdict.NO_CHANGE


def _summary(side: Side, rates: list[float]) -> SideSummary:
    pass_rate = sum(rates) / len(rates) if rates else None
    return SideSummary(side.source, side.form, side.count, len(side.runs), side.errored, pass_rate, side.unfinished, side.planned)
