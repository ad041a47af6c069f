"""A detail comparing two lists or objects names the first path at which they differ, and the values there.

Two long values cut at the same place showed the same visible halves (tau-bench task 3's `flights`).
"""

import orjson
import pytest

from dialogcheck.checks.compared import was
from dialogcheck.events.values import ABSENT, first_difference
from dialogcheck.results.codec import conversation_document, decode_conversation
from tests.conftest import check_from_yaml, conv, ev, tool

FLIGHTS = [{"date": "2024-05-27", "flight_number": n} for n in ("HAT078", "HAT118", "HAT290", "HAT175")]
FLOWN = [{"date": "2024-05-27", "flight_number": n} for n in ("HAT078", "HAT118", "HAT229", "HAT266")]


@pytest.mark.parametrize(
    "actual, expected, found",
    [
        (FLOWN, FLIGHTS, ("[2].flight_number", "HAT229", "HAT290")),
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 3]}}, (".a.b[1]", 2, 3)),
        ({"a": 1}, {"a": 1, "b": 2}, (".b", ABSENT, 2)),
        ({"a": 1, "z": 0}, {"a": 1}, (".z", 0, ABSENT)),
        ([1, 2, 3], [1, 2], ("[2]", 3, ABSENT)),
        ([1], [1, {"x": 1}], ("[1]", ABSENT, {"x": 1})),
        ({"a key": True}, {"a key": 1}, ("['a key']", True, 1)),
        ([1], {"0": 1}, ("", [1], {"0": 1})),
        ("a", "b", ("", "a", "b")),
        ({"a": [1, 2.0]}, {"a": [1, 2]}, None),
    ],
)
def test_first_difference_names_the_path_and_the_two_values(actual, expected, found):
    assert first_difference(actual, expected) == found


@pytest.mark.parametrize(
    "actual, expected, detail",
    [
        (FLOWN, FLIGHTS, "arguments.flights[2].flight_number was 'HAT229', expected 'HAT290'"),
        ({"a": 1}, {"a": 1, "b": 2}, "arguments.flights.b was missing, expected 2"),
        ({"a": 1, "z": 0}, {"a": 1}, "arguments.flights.z was 0, expected no such key"),
        ([1, 2, 3], [1, 2], "arguments.flights[2] was 3, expected only 2 items"),
        ([7], [], "arguments.flights[0] was 7, expected an empty list"),
        ("x", [1], "arguments.flights was 'x', expected [1]"),
    ],
)
def test_was_names_the_first_differing_path(actual, expected, detail):
    assert was("arguments.flights", actual, expected) == detail


BOOK = """
tool_executed:
  tool_name: update_reservation_flights
  source: local
  arguments:
    payment_id: gift_card_6276644
    flights: %s
""" % orjson.dumps(FLIGHTS).decode()


def test_tool_executed_names_the_first_differing_path_and_keeps_both_values_whole_in_json():
    check = check_from_yaml(BOOK)
    result = check.evaluate(conv(tool("update_reservation_flights", {"flights": FLOWN, "payment_id": "gift_card_6276644"})))
    assert not result.passed
    assert result.detail.endswith("but arguments.flights[2].flight_number was 'HAT229', expected 'HAT290'")
    assert "…" not in result.detail
    [difference] = result.differences
    assert (difference.field, difference.path) == ("arguments.flights", "arguments.flights[2].flight_number")
    assert (difference.actual, difference.expected) == (FLOWN, FLIGHTS)


def test_a_missing_argument_is_left_out_of_the_differences_json_and_read_back():
    from dialogcheck.results.model import ConversationResult

    check = check_from_yaml(BOOK)
    result = check.evaluate(conv(tool("update_reservation_flights", {"flights": FLOWN})))
    document = conversation_document(ConversationResult("runs.jsonl#1", "s", (result,)), with_source=True)
    assert document["assertions"][0]["differences"] == [
        {"field": "arguments.payment_id", "path": "arguments.payment_id", "expected": "gift_card_6276644"},
        {"field": "arguments.flights", "path": "arguments.flights[2].flight_number", "actual": FLOWN, "expected": FLIGHTS},
    ]
    document["verdict"] = "fail"
    again = decode_conversation(orjson.loads(orjson.dumps(document)), "results.jsonl")
    assert again.assertions[0].differences == result.differences


def test_times_keeps_the_differences_of_its_closest_miss():
    check = check_from_yaml(BOOK.replace("  source: local", "  source: local\n  times: 1"))
    result = check.evaluate(conv(tool("update_reservation_flights", {"flights": FLOWN, "payment_id": "gift_card_6276644"})))
    assert "arguments.flights[2].flight_number was 'HAT229', expected 'HAT290'" in result.detail
    assert [d.path for d in result.differences] == ["arguments.flights[2].flight_number"]


def test_memory_was_set_names_where_the_last_write_first_differs():
    check = check_from_yaml("memory_was_set: [{name: user, value: {address: {city: Lyon, zip: '69001'}}}]")
    written = ev("memory_set", key="user", value={"address": {"city": "Paris", "zip": "69001"}})
    result = check.evaluate(conv(written))
    assert not result.passed
    assert result.detail.endswith("; in the last write, user.address.city was 'Paris', expected 'Lyon'")
