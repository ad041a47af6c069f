"""The statistics of `compare` on small hand-made tables, against statsmodels' results and exact enumeration.

The reference values were computed once with statsmodels 0.15.0 (on scipy 1.17.1):
`confint_proportions_2indep(new_passed, new_runs, base_passed, base_runs, method="newcomb")`,
`mcnemar([[a, b], [c, d]], exact=True).pvalue` and `DescrStatsW(new - base).tconfint_mean(0.05)`.
The first row of the interval table is Newcombe's own worked example (1998, 56/70 against 48/80).
The ratio intervals are `confint_proportions_2indep(passed, runs, base_passed, base_runs, method="score",
compare="ratio", correction=False, alpha=...)` (Koopman's score interval), the first row Koopman's own example
(1984, 36/40 against 16/80: 2.94 to 7.15); where statsmodels' closed form fails at a boundary (every run passed
on a side, its lower bound then the point estimate) the bound is worked out by hand instead.
"""

from __future__ import annotations

import itertools
import math
import sys

import pytest

from dialogcheck.compare import stats
from dialogcheck.compare.stats import MissingStats, change_interval, mcnemar_exact, paired_interval, paired_permutation, ratio_interval


@pytest.mark.parametrize(
    "new_passed, new_runs, base_passed, base_runs, low, high",
    [
        (56, 70, 48, 80, 0.05243147240236498, 0.33387265403690614),
        (9, 10, 3, 10, 0.1705227239345029, 0.809017973535488),
        (0, 1, 1, 1, -1.0, 0.12210872068194178),
        (2, 2, 0, 2, 0.06998519885519938, 1.0),
        (1, 2, 2, 2, -0.9054687942657693, 0.2725727851131816),
        (5, 5, 0, 5, 0.38554900569034356, 1.0),
        (10, 10, 10, 10, -0.27753279986288937, 0.27753279986288937),
        (3, 4, 1, 4, -0.13548840058295153, 0.7890832680847557),
    ],
)
def test_change_interval_is_newcombes_as_statsmodels_computes_it(new_passed, new_runs, base_passed, base_runs, low, high):
    found = change_interval(base_passed, base_runs, new_passed, new_runs)
    assert found == pytest.approx((low, high), abs=1e-9)


def test_the_interval_of_a_change_is_the_mirror_of_the_opposite_change():
    up = change_interval(1, 4, 3, 4)
    down = change_interval(3, 4, 1, 4)
    assert down == pytest.approx((-up[1], -up[0]))
    assert up != pytest.approx(down)


@pytest.mark.parametrize(
    "pass_to_fail, fail_to_pass, p_value",
    [(1, 6, 0.125), (0, 7, 0.015625), (3, 3, 1.0), (2, 9, 0.0654296875), (10, 3, 0.09228515625), (0, 0, 1.0)],
)
def test_exact_mcnemar_as_statsmodels_computes_it(pass_to_fail, fail_to_pass, p_value):
    assert mcnemar_exact(pass_to_fail, fail_to_pass) == pytest.approx(p_value, rel=1e-12)


def test_exact_mcnemar_is_the_binomial_tail_of_the_discordant_pairs():
    """Two-sided: twice the smaller tail of Binomial(b + c, 1/2), at most 1."""
    b, c = 2, 9
    tail = sum(math.comb(b + c, k) for k in range(0, min(b, c) + 1)) / 2 ** (b + c)
    assert mcnemar_exact(b, c) == pytest.approx(min(1.0, 2 * tail))


def _enumerated(base: list[float], new: list[float]) -> float:
    """The two-sided p-value of the paired permutation test, every swap of BASE and NEW enumerated by hand."""
    changes = [n - b for b, n in zip(base, new)]
    observed = abs(sum(changes))
    swaps = list(itertools.product((1, -1), repeat=len(changes)))
    return sum(abs(sum(s * c for s, c in zip(signs, changes))) >= observed - 1e-12 for signs in swaps) / len(swaps)


@pytest.mark.parametrize(
    "base, new",
    [
        ([1, 1, 0.5, 1, 0, 1, 0.5], [0, 0.5, 0, 0, 0, 0.5, 0.5]),
        ([0.5, 0.5, 1, 0], [1, 0, 1, 0.5]),
        ([1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 1]),
        ([0.25, 0.75, 0.5], [0.5, 0.5, 1.0]),
    ],
)
def test_paired_permutation_is_exact_on_few_keys(base, new):
    assert paired_permutation(base, new) == pytest.approx(_enumerated(base, new), abs=1e-12)


def test_keys_that_did_not_change_leave_the_permutation_test_as_it_was():
    base, new = [1, 1, 0.5, 1, 0], [0, 0.5, 0, 0, 0.5]
    assert paired_permutation(base + [1, 0, 0.5] * 10, new + [1, 0, 0.5] * 10) == pytest.approx(paired_permutation(base, new))
    assert paired_permutation([1, 0, 0.5], [1, 0, 0.5]) == 1.0
    assert paired_permutation([1, 0, 0.5], [0, 0, 0.5]) == _enumerated([1], [0]) == 1.0


