"""The statistics of `compare` on small hand-made tables, against statsmodels' results and exact enumeration.

The reference values were computed once with statsmodels 0.15.0 (on scipy 1.17.1):
`confint_proportions_2indep(new_passed, new_runs, base_passed, base_runs, method="newcomb")`,
`mcnemar([[a, b], [c, d]], exact=True).pvalue` and `DescrStatsW(new - base).tconfint_mean(0.05)`.
The first row of the interval table is Newcombe's own worked example (1998, 56/70 against 48/80).
"""

from __future__ import annotations

import itertools
import math
import sys

import pytest

from dialogcheck.compare import stats
from dialogcheck.compare.stats import MissingStats, change_interval, mcnemar_exact, paired_interval, paired_permutation


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


def test_without_scipy_every_statistic_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # what an import of a missing package does
    stats.wilson.cache_clear()
    try:
        for call in (lambda: mcnemar_exact(1, 2), lambda: change_interval(1, 2, 2, 2), lambda: paired_permutation([1, 1], [0, 0])):
            with pytest.raises(MissingStats, match=r"pip install 'dialogcheck\[stats\]'"):
                call()
    finally:
        stats.wilson.cache_clear()
