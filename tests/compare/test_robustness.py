"""`compare` of a faulted batch against its baseline (`run --faults off`) reads as robustness.

The folders are written by the results writer with known counts, so every figure is worked out here:
pass rates pooled over the keys both sides ran with an environment, errored runs left out; per fault
kind, the faulted runs that met it against the baseline runs of the same keys. The intervals are
Koopman's score interval, its reference values computed once with statsmodels 0.15.0
(`confint_proportions_2indep(..., method="score", compare="ratio", correction=False)`), or by hand where
statsmodels' closed form fails (every baseline run passed).
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest

from dialogcheck import compare_results
from dialogcheck.compare.document import comparison_document, comparison_json
from dialogcheck.report.compare_html import render_comparison_html
from dialogcheck.report.compare_text import render_comparison
from tests import inprocess
from tests.compare.builders import environment, write_run_folder
from tests.conftest import plain_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

OFF, ON = environment(False), environment(True)

#: BASE, as `run --faults off` leaves it: every run with an environment has its schedule off.
BASELINE = [
    *[("order", "pass", OFF)] * 4, ("order", "fail", OFF), ("order", "error", OFF),
    *[("card", "pass", OFF)] * 5,
    *[("refund", "fail", OFF)] * 3,
    *[("plain", "pass", None)] * 3,
    ("gone", "pass", OFF),
    *[("broken", "pass", OFF)] * 2,
]
#: NEW, the same scenarios with faults on: `plain` has no environment, `gone` and `fresh` are on one side only,
#: `broken`'s faulted runs all errored.
FAULTED = [
    ("order", "pass", environment(True, "timeout")),
    ("order", "fail", environment(True, "timeout")),
    ("order", "fail", environment(True, "timeout", "timeout")),
    ("order", "pass", environment(True, "error")),
    ("order", "fail", ON),
    ("order", "error", environment(True, "timeout")),
    ("card", "fail", environment(True, "timeout", "error")),
    *[("card", "pass", ON)] * 4,
    ("refund", "pass", environment(True, "empty")),
    *[("refund", "fail", ON)] * 2,
    *[("plain", "pass", None)] * 3,
    ("fresh", "pass", environment(True, "timeout")),
    *[("broken", "error", environment(True, "timeout"))] * 2,
]

#: The 95% chi-square quantile of one degree of freedom.
CHI2 = 3.841458820694124


@pytest.fixture
def batches(tmp_path) -> tuple[Path, Path]:
    return write_run_folder(tmp_path / "base", BASELINE), write_run_folder(tmp_path / "faulted", FAULTED)


def rate(figure) -> tuple[int, int, int]:
    return figure.passed, figure.judged, figure.errored


def test_the_faulted_batch_over_its_baseline_overall(batches):
    robustness = compare_results(*batches).robustness
    assert robustness is not None and robustness.faulted == "new" and robustness.confidence == 0.95
    overall = robustness.overall
    # order 2/5 + card 4/5 + refund 1/3 under faults; 4/5 + 5/5 + 0/3 without; an errored run of `order` each side
    assert (rate(overall.faulted), rate(overall.baseline)) == ((7, 13, 1), (9, 13, 1))
    assert overall.ratio == pytest.approx((7 / 13) / (9 / 13)) == pytest.approx(7 / 9)
    assert overall.interval == pytest.approx((0.39403865026873797, 1.456105023215118), rel=1e-9)
    assert overall.keys == 3
    assert robustness.met_no_fault == 7  # order run 5, card runs 2 to 5, refund runs 2 and 3
    assert robustness.unpaired == ("gone", "fresh")
    assert robustness.without_environment == ("plain",)
    assert robustness.not_judged == ("broken",)


def test_each_scenario_worst_first_and_a_zero_baseline_has_no_ratio(batches):
    keys = compare_results(*batches).robustness.keys
    assert [(k.key, rate(k.ratio.faulted), rate(k.ratio.baseline)) for k in keys] == [
        ("order", (2, 5, 1), (4, 5, 1)),
        ("card", (4, 5, 0), (5, 5, 0)),
        ("refund", (1, 3, 0), (0, 3, 0)),
    ]
    order, card, refund = (k.ratio for k in keys)
    assert order.ratio == pytest.approx(0.5) and order.interval == pytest.approx((0.14060495917527197, 1.4473617650229569), rel=1e-9)
    # every baseline run passed: under a ratio r below 4/5 the likeliest rates are (r, 1), so the lower bound is
    # the smaller root of 5 (4/5 - r)^2 = c r (1 - r); the upper one is statsmodels'
    a, b, c = 5 + CHI2, 2 * 4 + CHI2, 16 / 5
    assert card.ratio == pytest.approx(0.8)
    assert card.interval == pytest.approx(((b - math.sqrt(b * b - 4 * a * c)) / (2 * a), 1.491462587724949), rel=1e-9)
    assert (refund.ratio, refund.interval) == (None, None)  # 1/3 over 0/3: undefined, never a division by zero


def test_each_fault_kind_against_the_baseline_of_the_keys_that_met_it(batches):
    kinds = {k.kind: k for k in compare_results(*batches).robustness.kinds}
    assert list(kinds) == ["empty", "error", "timeout"]
    timeout = kinds["timeout"]
    # order runs 1 to 3 (a run that met a kind twice counts once) and card run 1; order's errored run 6 is left out
    assert (rate(timeout.ratio.faulted), rate(timeout.ratio.baseline), timeout.ratio.keys) == ((1, 4, 1), (9, 10, 1), 2)
    assert timeout.ratio.ratio == pytest.approx(0.25 / 0.9)
    assert timeout.ratio.interval == pytest.approx((0.050282031985662175, 0.840403548169787), rel=1e-9)
    error = kinds["error"]
    assert (rate(error.ratio.faulted), rate(error.ratio.baseline)) == ((1, 2, 0), (9, 10, 1))
    assert error.ratio.interval == pytest.approx((0.10424568592201316, 1.1730882768882698), rel=1e-9)
    empty = kinds["empty"]
    assert (rate(empty.ratio.faulted), rate(empty.ratio.baseline), empty.ratio.ratio, empty.ratio.interval) == ((1, 1, 0), (0, 3, 0), None, None)


def test_the_reverse_sides_name_base_as_the_faulted_one(batches):
    base, faulted = batches
    forward, reverse = compare_results(base, faulted).robustness, compare_results(faulted, base).robustness
    assert reverse.faulted == "base"
    assert (reverse.overall, reverse.keys, reverse.kinds, reverse.met_no_fault) == (forward.overall, forward.keys, forward.kinds, forward.met_no_fault)
    assert reverse.unpaired == ("fresh", "gone")  # in the order BASE, then NEW, name them


def test_the_interval_is_at_the_comparisons_alpha(batches):
    robustness = compare_results(*batches, alpha=0.1).robustness
    assert robustness.confidence == pytest.approx(0.9)
    assert robustness.overall.interval == pytest.approx((0.4423985565986966, 1.3097492718543389), rel=1e-9)


@pytest.mark.parametrize(
    "base, new",
    [
        pytest.param(None, None, id="no-environment"),
        pytest.param(ON, ON, id="faults-on-both"),
        pytest.param(OFF, OFF, id="faults-off-both"),
        pytest.param(None, ON, id="faults-on-one-side-only"),
        pytest.param(OFF, None, id="faults-off-one-side-only"),
    ],
)
def test_without_a_baseline_and_a_faulted_side_nothing_changes(tmp_path, base, new):
    """The text, JSON and page of two batches without faults on one side and off on the other are what they were."""

    def folders(name, base_env, new_env):
        root = tmp_path / name
        return (
            write_run_folder(root / "base", [("a", "pass", base_env), ("a", "pass", base_env), ("b", "fail", base_env), ("c", "pass", base_env), ("e", "error", base_env), ("gone", "pass", base_env)]),
            write_run_folder(root / "new", [("a", "pass", new_env), ("a", "fail", new_env), ("b", "pass", new_env), ("c", "pass", new_env), ("e", "pass", new_env), ("d", "pass", new_env)]),
        )

    plain = compare_results(*folders("plain", None, None))
    comparison = compare_results(*folders("env", base, new))
    assert comparison.robustness is None
    root = str(tmp_path / "env")
    text = render_comparison(comparison).plain.replace(root, "{root}")
    assert text == GOLDEN_TEXT  # what compare printed before robustness
    assert text == render_comparison(plain).plain.replace(str(tmp_path / "plain"), "{root}")
    assert "".join(comparison_json(comparison)).replace(root, "{root}") == "".join(comparison_json(plain)).replace(str(tmp_path / "plain"), "{root}")
    assert "robustness" not in comparison_document(comparison)
    assert render_comparison_html(comparison).replace(root, "{root}") == render_comparison_html(plain).replace(str(tmp_path / "plain"), "{root}")
    assert "Robustness" not in render_comparison_html(comparison)


GOLDEN_TEXT = """\
BASE {root}/base (run results folder): 6 runs, 5 keys
NEW  {root}/new (run results folder): 6 runs, 5 keys

