"""Reading conversation files: every container of SPEC section 1, the event model, and load errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogcheck.errors import LoadError
from dialogcheck.events import (
    FRAMEWORK_TOOLS,
    BlockEvent,
    BotMessage,
    Button,
    Event,
    MemoryCleared,
    MemorySet,
    SkillEvent,
    ToolRun,
    UserMessage,
    bounds,
    iter_conversation_file,
    iter_conversations,
    load_conversation,
)
from tests.conftest import bot, ev, tool, user

EVENTS = [
    user("/session_start"),
    bot("Hi, how can I help?", utter="utter_greet"),
    user("My card is broken"),
    ev("skill_activated", skill_id="card_replace"),
    tool("lookup_card", {"customer_id": "c1"}),
]


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def jsonl(objects: list) -> str:
    return "".join(json.dumps(obj) + "\n" for obj in objects)


def load_error(path: Path) -> str:
    with pytest.raises(LoadError) as info:
        list(iter_conversation_file(path))
    return str(info.value)


def types(conversation) -> list[str]:
    return [e.type for e in conversation.events]


EXPECTED_TYPES = ["user", "bot", "user", "skill_activated", "tool_executed"]


# --- containers ------------------------------------------------------------


def test_jsonl_one_event_a_line(tmp_path):
    path = write(tmp_path, "c.jsonl", jsonl(EVENTS))
    conversation = load_conversation(path)
    assert types(conversation) == EXPECTED_TYPES
    assert conversation.source == str(path)
    assert conversation.conversation_id is None


def test_jsonl_blank_lines_are_skipped(tmp_path):
    path = write(tmp_path, "c.jsonl", "\n" + jsonl(EVENTS[:2]) + "\n   \n" + jsonl(EVENTS[2:]) + "\n")
    assert types(load_conversation(path)) == EXPECTED_TYPES


def test_json_list_of_events(tmp_path):
    path = write(tmp_path, "c.json", json.dumps(EVENTS, indent=2))
    conversation = load_conversation(path)
    assert types(conversation) == EXPECTED_TYPES
    assert conversation.conversation_id is None


def test_tracker_object_named_by_sender_id(tmp_path):
    path = write(tmp_path, "t.json", json.dumps({"sender_id": "sim-1", "slots": {}, "events": EVENTS}, indent=2))
    conversation = load_conversation(path)
    assert types(conversation) == EXPECTED_TYPES
    assert conversation.conversation_id == "sim-1"
    assert conversation.source == str(path)


def test_one_line_tracker_object_is_named_like_a_pretty_printed_one(tmp_path):
    path = write(tmp_path, "t.json", json.dumps({"sender_id": "sim-1", "events": EVENTS}) + "\n")
    conversation = load_conversation(path)
    assert (conversation.source, conversation.conversation_id, len(conversation)) == (str(path), "sim-1", 5)


def test_tracker_object_named_by_conversation_id(tmp_path):
    path = write(tmp_path, "t.json", json.dumps({"conversation_id": "conv-9", "events": EVENTS}, indent=2))
    assert load_conversation(path).conversation_id == "conv-9"


def test_tracker_object_without_a_name(tmp_path):
    path = write(tmp_path, "t.json", json.dumps({"events": EVENTS}, indent=2))
    assert load_conversation(path).conversation_id is None


def test_jsonl_of_tracker_objects_is_one_conversation_a_line(tmp_path):
    lines = [
        {"sender_id": "a", "events": EVENTS},
        {"conversation_id": "b", "events": EVENTS[:2]},
        {"events": EVENTS[:1]},
    ]
    path = write(tmp_path, "batch.jsonl", jsonl(lines))
    conversations = list(iter_conversation_file(path))
    assert [(c.source, c.conversation_id, len(c)) for c in conversations] == [
        (f"{path}#a", "a", 5),
        (f"{path}#b", "b", 2),
        (f"{path}#3", None, 1),  # no name: the line number tells them apart
    ]
    assert types(conversations[0]) == EXPECTED_TYPES


def test_lines_longer_than_the_read_buffer_are_read_whole(tmp_path):
    """A line past the buffer the file is read through is gathered whole, fast path or general."""
    long_text = "x" * (bounds.READ_BUFFER + 10)
    lines = [{"sender_id": "b", "events": [{"event": "user", "text": long_text}]}, {"sender_id": "c", "events": EVENTS}]
    path = write(tmp_path, "long.jsonl", jsonl(lines + lines))  # the first line goes the general way, the third the fast one
    conversations = list(iter_conversation_file(path))
    assert [(c.conversation_id, c.place[1]) for c in conversations] == [("b", 1), ("c", 2), ("b", 3), ("c", 4)]
    assert isinstance(conversations[2].recorded, bytes)  # decoded fast
    assert conversations[0].events[0].text == conversations[2].events[0].text == long_text


def test_load_conversation_refuses_a_batch_file(tmp_path):
    path = write(tmp_path, "batch.jsonl", jsonl([{"sender_id": "a", "events": EVENTS}, {"sender_id": "b", "events": EVENTS}]))
    with pytest.raises(LoadError) as info:
        load_conversation(path)
    assert str(info.value) == f"{path}:1:1: expected one conversation, found 2: use iter_conversations for batch files"


def test_in_memory_events():
    conversation = load_conversation(EVENTS)
    assert types(conversation) == EXPECTED_TYPES
    assert conversation.source == "<memory>"


def test_in_memory_events_with_a_bad_field():
    with pytest.raises(LoadError) as info:
        load_conversation([user("hi"), ev("skill_completed")])
    assert str(info.value) == "<memory>:1:1: event 1: field `skill_id` is missing"


# --- detection from content, not the extension ------------------------------


def test_json_file_holding_jsonl(tmp_path):
    path = write(tmp_path, "c.json", jsonl(EVENTS))
    assert types(load_conversation(path)) == EXPECTED_TYPES


def test_jsonl_file_holding_a_pretty_printed_tracker(tmp_path):
    path = write(tmp_path, "c.jsonl", json.dumps({"sender_id": "x", "events": EVENTS}, indent=4))
    conversation = load_conversation(path)
    assert types(conversation) == EXPECTED_TYPES
    assert conversation.conversation_id == "x"


def test_one_line_json_list(tmp_path):
    path = write(tmp_path, "c.jsonl", json.dumps(EVENTS) + "\n")
    conversations = list(iter_conversation_file(path))
    assert len(conversations) == 1
    assert types(conversations[0]) == EXPECTED_TYPES


def test_other_suffix_detected_from_content(tmp_path):
    path = write(tmp_path, "dump.txt", json.dumps({"sender_id": "x", "events": EVENTS}, indent=2))
    assert load_conversation(path).conversation_id == "x"


def test_folders_expand_to_conversation_files_sorted(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path, "b.jsonl", jsonl(EVENTS[:1]))
    write(tmp_path, "a.json", json.dumps(EVENTS[:2]))
    write(tmp_path / "sub", "c.ndjson", jsonl(EVENTS[:3]))
    write(tmp_path, "notes.md", "not a conversation")
    conversations = list(iter_conversations([tmp_path]))
    assert [(Path(c.source).name, len(c)) for c in conversations] == [("a.json", 2), ("b.jsonl", 1), ("c.ndjson", 3)]


# --- event fields: both spellings and defaults ------------------------------


def test_bot_tracker_form():
    event = load_conversation(
        [
            {
                "event": "bot",
                "text": "Order it?",
                "metadata": {"utter_action": "utter_confirm"},
                "data": {"buttons": [{"title": "Yes", "payload": "/affirm"}, {"title": "No"}]},
            }
        ]
    ).events[0]
    assert isinstance(event, BotMessage)
    assert (event.text, event.utter_name, event.buttons) == (
        "Order it?",
        "utter_confirm",
        (Button("Yes", "/affirm"), Button("No", None)),
    )


def test_bot_shorthand_form():
    event = load_conversation(
        [{"event": "bot", "text": "Order it?", "utter_name": "utter_confirm", "buttons": [{"title": "Yes", "payload": "/affirm"}]}]
    ).events[0]
    assert (event.utter_name, event.buttons) == ("utter_confirm", (Button("Yes", "/affirm"),))


def test_bot_defaults():
    event = load_conversation([{"event": "bot", "text": None, "buttons": [{"payload": "/stop"}]}]).events[0]
    assert event.text == ""  # text null: a message with only buttons
    assert event.utter_name is None
    assert event.buttons == (Button(None, "/stop"),)  # a button without a title has title null
    assert load_conversation([{"event": "bot"}]).events[0].buttons == ()


def test_tool_tracker_form_and_shorthand_skill_id():
    tracker, shorthand = load_conversation(
        [
            tool("order", {"a": 1}, metadata={"skill_id": "card_replace"}),
            tool("order", {"a": 1}, skill_id="card_replace"),
        ]
    ).events
    assert tracker.skill_id == shorthand.skill_id == "card_replace"


def test_tool_fields():
    event = load_conversation(
        [
            tool(
                "submit_transfer",
                {"amount": 50},
                source="mcp",
                mcp_server="banking",
                result={"ok": False},
                is_error=True,
                error_message="daily limit",
            )
        ]
    ).events[0]
    assert isinstance(event, ToolRun)
    assert (event.tool_name, dict(event.arguments), event.source, event.mcp_server) == ("submit_transfer", {"amount": 50}, "mcp", "banking")
    assert (event.result, event.is_error, event.error_message) == ({"ok": False}, True, "daily limit")


def test_tool_defaults():
    event = load_conversation([{"event": "tool_executed", "tool_name": "ping", "source": "local"}]).events[0]
    assert dict(event.arguments) == {}
    assert event.result is None
    assert event.mcp_server is None
    assert event.is_error is False
    assert event.error_message is None
    assert event.skill_id is None


def test_skill_and_block_events_default_step_id_to_none():
    skill, block, cancelled = load_conversation(
        [
            ev("skill_activated", skill_id="s"),
            ev("ordered_block_completed", skill_id="s", block_id="main"),
            ev("skill_cancelled", skill_id="s", step_id="confirm"),
        ]
    ).events
    assert isinstance(skill, SkillEvent) and skill.step_id is None
    assert isinstance(block, BlockEvent) and (block.skill_id, block.block_id, block.step_id) == ("s", "main", None)
    assert cancelled.step_id == "confirm"


def test_memory_events():
    written, cleared, null = load_conversation(
        [ev("memory_set", key="k", value={"x": [1, 2]}), ev("memory_cleared", key="k"), ev("memory_set", key="k", value=None)]
    ).events
    assert isinstance(written, MemorySet) and (written.key, written.value) == ("k", {"x": [1, 2]})
    assert isinstance(cleared, MemoryCleared) and cleared.key == "k"
    assert null.value is None


def test_unknown_event_types_are_kept():
    conversation = load_conversation([ev("action", name="action_listen"), user("hi"), ev("slot", name="x", value=1)])
    action, _, slot = conversation.events
    assert type(action) is Event and action.type == "action" and conversation.raw_events[0]["name"] == "action_listen"
    assert (slot.type, slot.index, slot.turn) == ("slot", 2, 1)
    assert [e.index for e in conversation.by_type["slot"]] == [2]


def test_timestamp_and_metadata_optional():
    first, second = load_conversation([user("hi"), user("again", timestamp=12.5, metadata={"k": "v"})]).events
    assert (first.timestamp, dict(first.metadata)) == (None, {})
    assert (second.timestamp, dict(second.metadata)) == (12.5, {"k": "v"})


# --- turns, framework tools, index ------------------------------------------


def test_turn_splitting():
    conversation = load_conversation(
        [
            ev("action", name="action_session_start"),
            user("/session_start"),
            bot("Hi"),
            user("   "),
            user("first question"),
            bot("answer"),
            user("/affirm"),
            user("\tsecond\n"),
            tool("lookup"),
            user("third"),
        ]
    )
    assert [e.turn for e in conversation.events] == [0, 0, 0, 0, 1, 1, 1, 2, 2, 3]
    assert [e.index for e in conversation.events] == list(range(10))
    assert conversation.turn_count == 4


def test_events_before_any_user_message_are_turn_zero():
    conversation = load_conversation([bot("Welcome"), tool("lookup")])
    assert [e.turn for e in conversation.events] == [0, 0]
    assert conversation.turn_count == 1


def test_user_opens_turn_property():
    hello, command, blank = load_conversation([user("hello"), user("/restart"), user(" ")]).events
    assert isinstance(hello, UserMessage)
    assert (hello.opens_turn, command.opens_turn, blank.opens_turn) == (True, False, False)


def test_framework_tools_are_the_spec_set():
    assert FRAMEWORK_TOOLS == {
        "activate",
        "complete",
        "cancel",
        "complete_skill",
        "cancel_skill",
        "set_fields",
        "correct",
        "resolve_tool_confirmation",
        "listen",
        "hangup",
    }


def test_framework_tools_recorded_but_not_counted():
    conversation = load_conversation([tool(name) for name in sorted(FRAMEWORK_TOOLS)] + [tool("search_knowledge"), tool("cannot_help"), tool("lookup")])
    assert len(conversation.tool_runs) == 13
    assert [run.tool_name for run in conversation.counted_tool_runs] == ["search_knowledge", "cannot_help", "lookup"]
    assert not any(run.counted for run in conversation.tool_runs if run.tool_name in FRAMEWORK_TOOLS)


def test_by_type_index():
    conversation = load_conversation(EVENTS + [bot("bye")])
    assert {kind: [e.index for e in events] for kind, events in conversation.by_type.items()} == {
        "user": [0, 2],
        "bot": [1, 5],
        "skill_activated": [3],
        "tool_executed": [4],
    }
    assert [e.index for e in conversation.of_type("bot", "user")] == [0, 1, 2, 5]
    assert conversation.of_type("memory_set") == ()
    assert [e.index for e in conversation.bot_messages] == [1, 5]


def test_event_order_is_file_order_not_timestamps(tmp_path):
    path = write(tmp_path, "c.jsonl", jsonl([user("late", timestamp=300.0), bot("early", timestamp=100.0), user("middle", timestamp=200.0)]))
    conversation = load_conversation(path)
    assert [e.text for e in conversation.events] == ["late", "early", "middle"]
    assert [e.index for e in conversation.events] == [0, 1, 2]


# --- load errors: the whole `path:line:col: message` ------------------------


def test_broken_jsonl_line(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "user", "text": "hi"}\n{"event": "bot" "text": "x"}\n')
    assert load_error(path) == f"{path}:2:17: invalid JSON: unexpected character, expected ',' or '}}'"


def test_truncated_jsonl_line_points_at_its_end(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "user", "text": "hi"}\n{"event": "bot", "text": "x",\n')
    assert load_error(path) == f"{path}:2:30: invalid JSON: unexpected end of data"


def test_broken_first_jsonl_line(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "user", "text": "hi"\n{"event": "bot", "text": "x"}\n')
    assert load_error(path) == f"{path}:1:31: invalid JSON: unexpected end of data"


def test_broken_pretty_printed_json(tmp_path):
    path = write(tmp_path, "c.json", '[\n  {"event": "user",\n   "text": "hi"\n  ,\n]\n')
    assert load_error(path) == f"{path}:5:1: invalid JSON: unexpected character, expected a string key"


def test_wrong_field_type_in_jsonl_points_at_the_field(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "user", "text": "hi"}\n{"event": "bot", "text": 5}\n')
    assert load_error(path) == f"{path}:2:18: event 1: field `text` must be a string or null, got a number"


def test_wrong_field_type_in_pretty_json_list_points_at_the_line(tmp_path):
    path = write(tmp_path, "c.json", json.dumps([user("hi"), ev("skill_activated", skill_id=7)], indent=2))
    # line 8 holds `"skill_id": 7`: [, {, "event", "text", }, {, "event", "skill_id"
    assert load_error(path) == f"{path}:8:5: event 1: field `skill_id` must be a string, got a number"


def test_wrong_field_type_in_tracker_object(tmp_path):
    path = write(tmp_path, "t.json", json.dumps({"sender_id": "a", "events": [user("hi"), tool("x", is_error="no")]}, indent=2))
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if '"is_error"' in text)
    assert load_error(path) == f"{path}:{line}:7: event 1: field `is_error` must be a boolean, got a string"


def test_wrong_field_type_in_a_batch_line(tmp_path):
    good = {"sender_id": "a", "events": [user("hi")]}
    path = write(tmp_path, "b.jsonl", jsonl([good]) + '{"sender_id": "b", "events": [{"event": "user", "text": 1}]}\n')
    assert load_error(path) == f"{path}:2:49: event 0: field `text` must be a string or null, got a number"


def test_every_bad_line_of_a_file_is_reported(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "bot", "text": 5}\n{"event": "user", "text": "ok"}\n{"text": "hi"}\n')
    assert load_error(path) == (
        f"{path}:1:18: event 0: field `text` must be a string or null, got a number\n"
        f"{path}:3:1: event 2: field `event` is missing: every event names its type"
    )


def test_missing_event_field(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "user", "text": "hi"}\n{"text": "hi"}\n')
    assert load_error(path) == f"{path}:2:1: event 1: field `event` is missing: every event names its type"


def test_source_must_be_local_or_mcp(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "tool_executed", "tool_name": "x", "source": "remote"}\n')
    assert load_error(path) == f"{path}:1:46: event 0: field `source` must be 'local' or 'mcp', got 'remote'"


def test_missing_source(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "tool_executed", "tool_name": "x"}\n')
    assert load_error(path) == f"{path}:1:1: event 0: field `source` is missing"


def test_arguments_must_be_an_object(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "tool_executed", "tool_name": "x", "source": "local", "arguments": [1]}\n')
    assert load_error(path) == f"{path}:1:65: event 0: field `arguments` must be an object, got a list"


def test_button_title_of_wrong_type(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "bot", "text": "?", "data": {"buttons": [{"title": 3}]}}\n')
    assert load_error(path) == f"{path}:1:53: event 0: field `data.buttons[0].title` must be a string, got a number"


def test_invalid_utf8_in_jsonl(tmp_path):
    path = write(tmp_path, "c.jsonl", b'{"event": "user", "text": "hi"}\n{"event": "user", "text": "h\xffi"}\n')
    assert load_error(path) == f"{path}:2:29: invalid UTF-8 byte 0xff: expected UTF-8 text"


def test_invalid_utf8_in_json_document(tmp_path):
    path = write(tmp_path, "c.json", b'[\n  {"event": "user",\n   "text": "h\xc3i"}\n]\n')
    assert load_error(path) == f"{path}:3:14: invalid UTF-8 byte 0xc3: expected UTF-8 text"


def test_columns_count_characters_not_bytes(tmp_path):
    path = write(tmp_path, "c.jsonl", '{"event": "bot", "text": "éé" "x": 1}\n')
    assert load_error(path) == f"{path}:1:31: invalid JSON: unexpected character, expected ',' or '}}'"


@pytest.mark.parametrize("content", ["", "\n  \n\n"])
def test_empty_file(tmp_path, content):
    path = write(tmp_path, "c.jsonl", content)
    assert load_error(path) == f"{path}:1:1: the file holds no events: expected JSON or JSONL event objects"


def test_mixed_containers_events_then_tracker(tmp_path):
    path = write(tmp_path, "c.jsonl", jsonl([user("hi"), {"sender_id": "a", "events": []}]))
    assert load_error(path) == f"{path}:2:1: this line mixes containers: expected one event object as on the first line"


def test_mixed_containers_tracker_then_event(tmp_path):
    path = write(tmp_path, "c.jsonl", jsonl([{"sender_id": "a", "events": [user("hi")]}, user("hi")]))
    assert load_error(path) == (
        f"{path}:2:1: this line mixes containers: expected a conversation object with `events` as on the first line"
    )


def test_a_tracker_without_events_cannot_be_judged(tmp_path):
    path = write(tmp_path, "t.json", '{"sender_id": "unknown",\n "events": []}')
    assert load_error(path) == (
        f"{path}:2:2: `events` is empty: a conversation without events cannot be judged (expected at least one event object)"
    )
    path = write(tmp_path, "l.json", " [ ]\n")
    assert load_error(path) == f"{path}:1:1: the file holds no events: expected JSON or JSONL event objects"


@pytest.mark.parametrize("empty_line", [1, 2, 3])
def test_a_batch_line_without_events_is_named_by_its_line(tmp_path, empty_line):
    """The first line is read the general way, the later ones by the fast decoder: both refuse it."""
    lines = [{"sender_id": f"c{i}", "events": EVENTS} for i in range(3)]
    lines[empty_line - 1] = {"sender_id": "gone", "events": []}
    path = write(tmp_path, "batch.jsonl", jsonl(lines))
    message = load_error(path)
    assert message.startswith(f"{path}:{empty_line}:23: `events` is empty: ") and message.count("\n") == 0


def test_tracker_events_must_be_a_list(tmp_path):
    path = write(tmp_path, "t.json", '{"sender_id": "a",\n "events": {"x": 1}}')
    assert load_error(path) == f"{path}:2:2: `events` must be a list of event objects, got an object"


def test_list_items_must_be_objects(tmp_path):
    path = write(tmp_path, "c.json", '[\n  1,\n  "two"\n]')
    assert load_error(path) == (
        f"{path}:2:3: event 0: an event must be a JSON object, got a number\n"
        f"{path}:3:3: event 1: an event must be a JSON object, got a string"
    )


def test_file_that_does_not_exist(tmp_path):
    path = tmp_path / "missing.jsonl"
    assert load_error(path) == f"{path}:1:1: cannot read file: No such file or directory"
    with pytest.raises(LoadError) as info:
        list(iter_conversations([path]))
    assert str(info.value) == f"{path}:1:1: no such file or folder"
