"""Ordered-block checks: block_id, skill_id, step_id, and independence from skill events."""

import pytest

from tests.conftest import assertion_error, check_from_yaml, conv, ev

BLOCK_KEYS = [
    "ordered_block_entered",
    "ordered_block_completed",
    "ordered_block_cancelled",
    "ordered_block_interrupted",
    "ordered_block_resumed",
]


def test_seed_example_entered():
    check = check_from_yaml("- ordered_block_entered:\n    skill_id: card_replace\n    block_id: main\n")
    run = conv(ev("skill_activated", skill_id="card_replace"), ev("ordered_block_entered", skill_id="card_replace", block_id="main"))
    result = check.evaluate(run)
    assert result.passed and result.evidence == (1,)


@pytest.mark.parametrize("key", BLOCK_KEYS)
def test_each_key_reads_only_its_event_type(key):
    check = check_from_yaml(f"{key}: {{skill_id: s, block_id: b}}")
    assert check.evaluate(conv(ev(key, skill_id="s", block_id="b", step_id="x"))).passed
    others = [ev(k, skill_id="s", block_id="b", step_id="x") for k in BLOCK_KEYS if k != key]
    assert not check.evaluate(conv(*others)).passed


def test_other_block_of_same_skill_fails_with_block_id_reason():
    result = check_from_yaml("ordered_block_completed: {skill_id: s, block_id: main}").evaluate(
        conv(ev("ordered_block_completed", skill_id="s", block_id="submit"))
    )
    assert not result.passed
    assert "block_id was 'submit', expected 'main'" in result.detail


def test_same_block_id_of_another_skill_does_not_match():
    check = check_from_yaml("ordered_block_cancelled: {skill_id: card_replace, block_id: main}")
    assert not check.evaluate(conv(ev("ordered_block_cancelled", skill_id="transfer", block_id="main"))).passed


def test_skill_event_does_not_satisfy_block_check():
    check = check_from_yaml("ordered_block_interrupted: {skill_id: s, block_id: b}")
    assert not check.evaluate(conv(ev("skill_interrupted", skill_id="s", step_id="b"))).passed


@pytest.mark.parametrize("key", BLOCK_KEYS[1:])
def test_step_id_narrows(key):
    run = conv(ev(key, skill_id="s", block_id="b", step_id="confirm"))
    assert check_from_yaml(f"{key}: {{skill_id: s, block_id: b, step_id: confirm}}").evaluate(run).passed
    result = check_from_yaml(f"{key}: {{skill_id: s, block_id: b, step_id: submit}}").evaluate(run)
    assert not result.passed and "step_id was 'confirm', expected 'submit'" in result.detail


def test_entered_rejects_step_id():
    assert assertion_error("- ordered_block_entered: {skill_id: s, block_id: b, step_id: x}\n") == (
        "t.yml:1:53: `ordered_block_entered` does not take `step_id`: "
        "only the completed, cancelled, interrupted and resumed checks do"
    )


def test_block_id_required():
    assert assertion_error("- ordered_block_resumed:\n    skill_id: s\n") == (
        "t.yml:2:5: `ordered_block_resumed` is missing required field `block_id`"
    )


def test_value_must_be_a_mapping():
    assert assertion_error("- ordered_block_entered: main\n") == (
        "t.yml:1:26: `ordered_block_entered` must be a mapping, got a string"
    )
