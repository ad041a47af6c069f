"""Pairing, statuses, per-check flips, the paired test and the verdict, on hand-made batches."""

from __future__ import annotations

import re

import pytest

from dialogcheck import LoadError, compare_results
from dialogcheck.checks import patterns
from dialogcheck.compare import Status, Verdict
from dialogcheck.compare.stats import change_interval, mcnemar_exact, paired_permutation
from dialogcheck.results.model import CheckKind
from tests.compare.builders import document, simple, write_batch


def sides(tmp_path, base, new):
    return write_batch(tmp_path / "base.json", base), write_batch(tmp_path / "new.json", new)


def by_key(comparison):
    return {key.key: key for key in comparison.keys}


def test_each_status_from_one_run_a_side(tmp_path):
    base = [simple("a", "pass"), simple("b", "pass"), simple("c", "fail"), simple("d", "fail")]
    new = [simple("a", "pass"), simple("b", "fail"), simple("c", "pass"), simple("d", "fail")]
    comparison = compare_results(*sides(tmp_path, base, new))
    statuses = {key: change.status for key, change in by_key(comparison).items()}
    assert statuses == {"a": Status.STILL_PASSING, "b": Status.REGRESSED, "c": Status.FIXED, "d": Status.STILL_FAILING}
    assert comparison.test == "mcnemar"
    assert comparison.p_value == mcnemar_exact(1, 1) == 1.0
    assert comparison.verdict is Verdict.NO_CHANGE
    assert comparison.base.pass_rate == comparison.new.pass_rate == 0.5


def test_repeats_of_a_key_are_its_runs_and_mixed_runs_are_flaky(tmp_path):
    base = [simple("a", "pass"), simple("a", "fail"), simple("b", "pass"), simple("b", "pass")]
    new = [simple("a", "pass"), simple("a", "pass"), simple("b", "pass"), simple("b", "fail"), simple("b", "fail")]
    comparison = compare_results(*sides(tmp_path, base, new))
    a, b = by_key(comparison)["a"], by_key(comparison)["b"]
    assert (str(a.base), str(a.new), a.status) == ("1/2", "2/2", Status.FLAKY)
    assert (str(b.base), str(b.new), b.status) == ("2/2", "1/3", Status.FLAKY)
    assert b.change == pytest.approx(1 / 3 - 1)
    assert b.interval == change_interval(2, 2, 1, 3)
    assert comparison.test == "permutation"
    assert comparison.p_value == paired_permutation([0.5, 1.0], [1.0, 1 / 3])
    assert comparison.change == pytest.approx(((1 - 0.5) + (1 / 3 - 1)) / 2)


def test_seven_keys_that_regressed_are_a_significant_regression(tmp_path):
    keys = [f"k{i}" for i in range(7)]
    base = [simple(k, "pass") for k in keys] + [simple("steady", "fail")]
    new = [simple(k, "fail") for k in keys] + [simple("steady", "fail")]
    comparison = compare_results(*sides(tmp_path, base, new))
    assert comparison.p_value == pytest.approx(0.015625)
    assert comparison.verdict is Verdict.REGRESSED
    assert comparison.change == pytest.approx(-7 / 8)
    assert compare_results(*sides(tmp_path, base, new), alpha=0.01).verdict is Verdict.NO_CHANGE
    assert compare_results(*sides(tmp_path, new, base)).verdict is Verdict.IMPROVED


def test_six_regressions_against_two_fixes_are_not_significant(tmp_path):
    base = [simple(f"r{i}", "pass") for i in range(6)] + [simple("f1", "fail"), simple("f2", "fail")]
    new = [simple(f"r{i}", "fail") for i in range(6)] + [simple("f1", "pass"), simple("f2", "pass")]
    comparison = compare_results(*sides(tmp_path, base, new))
    assert comparison.p_value == pytest.approx(mcnemar_exact(6, 2)) and comparison.p_value > 0.05
    assert comparison.verdict is Verdict.NO_CHANGE
    assert comparison.change == pytest.approx(-0.5)