def test_paired_permutation_is_the_same_every_time_on_many_keys():
    """Past 13 changed keys the swaps are drawn at random, with a fixed seed."""
    base = [1.0] * 20 + [0.0] * 10
    new = [0.0] * 14 + [1.0] * 6 + [0.0] * 7 + [1.0] * 3
    first = paired_permutation(base, new)
    assert first == paired_permutation(base, new)
    assert first == pytest.approx(_sampled_reference(base, new), abs=0.01)
    assert first < 0.05


def _sampled_reference(base, new):
    """McNemar's exact p-value for the same table: a permutation test of 0/1 rates is that test."""
    down = sum(b > n for b, n in zip(base, new))
    up = sum(n > b for b, n in zip(base, new))
    return mcnemar_exact(down, up)


@pytest.mark.parametrize(
    "base, new, low, high",
    [
        ([1, 1, 0, 0, 1, 0], [0, 1, 0, 1, 0, 0], -0.9566531171586188, 0.6233197838252855),
        ([1, 0.5, 0, 1, 0.5], [0.5, 0.5, 0, 0, 1], -0.9078573884911361, 0.5078573884911362),
    ],
)
def test_paired_interval_is_the_t_interval_statsmodels_computes(base, new, low, high):
    assert paired_interval(base, new) == pytest.approx((low, high), abs=1e-9)


def test_paired_interval_without_spread_or_keys():
    assert paired_interval([1, 1, 1], [0, 0, 0]) == (-1.0, -1.0)
    assert paired_interval([1], [0]) is None
    low, high = paired_interval([1, 1, 1, 0], [0, 0, 0, 1])
    assert -1.0 <= low < high <= 1.0


@pytest.mark.parametrize(
    "passed, runs, base_passed, base_runs, confidence, low, high",
    [
        (36, 40, 16, 80, 0.95, 2.9395691922149965, 7.15222343486603),
        (6, 10, 9, 10, 0.95, 0.34072798818603944, 1.136064099608032),
        (3, 5, 8, 9, 0.95, 0.2550092495409192, 1.2546963143451806),
        (9, 10, 3, 10, 0.95, 1.3532371938667245, 8.46766868670978),
        (20, 40, 10, 40, 0.95, 1.1054755886694503, 3.763928545361902),
        (0, 10, 5, 10, 0.95, 0.0, 0.6128605774257668),
        (36, 40, 16, 80, 0.99, 2.598049751056121, 8.284221357270198),
        (6, 10, 9, 10, 0.99, 0.2694320803928564, 1.402291273409232),
        (0, 10, 5, 10, 0.99, 0.0, 0.995710630125485),
    ],
)
def test_ratio_interval_is_koopmans_as_statsmodels_computes_it(passed, runs, base_passed, base_runs, confidence, low, high):
    assert ratio_interval(passed, runs, base_passed, base_runs, confidence) == pytest.approx((low, high), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("runs, base_runs", [(10, 10), (5, 5), (1, 1), (4, 7)])
@pytest.mark.parametrize("confidence", [0.95, 0.99])
def test_ratio_interval_of_every_run_passing_on_both_sides_is_worked_out_by_hand(runs, base_runs, confidence):
    """At n/n over m/m the rates most likely under a ratio r < 1 are (r, 1), over 1 (1, 1/r): the score statistic is
    n(1 - r)/r below 1 and m(r - 1) above, so the bounds are n / (n + c) and 1 + c / m for the chi-square quantile c."""
    c = {0.95: 3.841458820694124, 0.99: 6.634896601021214}[confidence]
    low, high = ratio_interval(runs, runs, base_runs, base_runs, confidence)
    assert (low, high) == pytest.approx((runs / (runs + c), 1 + c / base_runs), rel=1e-9)
    assert low < 1 < high  # never the point Katz's log interval collapses to


def test_ratio_interval_holds_the_ratio_and_grows_with_the_confidence():
    for table in [(1, 3, 3, 3), (2, 9, 7, 8), (4, 4, 1, 6), (1, 50, 49, 50)]:
        ratio = (table[0] / table[1]) / (table[2] / table[3])
        low, high = ratio_interval(*table)
        wider = ratio_interval(*table, confidence=0.99)
        assert 0 < low < ratio < high and wider[0] < low and wider[1] > high


def test_without_scipy_every_statistic_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # what an import of a missing package does
    stats.wilson.cache_clear()
    try:
        for call in (lambda: mcnemar_exact(1, 2), lambda: change_interval(1, 2, 2, 2), lambda: paired_permutation([1, 1], [0, 0]), lambda: ratio_interval(1, 2, 2, 2)):
            with pytest.raises(MissingStats, match=r"pip install 'dialogcheck\[stats\]'"):
                call()
    finally:
        stats.wilson.cache_clear()
