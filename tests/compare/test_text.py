"""The text of a comparison: what it lists, and what it says when there is nothing to list."""

from __future__ import annotations

from dialogcheck import compare_results
from dialogcheck.report.compare_text import render_comparison
from tests.compare.builders import simple, write_batch


def text_of(tmp_path, base, new, **options) -> str:
    comparison = compare_results(write_batch(tmp_path / "b.json", base), write_batch(tmp_path / "n.json", new))
    return render_comparison(comparison, **options).plain


def test_nothing_moved(tmp_path):
    text = text_of(tmp_path, [simple("a", "pass"), simple("b", "fail")], [simple("a", "pass"), simple("b", "fail")])
    assert "keys: 0 regressed, 0 fixed, 0 flaky, 1 still failing, 1 still passing\n" in text
    assert text.endswith("\nno check flipped at any key\n")
    assert "regressed (" not in text and "too noisy" not in text and "errored" not in text


def test_keys_left_out_are_listed_with_why(tmp_path):
    base = [simple("a", "pass"), simple("gone", "pass"), simple("broken", "error")]
    new = [simple("a", "fail"), simple("broken", "pass")] + [simple(f"new{i}", "pass") for i in range(7)]
    text = text_of(tmp_path, base, new)
    assert "errored runs, left out of the pass rates: 1 in BASE, 0 in NEW\n" in text
    assert "only in BASE: 1 key (gone)\n" in text
    assert "only in NEW: 7 keys (new0, new1, new2, new3, new4, ...)\n" in text
    assert "not compared (every run errored on a side): 1 key (broken)\n" in text


def test_noisy_keys_and_checks_of_several_scenarios(tmp_path):
    base = [simple("a", "pass", "One"), simple("a", "fail", "One"), simple("b", "pass", "Two")]
    new = [simple("a", "fail", "One"), simple("a", "pass", "One"), simple("a", "fail", "One"), simple("b", "fail", "Two")]
    text = text_of(tmp_path, base, new)
    assert "too noisy to call (flaky, and the interval of the change spans zero) (1):\n  a 1/2 -> 1/3  -16.7 points" in text
    assert "     1     0  Two: assertion 1 skill_completed card_replace\n" in text
    assert "     1     0  One: assertion 1 skill_completed card_replace\n" in text


def test_max_rows_zero_lists_no_row_but_says_how_many(tmp_path):
    text = text_of(tmp_path, [simple("a", "pass"), simple("b", "pass")], [simple("a", "fail"), simple("b", "fail")], max_rows=0)
    assert "regressed (2):\n  2 more: see --format json or --html\n" in text
    assert "  fell  rose  check\n  1 more: see --format json or --html\n" in text


def test_a_regression_of_keys_whose_repeats_disagree_lists_them_under_the_verdict(tmp_path):
    keys = [f"k{i}" for i in range(8)]
    base = [simple(k, "pass") for k in keys for _ in range(10)] + [simple("f", "pass"), simple("f", "fail")] * 2
    base += [simple("g", "pass"), simple("g", "fail")]
    new = [simple(k, "pass" if run < 5 else "fail") for k in keys for run in range(10)] + [simple("f", "fail")] * 3 + [simple("f", "pass")]
    new += [simple("g", "pass")] * 2
    text = text_of(tmp_path, base, new)
    assert "verdict: regressed (alpha 0.05)\ndriven by the 9 keys whose pass rate fell (8 regressed, 1 flaky), listed below\n" in text
    assert "keys: 8 regressed, 0 fixed, 2 flaky, 0 still failing, 0 still passing\n" in text
    assert "regressed (8):\n" + "".join(f"  {k} 10/10 -> 5/10  -50.0 points (-76.3 to -11.7)" for k in keys[:1]) in text
    assert all(f"  {k} 10/10 -> 5/10  -50.0 points" in text for k in keys)
    # the flaky key that fell comes before the one that rose, though it is not first in key order
    noisy = text.split("too noisy to call (flaky, and the interval of the change spans zero) (2):\n")[1]
    assert noisy.startswith("  f 2/4 -> 1/4  -25.0 points") and "\n  g 1/2 -> 2/2  +50.0 points" in noisy

