"""The `compare --html` page's key table and status filter, rendered in-process (the browser tests click them)."""

from __future__ import annotations

import re

from dialogcheck import compare_results
from dialogcheck.report.compare_html import render_comparison_html
from tests.compare.builders import simple, write_batch


def test_keys_that_fell_from_every_run_to_half_are_under_the_regressed_filter(tmp_path):
    keys = [f"k{i}" for i in range(8)]
    base = [simple(k, "pass") for k in keys for _ in range(10)]
    new = [simple(k, "pass" if run < 5 else "fail") for k in keys for run in range(10)]
    page = render_comparison_html(compare_results(write_batch(tmp_path / "b.json", base), write_batch(tmp_path / "n.json", new)))
    assert '<button type="button" data-status="regressed" aria-pressed="false">regressed (8)</button>' in page
    assert '<button type="button" data-status="flaky" aria-pressed="false">flaky (0)</button>' in page
    assert re.findall(r'<tr id="key-\d+-(k\d)" data-status="regressed">', page) == keys
    assert "too noisy to call" not in page
