"""The formats `import --from` and `check --input-format` take are those of SPEC section 9."""

from __future__ import annotations

import pytest

from dialogcheck.importers import IMPORTERS, import_file
from dialogcheck.events.load import iter_conversation_file
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
