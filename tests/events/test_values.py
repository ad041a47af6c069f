"""JSON-typed equality (SPEC section 1) and the short value renderings explanations use."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dialogcheck.events.values import is_number, json_equal, show


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("x", "x"),
        (True, True),
        (False, False),
        (5, 5),
        (5, 5.0),
        (0, -0.0),
        (None, None),
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2.0], "a": 1}),
        ([1, [2, [3]]], [1, [2, [3]]]),
        ([True, None, "x"], [True, None, "x"]),
        ({}, {}),
        ([], []),
        ({"n": {"deep": [{"k": 1}]}}, {"n": {"deep": [{"k": 1.0}]}}),
        ([1, 2], (1, 2)),  # a tuple is a JSON list as far as values go
    ],
)
def test_equal(a, b):
    assert json_equal(a, b)
    assert json_equal(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (True, 1),
        (False, 0),
        (1.0, True),
        (5, "5"),
        ("5", 5.0),
        ("true", True),
        (None, 0),
        (None, ""),
        (None, False),
        (None, []),
        (None, {}),
        ("", []),
        ({"a": 1}, {"a": 1, "b": 2}),
        ({"a": 1}, {"b": 1}),
        ({"a": True}, {"a": 1}),
        ([1, 2], [2, 1]),
        ([1, 2], [1, 2, 3]),
        ([[1, 2]], [[2, 1]]),
        ([True], [1]),
        ([1, [0]], [1, [False]]),
        ([{"a": None}], [{"a": 0}]),
        ({"a": 1}, [["a", 1]]),
        (5, 5.5),
    ],
)
def test_not_equal(a, b):
    assert not json_equal(a, b)
    assert not json_equal(b, a)


def test_booleans_are_not_numbers():
    assert is_number(3) and is_number(2.5)
    assert not is_number(True)
    assert not is_number("3")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("standard", "'standard'"),
        ("5", "'5'"),
        (5, "5"),
        (5.5, "5.5"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ({"b": 1, "a": [True, None]}, '{"a":[true,null],"b":1}'),
        ([1, "x"], '[1,"x"]'),
    ],
)
def test_show(value, shown):
    assert show(value) == shown


def test_show_tells_a_string_from_a_number():
    assert show("5") != show(5)
    assert show("true") != show(True)


def test_show_cuts_long_values():
    text = show("x" * 200, limit=20)
    assert len(text) == 20
    assert text == "'" + "x" * 18 + "…"
    assert show(list(range(100)), limit=10) == "[0,1,2,3,…"


def test_show_falls_back_to_repr_for_values_json_cannot_hold():
    assert show({1, 2}) == repr({1, 2})


@settings(max_examples=500)
@given(st.text(alphabet=st.sampled_from(["a", "'", '"', "\\", "\n", "\x00", "é", "\u2028", "😀", "\ud800"]), max_size=40), st.integers(1, 45))
def test_a_long_text_is_shown_as_the_head_of_its_whole_repr(text, limit):
    whole = repr(text)
    assert show(text, limit) == (whole if len(whole) <= limit else whole[: limit - 1] + "…")
