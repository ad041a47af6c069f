"""Skill checks: the seed's examples, step_id narrowing, and the rules of SPEC section 2."""

import pytest

from dialogcheck.checks.base import Outcome
from tests.conftest import assertion_error, bot, check_from_yaml, conv, ev, user

SKILL_KEYS = ["skill_activated", "skill_completed", "skill_cancelled", "skill_interrupted", "skill_resumed"]


def card_replace_run():
    return conv(
        user("/session_start"),
        user("my card is broken"),
        ev("skill_activated", skill_id="card_replace"),
        ev("skill_interrupted", skill_id="card_replace", step_id="autonomous"),
        ev("skill_resumed", skill_id="card_replace", step_id="autonomous"),
        user("cancel please"),
        ev("skill_cancelled", skill_id="card_replace", step_id="confirm"),
        bot("cancelled"),
    )


def test_seed_example_activated_passes_and_says_where():
    check = check_from_yaml("skill_activated:\n  skill_id: card_replace\n")
    result = check.evaluate(card_replace_run())
    assert result.outcome is Outcome.PASS
    assert result.detail == "matched skill_activated card_replace at event 2 (turn 1)"
    assert result.evidence == (2,)


def test_seed_example_completed_fails_when_only_cancelled():
    result = check_from_yaml("skill_completed: {skill_id: card_replace}").evaluate(card_replace_run())
    assert result.outcome is Outcome.FAIL
    assert result.detail == "no skill_completed event was recorded"


@pytest.mark.parametrize("key", SKILL_KEYS)
def test_every_skill_key_matches_its_own_event_type(key):
    check = check_from_yaml(f"{key}: {{skill_id: s}}")
    assert check.evaluate(conv(ev(key, skill_id="s"))).passed
    other = next(k for k in SKILL_KEYS if k != key)
    assert not check.evaluate(conv(ev(other, skill_id="s"))).passed


@pytest.mark.parametrize("key", SKILL_KEYS)
def test_other_skill_id_fails_naming_the_closest(key):
    result = check_from_yaml(f"{key}: {{skill_id: card_replace}}").evaluate(conv(ev(key, skill_id="transfer")))
    assert not result.passed
    assert "skill_id was 'transfer', expected 'card_replace'" in result.detail
    assert "at event 0 (turn 0)" in result.detail


def test_ordered_block_event_does_not_satisfy_skill_check():
    check = check_from_yaml("skill_cancelled: {skill_id: card_replace}")
    run = conv(ev("ordered_block_cancelled", skill_id="card_replace", block_id="main", step_id="confirm"))
    assert not check.evaluate(run).passed


def test_step_id_narrows_cancel():
    run = card_replace_run()
    assert check_from_yaml("skill_cancelled: {skill_id: card_replace, step_id: confirm}").evaluate(run).passed
    result = check_from_yaml("skill_cancelled: {skill_id: card_replace, step_id: submit}").evaluate(run)
    assert not result.passed
    assert "step_id was 'confirm', expected 'submit'" in result.detail


def test_step_id_autonomous_for_prose():
    run = card_replace_run()
    assert check_from_yaml("skill_interrupted: {skill_id: card_replace, step_id: autonomous}").evaluate(run).passed
    assert check_from_yaml("skill_resumed: {skill_id: card_replace, step_id: autonomous}").evaluate(run).passed


def test_step_id_never_matches_a_null_step():
    check = check_from_yaml("skill_interrupted: {skill_id: s, step_id: confirm}")
    assert not check.evaluate(conv(ev("skill_interrupted", skill_id="s"))).passed
    # without step_id the same event matches
    assert check_from_yaml("skill_interrupted: {skill_id: s}").evaluate(conv(ev("skill_interrupted", skill_id="s"))).passed


def test_closest_prefers_same_skill():
    run = conv(
        ev("skill_cancelled", skill_id="other", step_id="confirm"),
        ev("skill_cancelled", skill_id="card_replace", step_id="autonomous"),
    )
    result = check_from_yaml("skill_cancelled: {skill_id: card_replace, step_id: confirm}").evaluate(run)
    assert "closest: skill_cancelled card_replace step autonomous at event 1 (turn 0)" in result.detail


def test_turn_zero_is_a_real_turn():
    run = conv(ev("skill_activated", skill_id="greet"), user("hi"))
    result = check_from_yaml("skill_activated: {skill_id: greet}").evaluate(run)
    assert result.passed and "(turn 0)" in result.detail


@pytest.mark.parametrize("key", ["skill_activated", "skill_completed"])
def test_step_id_rejected_on_activated_and_completed(key):
    message = assertion_error(f"- {key}:\n    skill_id: s\n    step_id: x\n")
    assert message == (
        f"t.yml:3:5: `{key}` does not take `step_id`: only the cancelled, interrupted and resumed checks do"
    )


def test_skill_id_required():
    assert assertion_error("- skill_cancelled:\n    step_id: x\n") == (
        "t.yml:2:5: `skill_cancelled` is missing required field `skill_id`"
    )


def test_skill_id_must_be_a_string():
    assert assertion_error("- skill_completed:\n    skill_id: 12\n") == (
        "t.yml:2:15: `skill_id` in `skill_completed` must be a string, got an integer"
    )


def test_misspelt_key_and_field_get_did_you_mean():
    assert assertion_error("- skill_complete:\n    skill_id: s\n") == (
        "t.yml:1:3: unknown assertion `skill_complete` (did you mean `skill_completed`?)"
    )
    assert assertion_error("- skill_completed:\n    skil_id: s\n") == (
        "t.yml:2:5: unknown field `skil_id` in `skill_completed` (did you mean `skill_id`?)\n"
        "t.yml:2:5: `skill_completed` is missing required field `skill_id`"
    )
