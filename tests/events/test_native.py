"""The one encoder: typed events back to native objects that read back as the same events."""

from __future__ import annotations

import orjson
from hypothesis import given, settings, strategies as st

from dialogcheck.events.model import BotMessage, Button, Conversation, MemorySet, ToolRun, UserMessage, native_object
from dialogcheck.events.native import conversation_lines, event_lines
from dialogcheck.events.parse import conversation_from_dicts
from tests.events.test_fast import ODD_EVENT
from tests.property.test_properties import EVENT


@settings(max_examples=300)
@given(st.lists(EVENT | ODD_EVENT, max_size=12))
def test_every_event_read_writes_back_as_an_object_that_reads_as_the_same_event(objects):
    try:
        read = conversation_from_dicts(objects)
    except ValueError:
        return  # ODD_EVENT holds invalid ones too; those never become events
    lines = event_lines(native_object(event) for event in read.events)
    assert conversation_from_dicts(orjson.loads(line) for line in lines.splitlines()).events == read.events


def test_messages_made_in_code_are_written_in_the_tracker_form():
    bot = BotMessage(text="Replace it?", utter_name="utter_ask", buttons=(Button("Yes", "/yes"), Button(None)), metadata={"utter_action": "utter_ask"}, timestamp=1.5)
    user = UserMessage(text="hi", timestamp=2)
    assert event_lines([native_object(bot), native_object(user)]) == (
        b'{"event":"bot","timestamp":1.5,"text":"Replace it?","metadata":{"utter_action":"utter_ask"},'
        b'"data":{"buttons":[{"title":"Yes","payload":"/yes"},{"title":null,"payload":null}]}}\n'
        b'{"event":"user","timestamp":2,"text":"hi"}\n'
    )


def test_defaults_are_left_out_and_a_spelling_the_metadata_does_not_hold_is_written_as_the_shorthand():
    tool = ToolRun(tool_name="t", source="local", skill_id="s")
    assert native_object(tool) == {"event": "tool_executed", "tool_name": "t", "source": "local", "skill_id": "s"}
    assert native_object(BotMessage(text="", utter_name="u")) == {"event": "bot", "text": "", "utter_name": "u"}
    assert native_object(MemorySet(key="k", value=None)) == {"event": "memory_set", "key": "k", "value": None}


def test_a_conversation_is_written_as_recorded_and_one_made_in_code_in_its_native_form():
    recorded = [{"event": "user", "text": "hi", "parse_data": {"intent": "greet"}}, {"event": "action", "name": "x"}]
    assert conversation_lines(conversation_from_dicts(recorded)) == b"".join(orjson.dumps(o) + b"\n" for o in recorded)
    made = Conversation((UserMessage(text="hi"), MemorySet(key="k", value=[1])))
    assert conversation_lines(made) == b'{"event":"user","text":"hi"}\n{"event":"memory_set","key":"k","value":[1]}\n'
