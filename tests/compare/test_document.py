"""`compare --format json` written in pieces is the same document as `comparison_document`, at any number of keys."""

from __future__ import annotations

import json

import pytest

from dialogcheck import compare_results
from dialogcheck.compare import comparison_document, comparison_json
from tests.compare.builders import simple, write_batch


@pytest.mark.parametrize("keys", [1, 999, 1000, 2501])
def test_the_pieces_make_the_whole_document(tmp_path, keys):
    base = write_batch(tmp_path / "b.json", [simple(f"k{i}", "pass" if i % 3 else "fail") for i in range(keys)])
    new = write_batch(tmp_path / "n.json", [simple(f"k{i}", "pass" if i % 4 else "fail") for i in range(keys)])
    comparison = compare_results(base, new)
    text = "".join(comparison_json(comparison))
    document = comparison_document(comparison)
    assert json.loads(text) == document
    assert len(document["keys"]) == keys
    assert text.count("\n{\"key\":") == keys  # one key a line


def test_a_comparison_without_a_judged_key_is_still_one_document(tmp_path):
    base = write_batch(tmp_path / "b.json", [simple("a", "error")])
    new = write_batch(tmp_path / "n.json", [simple("a", "pass")])
    comparison = compare_results(base, new)
    document = json.loads("".join(comparison_json(comparison)))
    assert document["keys"] == [] and document["not_judged"] == ["a"]
    assert (document["verdict"], document["p_value"], document["test"], document["interval"]) == ("no significant change", 1.0, "none", None)
