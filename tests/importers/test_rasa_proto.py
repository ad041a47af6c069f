"""`rasa-proto` (Mantle ProtoJSON): one payload key per event, `*_json` strings parsed once, `sequence` order."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from dialogcheck.errors import LoadError
from dialogcheck.events.model import BlockEvent, MemorySet, SkillEvent
from dialogcheck.importers import import_file


def envelope(cid: str, seq, payload_key: str, payload: dict, **extra) -> dict:
    return {
        "conversation_id": cid,
        "timestamp": "2025-03-01T09:00:00.500Z",
        "event_id": f"{cid}-{seq}",
        "sequence": seq,
        "user_id": "user-7",
        "deployment_environment": "production",
        "session_id": f"{cid}-s1",
        payload_key: payload,
        **extra,
    }


STREAM = [
    envelope("c1", "0", "user", {"text": "/session_start"}),
    envelope("c1", "2", "memory_set", {"key": "amount", "value_json": "42"}),
    envelope("c2", 0, "user", {"text": "hello"}),
    envelope("c1", "1", "skill_activated", {"skill_id": "transfer"}),
    envelope("c1", "3", "tool_executed", {
        "tool_name": "check_limit", "source": "local", "skill_id": "transfer",
        "arguments_json": '{"account": 7, "amount": 42, "rate": 0.5}', "result_json": '{"allowed": true, "left": 958}'}),
    envelope("c1", "3", "tool_executed", {"tool_name": "check_limit", "source": "local", "arguments_json": "{}"}),  # redelivered: same event_id
    {"sender_id": "c1", "event": "bot", "text": "legacy row", "timestamp": 1740819600.0},  # an older flat row
    envelope("c1", "5", "bot", {"text": "How much?", "utter_action": "utter_ask_amount", "buttons": [{"title": "10", "payload": "/amount{\"v\": 10}"}]}, metadata={"model": "m1"}),
    envelope("c1", "6", "skill_cancelled", {"skill_id": "transfer", "step_id": ""}),
    envelope("c1", "7", "ordered_block_entered", {"skill_id": "transfer", "block_id": "confirm"}),
    envelope("c2", 1, "bot", {"text": "hi there"}),
]


def write_jsonl(tmp_path: Path, rows: list, name: str = "stream.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_interleaved_stream_grouped_and_ordered_by_sequence(tmp_path):
    first, second = import_file(write_jsonl(tmp_path, STREAM), "rasa-proto")
    assert (first.conversation_id, second.conversation_id) == ("c1", "c2")
    c1 = first.conversation
    assert [e.type for e in c1.events] == [
        "user", "skill_activated", "memory_set", "tool_executed", "bot", "bot", "skill_cancelled", "ordered_block_entered"]
    assert c1.events[4].text == "legacy row"  # unsequenced: stays after the event before it in the file
    assert [e.type for e in second.conversation.events] == ["user", "bot"]


def test_json_strings_are_parsed_once_so_numbers_stay_numbers(tmp_path):
    first, _ = import_file(write_jsonl(tmp_path, STREAM), "rasa-proto")
    memory = first.conversation.of_type("memory_set")[0]
    assert isinstance(memory, MemorySet) and memory.value == 42 and type(memory.value) is int
    (run,) = first.conversation.tool_runs  # the redelivered copy is read once
    assert run.arguments == {"account": 7, "amount": 42, "rate": 0.5}
    assert type(run.arguments["amount"]) is int and type(run.arguments["rate"]) is float
    assert run.result == {"allowed": True, "left": 958} and run.skill_id == "transfer"


def test_envelope_and_payload_fields_land_where_the_native_form_has_them(tmp_path):
    first, _ = import_file(write_jsonl(tmp_path, STREAM), "rasa-proto")
    c1 = first.conversation
    bot = c1.bot_messages[1]
    assert (bot.text, bot.utter_name, bot.buttons[0].title) == ("How much?", "utter_ask_amount", "10")
    assert bot.metadata == {"model": "m1"}
    assert bot.timestamp == 1740819600.5
    assert first.events[0]["sequence"] == 0 and first.events[0]["event_id"] == "c1-0"
    cancelled = c1.of_type("skill_cancelled")[0]
    assert isinstance(cancelled, SkillEvent) and cancelled.step_id is None  # proto3's "" is unset
    assert isinstance(c1.of_type("ordered_block_entered")[0], BlockEvent)


def test_a_tracker_object_of_nested_events(tmp_path):
    path = tmp_path / "tracker.json"
    events = [e for e in STREAM if e.get("conversation_id") == "c2"][::-1]
    path.write_text(json.dumps({"conversation_id": "c2", "events": events}, indent=2))
    (only,) = import_file(path, "rasa-proto")
    assert only.conversation.source == str(path)
    assert [e.type for e in only.conversation.events] == ["user", "bot"]


def test_more_than_one_payload_key_is_bad_input(tmp_path):
    rows = [envelope("c1", 0, "user", {"text": "hi"}), envelope("c1", 1, "user", {"text": "a"}, bot={"text": "b"})]
    path = write_jsonl(tmp_path, rows)
    with pytest.raises(LoadError) as info:
        list(import_file(path, "rasa-proto"))
    assert str(info.value) == f"{path}:2:1: an event has exactly one payload key (user, bot, tool_executed, ...), found `user`, `bot`"


def test_bad_arguments_json_points_at_the_string(tmp_path):
    rows = [envelope("c1", 0, "tool_executed", {"tool_name": "t", "source": "local", "arguments_json": "{nope"})]
    path = write_jsonl(tmp_path, rows)
    with pytest.raises(LoadError) as info:
        list(import_file(path, "rasa-proto"))
    column = path.read_text().index('"{nope"') + 1
    assert str(info.value).startswith(f"{path}:1:{column}: `tool_executed.arguments_json` is not valid JSON")


def test_a_field_the_native_reader_refuses_points_at_the_source_event(tmp_path):
    rows = [envelope("c1", 0, "user", {"text": "hi"}), envelope("c1", 1, "tool_executed", {"tool_name": "t", "source": "remote"})]
    path = write_jsonl(tmp_path, rows)
    with pytest.raises(LoadError) as info:
        list(import_file(path, "rasa-proto"))
    assert str(info.value) == f"{path}:2:1: converted event 1 (tool_executed): field `source` must be 'local' or 'mcp', got 'remote'"


def _peak_memory(path: Path, fmt: str) -> tuple[int, int]:
    tracemalloc.start()
    try:
        count = sum(1 for _ in import_file(path, fmt))
        return count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_batch_of_trackers_streams_one_line_at_a_time(tmp_path):
    """Peak memory stays that of a conversation or two, however many the file holds."""
    line = {"conversation_id": "c", "events": [envelope("c", i, "user", {"text": "x" * 400}) for i in range(20)]}
    peaks = []
    for count in (40, 200):
        path = tmp_path / f"batch{count}.jsonl"
        path.write_text("".join(json.dumps({**line, "conversation_id": f"c{n}"}) + "\n" for n in range(count)))
        read, peak = _peak_memory(path, "rasa-proto")
        assert read == count
        peaks.append(peak)
    assert peaks[1] < peaks[0] * 1.5, peaks


def test_problems_of_every_conversation_in_a_stream_are_reported_together(tmp_path):
    rows = [
        envelope("c1", 0, "user", {"text": "hi"}),
        envelope("c2", 0, "memory_set", {"key": "k", "value_json": "{bad"}),
        envelope("c1", 1, "tool_executed", {"tool_name": "t", "source": "local", "arguments_json": "[1]"}),
    ]
    path = write_jsonl(tmp_path, rows)
    with pytest.raises(LoadError) as info:
        list(import_file(path, "rasa-proto"))
    assert [(p.line, p.message.split(":")[0]) for p in info.value.problems] == [
        (3, "`tool_executed.arguments_json` must be an object, got a list"),
        (2, "`memory_set.value_json` is not valid JSON"),
    ]