pass rate 66.7% -> 83.3%: +16.7 points (95% interval -100.0 to +100.0) over 3 keys
paired permutation test on per-key pass rates: p = 1
verdict: no significant change (alpha 0.05)

keys: 0 regressed, 1 fixed, 1 flaky, 0 still failing, 1 still passing

fixed (1):
  b 0/1 -> 1/1  +100.0 points (-12.2 to +100.0)

too noisy to call (flaky, and the interval of the change spans zero) (1):
  a 2/2 -> 1/2  -50.0 points (-90.5 to +27.3)

no check flipped at any key

errored runs, left out of the pass rates: 1 in BASE, 0 in NEW
only in BASE: 1 key (gone)
only in NEW: 1 key (d)
not compared (every run errored on a side): 1 key (e)
"""


def test_the_text_has_a_robustness_section_last(batches):
    text = render_comparison(compare_results(*batches)).plain
    section = text[text.index("\nrobustness"):]
    assert section == (
        "\nrobustness (NEW ran with faults on, BASE with them off; errored runs left out):\n"
        "  pass rate under faults over without: 7/13 over 9/13 = 0.78 (95% interval 0.39 to 1.46) over 3 keys\n"
        "  by fault kind (runs that met it, against the baseline runs of the same keys):\n"
        "    empty    1/1 over 0/3  undefined (no baseline run passed), 1 key\n"
        "    error    1/2 over 9/10 = 0.56 (0.10 to 1.17), 2 keys\n"
        "    timeout  1/4 over 9/10 = 0.28 (0.05 to 0.84), 2 keys\n"
        "  keys, worst first:\n"
        "    order   2/5 over 4/5 = 0.50 (0.14 to 1.45)\n"
        "    card    4/5 over 5/5 = 0.80 (0.38 to 1.49)\n"
        "    refund  1/3 over 0/3  undefined (no baseline run passed)\n"
        "  7 runs under faults met no fault: counted in the overall and per-key figures only\n"
        "  left out: 2 keys with an environment on one side only (gone, fresh); 1 key without an environment (plain);"
        " 1 key with every run errored on a side (broken)\n"
    )


def test_max_rows_bounds_the_keys_of_the_robustness_section(batches):
    text = render_comparison(compare_results(*batches), max_rows=1).plain
    keys = text[text.index("  keys, worst first:\n"):]
    assert keys.startswith("  keys, worst first:\n    order  2/5 over 4/5 = 0.50 (0.14 to 1.45)\n    2 more: see --format json or --html\n")


def test_the_command_prints_robustness_in_json(batches):
    base, faulted = batches
    done = inprocess.run([DIALOGCHECK, "compare", base, faulted, "--format", "json"], text=True, env=plain_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    robustness = document["robustness"]
    assert list(document)[-1] == "keys" and list(robustness) == ["faulted", "confidence", "overall", "kinds", "keys", "met_no_fault", "unpaired", "without_environment", "not_judged"]
    assert (robustness["faulted"], robustness["confidence"], robustness["met_no_fault"]) == ("new", 0.95, 7)
    overall = robustness["overall"]
    assert overall["faulted"] == {"passed": 7, "judged": 13, "errored": 1, "pass_rate": 7 / 13}
    assert overall["baseline"] == {"passed": 9, "judged": 13, "errored": 1, "pass_rate": 9 / 13}
    assert (overall["ratio"], overall["keys"]) == (pytest.approx(7 / 9), 3)
    assert overall["interval"] == pytest.approx([0.39403865026873797, 1.456105023215118], rel=1e-9)
    assert [kind["kind"] for kind in robustness["kinds"]] == ["empty", "error", "timeout"]
    assert robustness["kinds"][0] | {"faulted": None, "baseline": None} == {"kind": "empty", "faulted": None, "baseline": None, "ratio": None, "interval": None, "keys": 1}
    assert [key["key"] for key in robustness["keys"]] == ["order", "card", "refund"]
    assert robustness["keys"][2]["ratio"] is None and robustness["keys"][2]["baseline"]["pass_rate"] == 0.0
    assert (robustness["unpaired"], robustness["without_environment"], robustness["not_judged"]) == (["gone", "fresh"], ["plain"], ["broken"])
    assert comparison_document(compare_results(base, faulted))["robustness"] == robustness  # what the MCP tool answers


def test_the_page_has_a_robustness_table_with_every_value_escaped(tmp_path):
    base = write_run_folder(tmp_path / "base", [("a<b>", "pass", OFF), ("a<b>", "pass", OFF)])
    new = write_run_folder(tmp_path / "new", [("a<b>", "fail", environment(True, "<script>x</script>")), ("a<b>", "pass", ON)])
    page = render_comparison_html(compare_results(base, new))
    table = re.search(r'<h2>Robustness</h2>.*?<table id="robustness">(.*?)</table>', page, re.S)
    assert table is not None
    rows = re.findall(r"<tr>(.*?)</tr>", table.group(1))
    cells = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in rows]
    assert cells[1:] == [
        ["overall", "1/2", "2/2", "0.50", "0.09 to 1.94"],
        ["fault &lt;script&gt;x&lt;/script&gt;", "0/1", "2/2", "0.00", "0.00 to 1.28"],
        ["a&lt;b&gt;", "1/2", "2/2", "0.50", "0.09 to 1.94"],
    ]
    assert "<script>x" not in page and "a<b>" not in page
    text = render_comparison(compare_results(base, new)).plain
    assert "    <script>x</script>  0/1 over 2/2 = 0.00 (0.00 to 1.28), 1 key\n" in text


def test_a_kind_met_only_on_errored_runs_has_no_ratio_and_the_text_says_why(tmp_path):
    base = write_run_folder(tmp_path / "base", [("a", "pass", OFF)] * 2)
    new = write_run_folder(tmp_path / "new", [("a", "pass", ON), ("a", "error", environment(True, "latency"))])
    comparison = compare_results(base, new, alpha=0.1)
    (latency,) = comparison.robustness.kinds
    assert (rate(latency.ratio.faulted), rate(latency.ratio.baseline), latency.ratio.keys, latency.ratio.ratio) == ((0, 0, 1), (0, 0, 0), 0, None)
    text = render_comparison(comparison).plain
    assert "    latency  0/0 over 0/0  undefined (every run under faults errored), 0 keys\n" in text
    # 1/1 over 2/2, every run passing: by hand 1 / (1 + c) to 1 + c / 2, c the 90% quantile of chi-square with one degree of freedom
    assert "  pass rate under faults over without: 1/1 over 2/2 = 1.00 (90% interval 0.27 to 2.35) over 1 key\n" in text
    c = 2.705543454095404
    assert comparison.robustness.overall.interval == pytest.approx((1 / (1 + c), 1 + c / 2), rel=1e-9)
    kind = comparison_document(comparison)["robustness"]["kinds"][0]
    assert kind == {"kind": "latency", "faulted": None, "baseline": None, "ratio": None, "interval": None, "keys": 0}


def test_no_key_on_both_sides_with_an_environment_leaves_no_overall_figure(tmp_path):
    base = write_run_folder(tmp_path / "base", [("a", "pass", None), ("b", "pass", OFF)])
    new = write_run_folder(tmp_path / "new", [("a", "pass", None), ("c", "fail", environment(True, "timeout"))])
    comparison = compare_results(base, new)
    robustness = comparison.robustness
    assert (robustness.overall, robustness.kinds, robustness.keys) == (None, (), ())
    assert (robustness.unpaired, robustness.without_environment) == (("b", "c"), ("a",))
    text = render_comparison(comparison).plain
    assert text.endswith(
        "\nrobustness (NEW ran with faults on, BASE with them off; errored runs left out):\n"
        "  no key ran with an environment on both sides with a judged run on each\n"
        "  left out: 2 keys with an environment on one side only (b, c); 1 key without an environment (a)\n"
    )
    assert comparison_document(comparison)["robustness"]["overall"] is None
    assert '<table id="robustness"><thead>' in render_comparison_html(comparison)
