"""`openai` chat messages: calls paired with `tool` results by id, then by position; containers; positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogcheck.errors import LoadError
from dialogcheck.importers import import_file


def call(call_id: str | None, name: str, arguments: dict | str) -> dict:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def result(call_id: str | None, content) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


MESSAGES = [
    {"role": "system", "content": "You are a helpful travel agent."},
    {"role": "user", "content": "Weather in Paris and Rome, then book the warmer one."},
    {"role": "assistant", "content": "Checking both cities.", "tool_calls": [
        call("call_1", "get_weather", {"city": "Paris"}), call("call_1", "get_weather", {"city": "Rome"})]},
    result("call_1", '{"celsius": 18}'),
    result("call_1", '{"celsius": 24}'),
    {"role": "assistant", "content": None, "tool_calls": [call("call_1", "book", {"city": "Rome", "nights": 2})]},
    result("call_1", [{"type": "text", "text": "booked"}]),
    {"role": "assistant", "content": [{"type": "text", "text": "Rome it is: booked for 2 nights."}]},
    {"role": "user", "content": "Thanks! Also check Oslo."},
    {"role": "assistant", "content": None, "tool_calls": [call("call_9", "get_weather", {"city": "Oslo"})]},
]


def convert(tmp_path: Path, document, name="chat.json") -> list:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document, indent=2))
    return list(import_file(path, "openai"))


def test_repeated_ids_pair_by_position_and_text_beside_calls_is_said(tmp_path):
    (only,) = convert(tmp_path, MESSAGES)
    convo = only.conversation
    assert [e.type for e in convo.events] == ["user", "bot", "tool_executed", "tool_executed", "tool_executed", "bot", "user", "tool_executed"]
    paris, rome, book, oslo = convo.tool_runs
    assert (paris.arguments, paris.result) == ({"city": "Paris"}, '{"celsius": 18}')
    assert (rome.arguments, rome.result) == ({"city": "Rome"}, '{"celsius": 24}')
    assert book.arguments == {"city": "Rome", "nights": 2} and book.result == "booked"
    assert convo.bot_messages[0].text == "Checking both cities."
    assert convo.bot_messages[1].text == "Rome it is: booked for 2 nights."
    assert not any(run.is_error for run in convo.tool_runs)


def test_a_call_cut_off_before_its_result_says_so(tmp_path):
    (only,) = convert(tmp_path, MESSAGES)
    oslo = only.conversation.tool_runs[-1]
    assert oslo.result is None and oslo.metadata["result_missing"] is True
    assert "result_missing" not in only.conversation.tool_runs[0].metadata


def test_ids_pair_results_that_come_in_another_order(tmp_path):
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f", {"n": 1}), call("b", "f", {"n": 2})]},
        result("b", "two"),
        result("a", "one"),
    ]
    (only,) = convert(tmp_path, messages)
    assert [(r.arguments["n"], r.result) for r in only.conversation.tool_runs] == [(1, "one"), (2, "two")]


def test_jsonl_of_conversations_and_their_ids(tmp_path):
    lines = [
        json.dumps({"id": "conv-a", "messages": MESSAGES[:2]}),
        json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}),
    ]
    first, second = convert(tmp_path, "\n".join(lines) + "\n", "batch.jsonl")
    assert first.conversation_id == "conv-a" and second.conversation_id == "conversation-2"
    assert first.conversation.source.endswith("batch.jsonl#conv-a")
    assert first.tracker() == {"sender_id": "conv-a", "events": [{"event": "user", "text": MESSAGES[1]["content"]}]}


def test_jsonl_of_messages_is_one_conversation(tmp_path):
    text = "".join(json.dumps(m) + "\n" for m in MESSAGES[1:4])
    (only,) = convert(tmp_path, text, "messages.jsonl")
    assert [e.type for e in only.conversation.events] == ["user", "bot", "tool_executed", "tool_executed"]
    assert only.conversation.source == str(tmp_path / "messages.jsonl")


def test_legacy_function_call(tmp_path):
    messages = [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": None, "function_call": {"name": "calc", "arguments": '{"expr": "2+2"}'}},
        {"role": "function", "name": "calc", "content": "4"},
    ]
    (only,) = convert(tmp_path, messages)
    (run,) = only.conversation.tool_runs
    assert (run.tool_name, run.arguments, run.result) == ("calc", {"expr": "2+2"}, "4")


def test_arguments_must_be_an_object(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "assistant", "content": None, "tool_calls": [call("a", "f", "[1, 2]")]}], indent=2))
    with pytest.raises(LoadError) as info:
        list(import_file(path, "openai"))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if '"arguments"' in t)
    assert str(info.value) == f"{path}:{line}:24: `function.arguments` must be an object, got a list"


def test_an_unknown_role_is_reported_on_its_line(tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "a"}]}) + "\n" + json.dumps({"messages": [{"role": "bot", "content": "b"}]}) + "\n")
    with pytest.raises(LoadError) as info:
        list(import_file(path, "openai"))
    assert str(info.value) == f"{path}:2:24: unknown role 'bot': expected system, developer, user, assistant or tool"


@pytest.mark.parametrize("part, expected", [({"type": "text", "text": 5}, "got a number"), ({"type": "text", "text": ["hi"]}, "got a list")])
def test_a_text_part_whose_text_is_not_a_string_is_reported_at_its_text(tmp_path, part, expected):
    """Never turned into an empty text: said as `content: 5` is, at the value."""
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": [{"type": "text", "text": "a"}, part]}, {"role": "assistant", "content": "hello"}], indent=2))
    with pytest.raises(LoadError) as info:
        list(import_file(path, "openai"))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if '"text": 5' in t or '"text": [' in t)
    assert str(info.value) == f"{path}:{line}:17: `text` of content part 1 must be a string, {expected}"


def test_parts_without_text_are_no_text(tmp_path):
    """An image part, or a text part whose `text` is null, adds nothing to the message's text."""
    content = [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, {"type": "text", "text": None}, {"type": "text", "text": "hi"}]
    (imported,) = convert(tmp_path, [{"role": "user", "content": content}])
    assert [dict(e) for e in imported.events] == [{"event": "user", "text": "hi"}]
