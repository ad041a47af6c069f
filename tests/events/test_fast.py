"""The fast tracker decoder must be invisible: same conversations and same errors as the general loader."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dialogcheck.errors import LoadError
from dialogcheck.events import load
from dialogcheck.events.fast import TrackerDecoder
from dialogcheck.events.model import Event, UserMessage
from dialogcheck.events.parse import conversation_from_dicts
from dialogcheck.events.typos import KNOWN_FIELDS
from tests import inprocess
from tests.conftest import suppressed
from tests.property.test_properties import EVENT, JSON, NAMES, TEXT

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

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


#: Names a hostile or sloppy log may use: every field any type reads, the names the reader fills in (as
#: themselves and as the classes' JSON form spells them), typos, harmless extras and tracker-level keys.
HOSTILE_KEYS = st.sampled_from(
    sorted({name for fields in KNOWN_FIELDS.values() for name in fields})
    + ["(dialogcheck type)", "(dialogcheck index)", "(dialogcheck turn)", "type", "index", "turn"]
    + ["txt", "tool_nmae", "argumnets", "parse_data", "intent", "utter_action", "skill", "events", "sender_id"]
)
KINDS = st.sampled_from([*KNOWN_FIELDS, "action", "slot", "tool_exectued", "usr", "Bot", ""])
#: Number tokens that orjson and msgspec may read differently: past 64 bits, at the edges of i64 and u64, huge exponents.
NUMBER_TOKENS = st.sampled_from(
    ["18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
     "1234567890123456789", "123456789012345678901234567890", "-0", "1E2", "1e400", "1e-400", "0.1e1", "-1.5e308"]
)
#: String tokens as JSON text: plain text, escapes, a lone surrogate (orjson refuses it), a surrogate pair.
STRING_TOKENS = TEXT.map(json.dumps) | KINDS.map(json.dumps) | st.sampled_from(['"\\ud800"', '"\\ud83d\\ude00"', '"\\u0000"', '"a: 12345678901234567890123"'])


def _text(tree) -> str:
    """JSON text of a tree whose objects are lists of pairs (so a key can repeat) and whose leaves are tokens."""
    kind, content = tree
    if kind == "token":
        return content
    if kind == "list":
        return "[" + ",".join(_text(item) for item in content) + "]"
    return "{" + ",".join(f"{json.dumps(key)}:{_text(value)}" for key, value in content) + "}"


LEAF = st.one_of(
    st.sampled_from(["null", "true", "false", "[]", "{}"]),
    st.integers(-(10**25), 10**25).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    NUMBER_TOKENS,
    STRING_TOKENS,
).map(lambda token: ("token", token))
VALUE = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=3).map(lambda items: ("list", items))
    | st.lists(st.tuples(HOSTILE_KEYS, inner), max_size=3).map(lambda pairs: ("object", pairs)),
    max_leaves=6,
)
#: A valid event (as the loader's own tests write them) with hostile pairs added after it, so that most
#: events are readable and the fast path has something to read.
HOSTILE_EVENT = st.builds(
    lambda event, extra: ("object", [(key, ("token", orjson.dumps(value).decode())) for key, value in event.items()] + extra),
    EVENT | ODD_EVENT,
    st.lists(st.tuples(HOSTILE_KEYS, VALUE) | st.tuples(st.just("event"), KINDS.map(lambda k: ("token", json.dumps(k)))), max_size=2),
)
HOSTILE_TRACKER = st.builds(
    lambda events, extra: ("object", [("events", ("list", events)), *extra]),
    st.lists(HOSTILE_EVENT, max_size=6),
    st.lists(st.tuples(st.sampled_from(["sender_id", "conversation_id", "scenario", "events", "(dialogcheck type)"]), VALUE), max_size=2),
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


@settings(max_examples=200, suppress_health_check=suppressed(HealthCheck.function_scoped_fixture))
@given(st.lists(TRACKER, min_size=2, max_size=4))
def test_the_fast_decoder_reads_every_file_as_the_general_loader_does(tmp_path, trackers):
    path = tmp_path / "batch.jsonl"
    path.write_bytes(b"".join(orjson.dumps(t) + b"\n" for t in trackers))
    assert read(path, fast=True) == read(path, fast=False)


@settings(max_examples=300, suppress_health_check=suppressed(HealthCheck.function_scoped_fixture))
@given(st.lists(HOSTILE_TRACKER, min_size=1, max_size=3))
def test_the_fast_decoder_reads_hostile_json_text_as_the_general_loader_does(tmp_path, trackers):
    """Lines written as text (a key may repeat, a number may not fit 64 bits, a key may be spelt like a
    name the reader fills in): read twice, so the second time the decoder has learned from the first."""
    lines = [_text(tracker) for tracker in trackers]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines + lines) + "\n", encoding="utf-8", errors="surrogatepass")
    assert read(path, fast=True) == read(path, fast=False)


@pytest.mark.parametrize(
    "event",
    [
        {"event": "user", "text": "hi", "(dialogcheck type)": "bot"},
        {"event": "action", "name": "x", "(dialogcheck type)": "tool_executed"},
        {"event": "memory_set", "key": "k", "value": 123456789012345678901234567890},
        {"event": "tool_executed", "tool_name": "t", "source": "local", "arguments": {"id": -9223372036854775809}},
    ],
    ids=["forged-type", "forged-type-of-another-type", "integer-past-64-bits", "integer-below-i64"],
)
def test_a_line_the_decoder_would_read_otherwise_goes_the_general_way(tmp_path, event):
    """The decoder defers to the general loader where msgspec reads the text differently from orjson."""
    line = orjson.dumps({"events": [{"event": "user", "text": "x"}]}) + b"\n" + json.dumps({"events": [event]}).encode()
    path = tmp_path / "forged.jsonl"
    path.write_bytes(line + b"\n" + line + b"\n")
    fast, general = read(path, fast=True), read(path, fast=False)
    assert fast == general
    (read_event,) = general[1][2]
    assert read_event.type == event["event"]  # the key spelt like the type field is not read


@pytest.mark.parametrize("number", ["1e400", "-1.8E+308", "2e0309", "[ 7.5e999]", "[1, 25.5e+0400]"])
def test_a_number_past_a_double_is_bad_input_on_either_path(tmp_path, number):
    """orjson refuses it; msgspec skips it unread in a key the decoder ignores, so the decoder defers to the loader."""
    line = f'{{"events": [{{"event": "user", "text": "x"}}], "extra": {number}}}'.encode()
    assert TrackerDecoder().decode(line) is None
    path = tmp_path / "big.jsonl"
    path.write_bytes(line + b"\n")
    fast, general = read(path, fast=True), read(path, fast=False)  # each the load error's message
    assert fast == general and "big.jsonl:1:" in fast and "invalid JSON: number is infinity" in fast


@pytest.mark.parametrize("text", ["abc1e400", "1e400", "version 2e+500", "1e40", "+4001", ": E+400", "error E1234"])
def test_exponent_like_text_in_a_string_or_a_small_exponent_stays_on_the_fast_path(text):
    line = orjson.dumps({"events": [{"event": "user", "text": text}], "n": 1e40})
    assert TrackerDecoder().decode(line) is not None


def test_tracker_lines_are_decoded_fast_and_keep_what_was_recorded(tmp_path):
    bot = {"event": "bot", "text": None, "metadata": {"utter_action": "utter_hi"}, "data": {"buttons": [{"title": "Yes", "payload": "/yes"}]}}
    line = {"sender_id": "c1", "events": [{"event": "user", "text": "hi"}, bot]}
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


def test_check_judges_a_line_with_a_forged_type_key_as_the_general_loader_reads_it(tmp_path):
    """End to end: the second line (read by the fast decoder) names its user message `bot` under the key the type
    field goes by. Read as a bot message, `bot_uttered` crashed on it (a user message has no `utter_name`) and the
    conversation came out errored; it is a user message, so the check fails on the real bot message."""
    lines = [
        {"sender_id": "a", "events": [{"event": "user", "text": "hi"}, {"event": "bot", "text": "hello", "metadata": {"utter_action": "utter_greet"}}]},
        {"sender_id": "b", "events": [{"event": "user", "text": "hi", "(dialogcheck type)": "bot"}, {"event": "bot", "text": "hello"}]},
    ]
    (tmp_path / "forged.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    (tmp_path / "greets.yml").write_text(
        "scenario:\n  name: greets\n  simulation_context: x\n  goals:\n    assertions:\n      - bot_uttered: {utter_name: utter_greet}\n"
    )
    done = inprocess.run([DIALOGCHECK, "check", "--no-judge", "--format", "json", "--scenario", "greets.yml", "forged.jsonl"], cwd=tmp_path, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    first, second = json.loads(done.stdout)["conversations"]
    assert (first["verdict"], second["verdict"]) == ("pass", "fail")
    assert second["assertions"][0]["detail"].endswith("but utter_name was null, expected 'utter_greet'")