def test_a_flaky_key_whose_interval_spans_zero_is_too_noisy_to_call(tmp_path):
    base = [simple("noisy", "pass"), simple("noisy", "fail"), simple("clear", "fail")] + [simple("clear", "pass")] * 9
    new = [simple("noisy", "fail"), simple("noisy", "pass"), simple("noisy", "fail")] + [simple("clear", "fail")] * 10
    comparison = compare_results(*sides(tmp_path, base, new))
    noisy, clear = by_key(comparison)["noisy"], by_key(comparison)["clear"]
    assert noisy.status is Status.FLAKY and noisy.noisy and noisy.interval[0] < 0 < noisy.interval[1]
    assert clear.status is Status.REGRESSED and clear.interval[1] < 0 and not clear.noisy  # 9/10 -> 0/10: significant
    assert [key.key for key in comparison.noisy] == ["noisy"]


@pytest.mark.parametrize(
    "before, after, status",
    [
        ((10, 10), (5, 10), Status.REGRESSED),  # from passing every run to half: significant, though NEW's runs disagree
        ((5, 10), (10, 10), Status.FIXED),
        ((400, 400), (200, 400), Status.REGRESSED),
        ((9, 10), (1, 10), Status.REGRESSED),  # both sides mixed
        ((2, 20), (15, 20), Status.FIXED),
        ((10, 10), (8, 10), Status.FLAKY),  # not significant: the interval holds zero
        ((3, 6), (4, 6), Status.FLAKY),
        ((1, 1), (0, 1), Status.REGRESSED),  # one run a side: a flip, significant or not (McNemar counts it)
        ((3, 3), (3, 3), Status.STILL_PASSING),
        ((0, 4), (0, 4), Status.STILL_FAILING),
    ],
)
def test_a_significant_change_is_regressed_or_fixed_whatever_the_rates(tmp_path, before, after, status):
    def runs(passed, judged):
        return [simple("k", "pass")] * passed + [simple("k", "fail")] * (judged - passed)

    key = compare_results(*sides(tmp_path, runs(*before), runs(*after))).keys[0]
    assert key.status is status
    assert key.interval == change_interval(*before, *after)
    significant = key.interval[1] < 0 or key.interval[0] > 0
    assert (key.status is Status.FLAKY) == (not significant and (key.base.mixed or key.new.mixed))
    assert key.noisy == (key.status is Status.FLAKY)


def test_keys_that_fell_from_every_run_to_half_are_regressed_and_drive_the_verdict(tmp_path):
    keys = [f"k{i}" for i in range(8)]
    base = [simple(k, "pass") for k in keys for _ in range(10)]
    new = [simple(k, "pass" if run < 5 else "fail") for k in keys for run in range(10)]
    comparison = compare_results(*sides(tmp_path, base, new))
    assert comparison.verdict is Verdict.REGRESSED
    assert [key.key for key in comparison.by_status(Status.REGRESSED)] == keys
    assert comparison.status_counts()[Status.FLAKY] == 0
    assert [key.key for key in comparison.drivers] == keys
    assert compare_results(*sides(tmp_path, new, base)).status_counts()[Status.FIXED] == 8


