"""The fast tracker decoder must be invisible: same conversations and same errors as the general loader."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dialogcheck.errors import LoadError
from dialogcheck.events import load
from dialogcheck.events.fast import TrackerDecoder
from dialogcheck.events.model import Event, UserMessage
from dialogcheck.events.parse import conversation_from_dicts
from tests.property.test_properties import EVENT, JSON, NAMES, TEXT

#: The tracker form's other spellings, nulls the general loader tolerates, and values of the wrong type.
ODD_EVENT = st.one_of(
    st.fixed_dictionaries({"event": st.just("bot"), "text": TEXT, "metadata": st.fixed_dictionaries({"utter_action": NAMES | st.integers(-5, 5)})}),
    st.fixed_dictionaries({"event": st.just("bot"), "data": st.fixed_dictionaries({"buttons": st.lists(st.fixed_dictionaries({"title": NAMES | st.integers(-5, 5)}), max_size=2)})}),
    st.fixed_dictionaries({"event": st.just("user"), "text": st.none() | st.integers(-5, 5) | st.just("/restart")}),
    st.builds(
        lambda meta, args, err: {"event": "tool_executed", "tool_name": "t", "source": "local", "metadata": meta, "arguments": args, "is_error": err},
        st.fixed_dictionaries({"skill_id": NAMES | st.integers(-5, 5)}) | st.none(),
        st.none() | st.dictionaries(NAMES, JSON, max_size=1) | st.just([1]),
        st.none() | st.booleans() | st.just(1),
    ),
    st.fixed_dictionaries({"event": st.just("skill_activated")}, optional={"skill_id": NAMES | st.integers(-5, 5)}),
    st.fixed_dictionaries({"event": st.just("memory_set"), "key": NAMES}, optional={"value": JSON}),
    st.fixed_dictionaries({"event": st.sampled_from(["slot", "user_featurization"]), "timestamp": st.floats(0, 9) | st.booleans() | st.none()}),
    st.fixed_dictionaries({"event": NAMES, "index": st.integers(-5, 5), "turn": st.integers(-5, 5), "type": NAMES}),
    # Harmless extra fields, misspelt ones, and a misspelt type: the same events and the same warnings.
    st.fixed_dictionaries({"event": st.just("user"), "text": TEXT}, optional={"parse_data": JSON, "input_channel": NAMES, "txt": TEXT, "turn": JSON}),
    st.fixed_dictionaries({"event": st.just("tool_executed"), "tool_name": NAMES, "source": st.just("local")}, optional={"argumnets": JSON, "is_eror": JSON, "extra": JSON}),
    st.fixed_dictionaries({"event": st.sampled_from(["tool_exectued", "usr", "bot", "Bot"]), "text": TEXT}),
)
TRACKER = st.fixed_dictionaries(
    {"events": st.lists(EVENT | ODD_EVENT, max_size=12)}, optional={"sender_id": NAMES | st.integers(-5, 5), "conversation_id": NAMES}
)


def read(path, fast: bool):
    """Every conversation of `path` (or the load error), with the fast decoder on or off."""
    decoder, load._TRACKERS = load._TRACKERS, (TrackerDecoder() if fast else _Off())
    try:
        return [
            (c.source, c.conversation_id, c.events, list(c.raw_events), c.scenario, c.place, [str(w) for w in c.warnings])
            for c in load.iter_conversation_file(path)
        ]
    except LoadError as err:
        return str(err)
    finally:
        load._TRACKERS = decoder


class _Off:
    def decode(self, data):
        return None

    def learn(self, events, recorded):
        pass


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(TRACKER, min_size=2, max_size=4))
def test_the_fast_decoder_reads_every_file_as_the_general_loader_does(tmp_path, trackers):
    path = tmp_path / "batch.jsonl"
    path.write_bytes(b"".join(orjson.dumps(t) + b"\n" for t in trackers))
    assert read(path, fast=True) == read(path, fast=False)


def test_tracker_lines_are_decoded_fast_and_keep_what_was_recorded(tmp_path):
    line = {"sender_id": "c1", "events": [{"event": "user", "text": "hi"}, {"event": "bot", "text": None, "metadata": {"utter_action": "utter_hi"}, "data": {"buttons": [{"title": "Yes", "payload": "/yes"}]}}]}
    decoder = TrackerDecoder()
    decoded = decoder.decode(orjson.dumps(line))
    assert (decoded.conversation_id, decoded.scenario, decoded.warnings) == ("c1", None, None)
    user, bot = decoded.events
    assert (user.index, user.turn, user.text) == (0, 1, "hi")
    assert (bot.index, bot.turn, bot.text, bot.utter_name, bot.data) == (1, 1, "", "utter_hi", None)
    assert [(b.title, b.payload) for b in bot.buttons] == [("Yes", "/yes")]


def test_harmless_fields_are_learned_and_kept_in_what_was_recorded(tmp_path):
    line = {"sender_id": "c1", "events": [{"event": "user", "text": "hi", "intent": "greet"}]}
    decoder = TrackerDecoder()
    assert decoder.decode(orjson.dumps(line)) is None  # a field not met yet: the general loader reads it
    read = conversation_from_dicts(line["events"])
    decoder.learn(read.events, read.recorded)
    (user,) = decoder.decode(orjson.dumps(line)).events
    assert type(user) is UserMessage and user == read.events[0]  # the known type's own record, the field dropped
    assert decoder.decode(orjson.dumps({"events": [{"event": "user", "txt": "hi"}]})) is None  # a typo is never learned
    path = tmp_path / "two.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n" + orjson.dumps(line | {"sender_id": "c2"}) + b"\n")
    first, second = load.iter_conversation_file(path)
    assert isinstance(second.recorded, bytes)  # decoded fast
    assert second.raw_events == line["events"]  # the intent the typed event leaves out is still there
    assert (first.source, second.source) == (f"{path}#c1", f"{path}#c2")


def test_other_event_types_are_learned_and_stay_plain_events():
    line = orjson.dumps({"events": [{"event": "action", "name": "action_listen"}, {"event": "user", "text": "hi"}]})
    decoder = TrackerDecoder()
    assert decoder.decode(line) is None  # not met yet: the general loader reads it
    read = conversation_from_dicts(orjson.loads(line)["events"])
    decoder.learn(read.events, read.recorded)
    events = decoder.decode(line).events
    assert type(events[0]) is Event and (events[0].type, events[0].index, events[1].turn) == ("action", 0, 1)


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"event": "tool_executed", "tool_name": "t", "source": "cloud"}, "field `source` must be 'local' or 'mcp', got 'cloud'"),
        ({"event": "skill_activated"}, "field `skill_id` is missing"),
        ({"event": "bot", "metadata": {"utter_action": 3}}, "field `metadata.utter_action` must be a string, got a number"),
    ],
)
def test_a_bad_event_after_good_lines_is_reported_by_the_general_loader(tmp_path, bad, message):
    good = orjson.dumps({"events": [{"event": "user", "text": "hi"}]})
    path = tmp_path / "batch.jsonl"
    path.write_bytes(good + b"\n" + good + b"\n" + orjson.dumps({"events": [{"event": "user", "text": "x"}, bad]}) + b"\n")
    with pytest.raises(LoadError) as info:
        list(load.iter_conversation_file(path))
    assert str(info.value).startswith(f"{path}:3:") and f"event 1: {message}" in str(info.value)
