"""Memory checks: the seed's example, typed equality, the last-write rule, write-then-clear."""

import pytest

from tests.conftest import assertion_error, check_from_yaml, conv, ev, user

SEED_EXAMPLE = """
- memory_was_set:
    - name: card_replace.replacement_reason
      value: damaged
    - name: card_replace.selected_card_id
"""


def mset(key, value):
    return ev("memory_set", key=key, value=value)


def mclear(key):
    return ev("memory_cleared", key=key)


def test_seed_example_every_entry_must_pass():
    check = check_from_yaml(SEED_EXAMPLE)
    both = conv(user("hi"), mset("card_replace.selected_card_id", "c1"), mset("card_replace.replacement_reason", "damaged"))
    result = check.evaluate(both)
    assert result.passed
    assert result.evidence == (1, 2)
    only_reason = conv(mset("card_replace.replacement_reason", "damaged"))
    result = check.evaluate(only_reason)
    assert not result.passed
    assert result.detail == "card_replace.selected_card_id was never written"


def test_set_without_value_passes_on_any_write():
    assert check_from_yaml("memory_was_set: [{name: k}]").evaluate(conv(mset("k", None))).passed


def test_set_with_value_any_write_may_equal():
    check = check_from_yaml("memory_was_set: [{name: k, value: damaged}]")
    assert check.evaluate(conv(mset("k", "lost"), mset("k", "damaged"), mset("k", "stolen"))).passed
    result = check.evaluate(conv(mset("k", "lost"), mset("k", "stolen")))
    assert not result.passed
    assert result.detail == "k was written as 'lost' at event 0 (turn 0), 'stolen' at event 1 (turn 0), never 'damaged'"


@pytest.mark.parametrize(
    "yaml_value, written, passes",
    [
        ("true", True, True),
        ("true", "true", False),
        ("true", 1, False),
        ("5", 5, True),
        ("5", 5.0, True),
        ("5", "5", False),
        ('"5"', 5, False),
        ("1", True, False),
        ("{a: 1, b: [1, 2]}", {"b": [1, 2], "a": 1}, True),
        ("[1, 2]", [2, 1], False),
        ("[{x: 1}]", [{"x": 1}], True),
        ("no", "no", True),  # YAML 1.2: `no` is a string
        ("no", False, False),
        ("1_000", "1_000", True),  # YAML 1.2's core schema: not a number
        ("1_000", 1000, False),
    ],
)
def test_values_compare_json_typed(yaml_value, written, passes):
    check = check_from_yaml(f"memory_was_set: [{{name: k, value: {yaml_value}}}]")
    assert check.evaluate(conv(mset("k", written))).passed is passes


def test_not_set_without_value_fails_on_any_write():
    check = check_from_yaml("memory_was_not_set: [{name: card_replace.fraud_review}]")
    assert check.evaluate(conv(mset("other", 1))).passed
    result = check.evaluate(conv(user("x"), mset("card_replace.fraud_review", True)))
    assert not result.passed
    assert result.detail == "card_replace.fraud_review was written: true at event 1 (turn 1)"


def test_not_set_with_value_uses_the_last_write():
    check = check_from_yaml("memory_was_not_set: [{name: k, value: express}]")
    assert check.evaluate(conv(mset("k", "express"), mset("k", "standard"))).passed
    result = check.evaluate(conv(mset("k", "standard"), mset("k", "express")))
    assert not result.passed
    assert result.detail == "the last write of k was 'express' at event 1 (turn 0)"
    assert check.evaluate(conv()).passed


def test_not_set_last_write_rule_ignores_a_later_clear():
    check = check_from_yaml("memory_was_not_set: [{name: k, value: x}]")
    assert not check.evaluate(conv(mset("k", "x"), mclear("k"))).passed


def test_write_then_clear_seed_rule():
    run = conv(mset("card_replace.draft_order_id", "d1"), mclear("card_replace.draft_order_id"))
    assert check_from_yaml("memory_was_set: [{name: card_replace.draft_order_id}]").evaluate(run).passed
    assert check_from_yaml("memory_was_cleared: [{name: card_replace.draft_order_id}]").evaluate(run).passed
    assert not check_from_yaml("memory_was_not_set: [{name: card_replace.draft_order_id}]").evaluate(run).passed


def test_cleared_fails_when_only_written_and_says_so():
    result = check_from_yaml("memory_was_cleared: [{name: k}]").evaluate(conv(mset("k", 1)))
    assert not result.passed
    assert result.detail == "k was never cleared (it was written but never cleared)"


def test_similar_key_is_suggested():
    result = check_from_yaml("memory_was_set: [{name: card_replace.reason}]").evaluate(
        conv(mset("card_replace.reasons", "x"))
    )
    assert result.detail == "card_replace.reason was never written (a similar key was: `card_replace.reasons`)"


def test_cleared_rejects_value():
    assert assertion_error("- memory_was_cleared:\n    - name: k\n      value: 1\n") == (
        "t.yml:3:7: `memory_was_cleared` takes no `value`: a clear has no value"
    )


@pytest.mark.parametrize("key", ["memory_was_set", "memory_was_not_set"])
def test_null_value_rejected(key):
    assert assertion_error(f"- {key}:\n    - name: k\n      value: null\n") == (
        f"t.yml:3:14: `value` in entry 1 of `{key}` must not be null: null is not accepted as a value"
    )


@pytest.mark.parametrize("key", ["memory_was_set", "memory_was_not_set", "memory_was_cleared"])
def test_session_prefix_rejected(key):
    assert assertion_error(f"- {key}:\n    - name: session.card_replace.reason\n") == (
        "t.yml:2:13: memory name `session.card_replace.reason` starts with `session.`: tracker keys carry no "
        "session prefix, so this check would never match (write `card_replace.reason`)"
    )


def test_entries_must_be_a_non_empty_list():
    assert assertion_error("- memory_was_set: []\n") == (
        "t.yml:1:19: `memory_was_set` (a list of {name, value} entries) must hold at least one item, got 0"
    )
    assert assertion_error("- memory_was_set: {name: k}\n") == (
        "t.yml:1:19: `memory_was_set` (a list of {name, value} entries) must be a list, got a mapping"
    )


def test_name_required_and_unknown_fields():
    assert assertion_error("- memory_was_set:\n    - nme: k\n") == (
        "t.yml:2:7: unknown field `nme` in entry 1 of `memory_was_set` (did you mean `name`?)\n"
        "t.yml:2:7: entry 1 of `memory_was_set` is missing required field `name`"
    )