def test_per_check_flips_name_the_check_and_the_keys(tmp_path):
    labels = ["tool_executed lookup", "memory_was_set card"]

    def conv(cid, first, second, judged="pass", step="pass"):
        verdict = "pass" if first == second == judged == step == "pass" else "fail"
        return document(cid, verdict, list(zip(labels, (first, second))), sop=[("ask", "llm_judge", step)], criteria=[("polite", judged)])

    base = [conv("a", "pass", "pass"), conv("b", "pass", "fail"), conv("c", "pass", "pass"), conv("d", "fail", "pass")]
    new = [conv("a", "fail", "pass"), conv("b", "fail", "pass"), conv("c", "pass", "pass", judged="fail", step="fail"), conv("d", "pass", "pass")]
    comparison = compare_results(*sides(tmp_path, base, new))
    flips = {(f.check.kind, f.check.index or f.check.id): f for f in comparison.checks}
    lookup = flips[(CheckKind.ASSERTION, 1)]
    assert (lookup.check.label, lookup.pass_to_fail, lookup.fail_to_pass) == ("tool_executed lookup", 2, 1)
    assert lookup.examples_pass_to_fail == ("a", "b") and lookup.examples_fail_to_pass == ("d",)
    memory = flips[(CheckKind.ASSERTION, 2)]
    assert (memory.pass_to_fail, memory.fail_to_pass) == (0, 1)
    criterion, step = flips[(CheckKind.CRITERION, 1)], flips[(CheckKind.SOP, "ask")]
    assert criterion.check.judged and step.check.judged and not lookup.check.judged
    assert (criterion.pass_to_fail, step.pass_to_fail) == (1, 1)
    assert comparison.judge_flips == 2
    assert comparison.checks[0] is lookup  # most flips to a failure first
    c = by_key(comparison)["c"]
    assert [check.title for check in c.broke] == ["SOP ask llm_judge", "criterion 1 'polite'"]
    assert by_key(comparison)["b"].mended[0].title == "assertion 2 memory_was_set card"


def test_a_check_with_the_same_outcomes_at_a_key_never_flips(tmp_path):
    base = [document("a", "fail", [("x", "pass"), ("y", "fail")]), document("a", "pass", [("x", "pass"), ("y", "pass")])]
    new = [document("a", "pass", [("x", "pass"), ("y", "pass")]), document("a", "fail", [("x", "pass"), ("y", "fail")])]
    comparison = compare_results(*sides(tmp_path, base, new))
    assert comparison.checks == () and comparison.keys[0].broke == comparison.keys[0].mended == ()


def test_checks_of_different_scenarios_are_different_checks(tmp_path):
    base = [simple("a", "pass", subject="One"), simple("b", "pass", subject="Two")]
    new = [simple("a", "fail", subject="One"), simple("b", "fail", subject="Two")]
    comparison = compare_results(*sides(tmp_path, base, new))
    assert sorted(f.check.subject for f in comparison.checks) == ["One", "Two"]
    assert all(f.pass_to_fail == 1 for f in comparison.checks)


def test_errored_runs_are_left_out_and_counted_apart(tmp_path):
    base = [simple("a", "pass"), simple("a", "error"), simple("b", "pass"), simple("c", "fail")]
    new = [simple("a", "pass"), simple("b", "error"), simple("b", "error"), simple("c", "error"), simple("c", "fail")]
    comparison = compare_results(*sides(tmp_path, base, new))
    a = by_key(comparison)["a"]
    assert (str(a.base), a.base.errored, a.status) == ("1/1", 1, Status.STILL_PASSING)
    assert comparison.not_judged == ("b",)
    assert [key.key for key in comparison.keys] == ["a", "c"]
    assert (comparison.base.errored, comparison.new.errored) == (1, 3)
    assert comparison.test == "mcnemar"  # one judged run a side at every compared key


def test_keys_on_one_side_only_are_listed(tmp_path):
    base = [simple("a", "pass"), simple("gone", "pass")]
    new = [simple("a", "pass"), simple("added", "fail"), simple("added2", "fail")]
    comparison = compare_results(*sides(tmp_path, base, new))
    assert (comparison.only_base, comparison.only_new) == (("gone",), ("added", "added2"))
    assert (comparison.base.keys, comparison.new.keys) == (2, 3)


