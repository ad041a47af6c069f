"""The statistics of `compare`, from scipy: intervals of a change in pass rate, and the paired tests.

scipy is an optional extra (`pip install 'dialogcheck[stats]'`), imported on
first use; without it every function here raises `MissingStats`, which the
command reports as bad usage. The only arithmetic done here is Newcombe's
combination of two of scipy's Wilson intervals into an interval of their
difference, and Koopman's score interval of their ratio (scipy finding its
bounds), both tested against statsmodels' `confint_proportions_2indep`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from math import isfinite, sqrt
from typing import Any

CONFIDENCE = 0.95
#: Random sign flips of the permutation test (exact when there are fewer distinct ones), with a fixed seed:
#: the same batches always give the same p-value.
RESAMPLES = 9999
SEED = 20240601
#: Values the permutation test holds in memory at once (resamples times discordant keys).
_BATCH_VALUES = 250_000

INSTALL_HINT = "`dialogcheck compare` needs scipy for its statistics: pip install 'dialogcheck[stats]'"


class MissingStats(ImportError):
    """scipy is not installed."""


def scipy_stats() -> Any:
    """`scipy.stats`, or `MissingStats` saying how to install it."""
    try:
        import scipy.stats
    except ImportError:
        raise MissingStats(INSTALL_HINT) from None
    return scipy.stats


@cache
def wilson(passed: int, runs: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a pass rate (`runs` > 0)."""
    found = scipy_stats().binomtest(passed, runs).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return float(found.low), float(found.high)


def change_interval(base_passed: int, base_runs: int, new_passed: int, new_runs: int) -> tuple[float, float]:
    """The 95% interval of NEW's pass rate minus BASE's, runs of the two sides independent.

    Newcombe's hybrid score interval (his method 10): it stays inside [-1, 1] and keeps its
    coverage for the few runs a key has, where the Wald interval does neither.
    """
    p_new, p_base = new_passed / new_runs, base_passed / base_runs
    low_new, high_new = wilson(new_passed, new_runs)
    low_base, high_base = wilson(base_passed, base_runs)
    change = p_new - p_base
    return (
        change - sqrt((p_new - low_new) ** 2 + (high_base - p_base) ** 2),
        change + sqrt((high_new - p_new) ** 2 + (p_base - low_base) ** 2),
    )


def mcnemar_exact(pass_to_fail: int, fail_to_pass: int) -> float:
    """Exact McNemar test: the two-sided binomial test of the discordant pairs against an even split."""
    discordant = pass_to_fail + fail_to_pass
    if discordant == 0:
        return 1.0
    return float(scipy_stats().binomtest(fail_to_pass, discordant, 0.5).pvalue)


def paired_permutation(base_rates: Sequence[float], new_rates: Sequence[float]) -> float:
    """Two-sided paired permutation test of the mean per-key change: BASE and NEW swapped at random keys.

    A key whose rate did not change contributes the same under every swap, so only the keys that
    changed are handed to scipy: the same p-value, and exact (every swap enumerated) when at most
    13 keys changed.
    """
    import numpy as np

    changed = [(b, n) for b, n in zip(base_rates, new_rates) if b != n]
    if len(changed) < 2:  # both ways of one change are as far from zero as it: every swap is as extreme
        return 1.0
    base = np.array([b for b, _ in changed])
    new = np.array([n for _, n in changed])
    result = scipy_stats().permutation_test(
        (new, base),
        _mean_change,
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        batch=max(1, _BATCH_VALUES // len(changed)),
        alternative="two-sided",
        rng=SEED,
    )
    return float(result.pvalue)


def _mean_change(new: Any, base: Any, axis: int = -1) -> Any:
    return (new - base).mean(axis=axis)


def paired_interval(base_rates: Sequence[float], new_rates: Sequence[float]) -> tuple[float, float] | None:
    """The 95% t interval of the mean per-key change (None under two keys; a point when every key changed alike)."""
    import numpy as np

    if len(base_rates) < 2:
        return None
    base, new = np.asarray(base_rates, dtype=float), np.asarray(new_rates, dtype=float)
    changes = new - base
    if np.all(changes == changes[0]):  # no spread: scipy's interval is undefined, the change is what it is
        return float(changes[0]), float(changes[0])
    found = scipy_stats().ttest_rel(new, base).confidence_interval(confidence_level=CONFIDENCE)
    low, high = float(found.low), float(found.high)
    return (max(low, -1.0), min(high, 1.0)) if isfinite(low) and isfinite(high) else None


def ratio_interval(passed: int, runs: int, base_passed: int, base_runs: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The interval of one pass rate over another, runs of the two independent: Koopman's score interval (1984).

    Where Katz's log interval collapses to a point at 10/10 over 10/10 and has no upper bound at 0/10,
    the score interval keeps its coverage there (Fagerland, Lydersen and Laake 2015 recommend it). Its
    bounds are where the score statistic reaches the chi-square quantile, found by scipy's `brentq`.
    The ratio must be defined: `base_passed` > 0 (and both `runs` > 0).
    """
    from scipy.optimize import brentq

    critical = float(scipy_stats().chi2.ppf(confidence, 1))
    ratio = (passed / runs) / (base_passed / base_runs)

    def excess(phi: float) -> float:
        return _koopman_score(phi, passed, runs, base_passed, base_runs) - critical

    low = 0.0
    if passed > 0:
        bound = ratio / 2
        while excess(bound) <= 0:
            bound /= 2
        low = float(brentq(excess, bound, ratio))
    bound = max(ratio, 1.0) * 2
    while excess(bound) <= 0:
        bound *= 2
    return low, float(brentq(excess, ratio, bound))


def _koopman_score(phi: float, x1: int, n1: int, x2: int, n2: int) -> float:
    """Koopman's chi-square score statistic of the ratio `phi` of rate x1/n1 over x2/n2: the squared gap between
    the rates' ratio and `phi`, over its variance at the rates most likely under `phi` (their constrained MLE)."""
    gap = x1 / n1 - phi * (x2 / n2)
    if gap == 0:
        return 0.0
    total = n1 + n2
    b = phi * (n1 + x2) + x1 + n2
    base = (b - sqrt(max(b * b - 4 * phi * total * (x1 + x2), 0.0))) / (2 * phi * total)
    base = min(max(base, 0.0), 1.0)
    rate = min(phi * base, 1.0)
    variance = rate * (1 - rate) / n1 + phi * phi * base * (1 - base) / n2
    return gap * gap / variance if variance > 0 else float("inf")
