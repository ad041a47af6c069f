"""The formats `import --from` and `check --input-format` take are those of SPEC section 9."""

from __future__ import annotations

import pytest

from dialogcheck.events.load import iter_conversation_file
from dialogcheck.importers import IMPORTERS, import_file
from tests.conftest import EXAMPLE


def test_the_spec_formats():
    assert sorted(IMPORTERS) == ["openai", "otlp", "rasa-proto", "rasa-tracker", "tau-bench", "tau2"]


def test_an_unknown_format_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown import format 'csv'"):
        import_file("x.json", "csv")


def test_rasa_tracker_is_the_native_form_unchanged():
    path = EXAMPLE / "conversations" / "transfer_tracker.json"
    (imported,) = import_file(path, "rasa-tracker")
    (native,) = iter_conversation_file(path)
    assert imported.conversation == native
    assert imported.events == tuple(native.raw_events)


def test_a_count_of_problems_left_out_is_carried_over_when_logs_are_joined():
    """A conversation's own capped problems joined into its file's: the count adds up, the place is the first left out."""
    from dialogcheck.errors import LeftOut, Problem, ProblemLog

    inner = ProblemLog(limit=2)
    inner.extend(Problem(f"p{i}", "f", i) for i in range(1, 6))
    outer = ProblemLog(limit=3)
    outer.add(Problem("first", "f", 0))
    outer.extend(inner.problems())
    *kept, more = outer.problems()
    assert [p.message for p in kept] == ["first", "p1", "p2"]
    assert isinstance(more, LeftOut) and (more.count, more.line) == (3, 3)
    assert more.message == "... and 3 more errors from here on (only the first 3 are shown)"