def test_nothing_in_common_is_bad_input_that_suggests_match(tmp_path):
    base, new = sides(tmp_path, [simple("task-1-trial-0", "pass")], [simple("task-1-trial-2", "pass")])
    with pytest.raises(LoadError) as info:
        compare_results(base, new)
    assert str(info.value) == (
        f"{new}:1:1: nothing to compare: pairing by scenario slug or conversation id gives no key both sides have "
        "(BASE `task-1-trial-0`; NEW `task-1-trial-2`): pair them with --match REGEX, whose one group captures the key (e.g. 'task-(\\d+)')"
    )
    comparison = compare_results(base, new, match=r"task-(\d+)")
    assert [key.key for key in comparison.keys] == ["1"] and comparison.match == r"task-(\d+)"


def test_a_name_match_finds_no_key_in_is_bad_input_at_its_line(tmp_path):
    base, new = sides(tmp_path, [simple("task-1-trial-0", "pass")], [simple("task-1-trial-2", "pass"), simple("other", "pass")])
    with pytest.raises(LoadError) as info:
        compare_results(base, new, match=r"task-(\d+)")
    assert str(info.value) == f"{new}:3:1: --match /task-(\\d+)/ finds no key in `other`"


@pytest.mark.parametrize("match, message", [("task-\\d+", "exactly one capturing group"), ("(", "not a valid regular expression")])
def test_a_bad_match_pattern_is_a_value_error(tmp_path, match, message):
    with pytest.raises(ValueError, match=message):
        compare_results(*sides(tmp_path, [simple("a", "pass")], [simple("a", "pass")]), match=match)


@pytest.mark.parametrize("match", [r"(a+)+$", r"(a|aa)+$", re.compile(r"(a|aa)+$"), re.compile(r"(A|AA)+$", re.IGNORECASE)])
def test_a_match_that_backtracks_catastrophically_on_a_name_is_bad_input_not_a_hang(tmp_path, monkeypatch, match):
    monkeypatch.setattr(patterns, "CHECK_BUDGET", 0.2)  # what runs out of 0.2 s runs out of 1 s
    slow = "a" * 5000 + "!"
    base, new = sides(tmp_path, [simple("aaaa", "pass"), simple(slow, "pass")], [simple("aaaa", "pass")])
    with pytest.raises(LoadError) as info:
        compare_results(base, new, match=match)
    source = match if isinstance(match, str) else ("(?i)" if match.flags & re.IGNORECASE else "") + match.pattern
    assert str(info.value) == (
        f"{base}:3:1: --match /{source}/ ran out of its 0.2 s for searching `{slow[:79]}…` (5,001 characters):"
        " it backtracks catastrophically: simplify it"
    )


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5])
def test_alpha_must_be_inside_zero_to_one(tmp_path, alpha):
    with pytest.raises(ValueError, match="alpha"):
        compare_results(*sides(tmp_path, [simple("a", "pass")], [simple("a", "pass")]), alpha=alpha)


def test_each_key_weighs_the_same_in_the_overall_rate(tmp_path):
    base = [simple("a", "pass")] * 9 + [simple("b", "fail")]
    new = [simple("a", "pass")] * 9 + [simple("b", "fail")]
    comparison = compare_results(*sides(tmp_path, base, new))
    assert comparison.base.pass_rate == 0.5 and comparison.change == 0.0
    assert comparison.p_value == 1.0 and comparison.verdict is Verdict.NO_CHANGE


def test_a_suspect_run_is_left_out_of_the_pass_rate_and_of_the_check_flips(tmp_path):
    base = [simple("a", "pass"), simple("b", "pass")]
    new = [simple("a", "pass"), document("a", "suspect", [("skill_completed card_replace", "fail")]), simple("b", "fail")]
    comparison = compare_results(*sides(tmp_path, base, new))
    a = by_key(comparison)["a"]
    assert (str(a.new), a.status, a.broke) == ("1/1", Status.STILL_PASSING, ())  # the suspect run's failed check is no flip
    assert [(f.pass_to_fail, f.examples_pass_to_fail) for f in comparison.checks] == [(1, ("b",))]
