"""Names one edit from a known event type or field are probable typos; everything else is kept quietly."""

from __future__ import annotations

import pytest

from dialogcheck.events.parse import EventReader
from dialogcheck.events.typos import KNOWN_FIELDS, field_hint, name_warnings, one_edit_apart, type_hint


@pytest.mark.parametrize(
    "a, b",
    [
        ("tool_exectued", "tool_executed"),  # two neighbours swapped
        ("txt", "text"),  # a letter dropped
        ("texts", "text"),  # a letter added
        ("tezt", "text"),  # a letter changed
        ("xtext", "text"),  # added in front
        ("etxt", "text"),  # swapped in front
        ("tetx", "text"),  # swapped at the end
        ("Text", "text"),  # case is a change
        ("a", ""),
    ],
)
def test_one_edit_apart(a, b):
    assert one_edit_apart(a, b) and one_edit_apart(b, a)


@pytest.mark.parametrize("a, b", [("text", "text"), ("ttxe", "text"), ("tx", "text"), ("abc", "cab"), ("parse_data", "data"), ("abcd", "adcb")])
def test_not_one_edit_apart(a, b):
    assert not one_edit_apart(a, b) and not one_edit_apart(b, a)


def test_known_fields_are_the_fields_each_type_reads():
    assert KNOWN_FIELDS["user"] == {"event", "timestamp", "metadata", "text"}
    assert KNOWN_FIELDS["tool_executed"] == {
        "event", "timestamp", "metadata", "tool_name", "source", "arguments", "result", "is_error", "error_message", "mcp_server", "skill_id",
    }
    assert KNOWN_FIELDS["ordered_block_completed"] == {"event", "timestamp", "metadata", "skill_id", "block_id", "step_id"}


def test_hints_for_types_and_fields():
    assert type_hint("tool_exectued") == "tool_executed"
    assert type_hint("skill_complete") == "skill_completed"
    assert [type_hint(kind) for kind in ("action", "slot", "session_started", "user_featurization")] == [None] * 4  # Rasa's own
    assert field_hint("user", "txt") == "text"
    assert field_hint("tool_executed", "argumnets") == "arguments"
    assert field_hint("tool_executed", "is_eror") == "is_error"
    assert [field_hint("user", name) for name in ("parse_data", "input_channel", "message_id")] == [None] * 3  # Rasa's own


def test_name_warnings_of_an_event_object():
    assert name_warnings(0, {"event": "user", "text": "hi", "parse_data": {}}) == []
    (typo,) = name_warnings(3, {"event": "user", "txt": "hi"})
    assert typo.message == "event 3: unknown field `txt` in a `user` event (did you mean `text`?)"
    (typo,) = name_warnings(5, {"event": "tool_exectued", "tool_name": "t"})
    assert typo.message == "event 5: unknown event type `tool_exectued` (did you mean `tool_executed`?)"
    assert name_warnings(1, {"event": "tool_exectued_later"}) == []  # two edits: a type of its own


def test_the_general_reader_notes_typos_and_keeps_the_events():
    reader = EventReader()
    reader.add({"event": "user", "txt": "hi"})
    reader.add({"event": "tool_exectued", "tool_name": "t", "source": "local"})
    reader.add({"event": "bot", "text": "ok", "data": {}})
    assert [event.type for event in reader.events] == ["user", "tool_exectued", "bot"]  # kept, as SPEC says
    assert reader.events[0].text == ""  # the misspelt field is not read: hence the warning
    assert [(w.index, w.name, w.hint) for w in reader.warnings] == [(0, "txt", "text"), (1, "tool_exectued", "tool_executed")]
