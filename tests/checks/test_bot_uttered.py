"""`bot_uttered` / `bot_did_not_utter`: one message for all fields, regex rules, button order."""

import pytest

from tests.conftest import assertion_error, bot, check_from_yaml, conv, user

YES = {"title": "Yes", "payload": "/affirm"}
NO = {"title": "No", "payload": "/deny"}
LATER = {"title": "Later", "payload": "/later"}


def test_seed_examples():
    uttered = check_from_yaml('- bot_uttered:\n    text_matches: "replacement.*(ordered|placed)"\n')
    not_uttered = check_from_yaml("- bot_did_not_utter:\n    utter_name: utter_cannot_help\n")
    run = conv(user("hi"), bot("Your replacement card has been ordered.", "utter_done"))
    assert uttered.evaluate(run).passed
    result = not_uttered.evaluate(run)
    assert result.passed and result.detail == "none of the 1 bot message matched"
    bad = conv(user("hi"), bot("Sorry, I can't help with that.", "utter_cannot_help"))
    assert not uttered.evaluate(bad).passed
    result = not_uttered.evaluate(bad)
    assert not result.passed
    assert result.detail == "bot message utter_cannot_help \"Sorry, I can't help with that.\" at event 1 (turn 1) matched"
    assert result.evidence == (1,)


def test_one_single_message_must_satisfy_every_field():
    check = check_from_yaml("bot_uttered: {utter_name: utter_confirm, text_matches: express}")
    split = conv(bot("Standard shipping?", "utter_confirm"), bot("express is faster", "utter_info"))
    result = check.evaluate(split)
    assert not result.passed
    assert "closest: bot message utter_confirm 'Standard shipping?' at event 0 (turn 0) but text" in result.detail
    assert check.evaluate(conv(bot("Use express?", "utter_confirm"))).passed


def test_did_not_utter_is_exactly_the_negation_of_one_message():
    # No single message has both fields, so bot_uttered fails and bot_did_not_utter passes.
    split = conv(bot("Standard?", "utter_confirm"), bot("express", "utter_info"))
    assert check_from_yaml("bot_did_not_utter: {utter_name: utter_confirm, text_matches: express}").evaluate(split).passed


def test_regex_is_searched_and_case_sensitive_unless_flagged():
    run = conv(bot("Your Replacement is on its way"))
    assert not check_from_yaml("bot_uttered: {text_matches: replacement}").evaluate(run).passed
    assert check_from_yaml("bot_uttered: {text_matches: '(?i)replacement'}").evaluate(run).passed
    assert check_from_yaml("bot_uttered: {text_matches: 'its way$'}").evaluate(run).passed


def test_text_null_reads_as_empty_so_empty_pattern_matches_button_only_message():
    run = conv(bot(None, buttons=[YES]))
    assert check_from_yaml("bot_uttered: {text_matches: '^$'}").evaluate(run).passed


def test_user_messages_are_never_bot_messages():
    assert not check_from_yaml("bot_uttered: {text_matches: hello}").evaluate(conv(user("hello"))).passed


def test_buttons_in_listed_order_with_others_between():
    run = conv(bot("Confirm?", buttons=[YES, LATER, NO]))
    assert check_from_yaml("bot_uttered: {buttons: [{title: 'Yes'}, {title: 'No'}]}").evaluate(run).passed
    result = check_from_yaml("bot_uttered: {buttons: [{title: 'No'}, {title: 'Yes'}]}").evaluate(run)
    assert not result.passed
    assert "buttons lacked 'Yes' in order (it had 'Yes', 'Later', 'No')" in result.detail


def test_button_payload_compared_only_when_listed():
    run = conv(bot("Confirm?", buttons=[YES, NO]))
    assert check_from_yaml("bot_uttered: {buttons: [{title: 'Yes', payload: /affirm}]}").evaluate(run).passed
    assert not check_from_yaml("bot_uttered: {buttons: [{title: 'Yes', payload: /deny}]}").evaluate(run).passed
    assert check_from_yaml("bot_uttered: {buttons: [{title: 'No'}]}").evaluate(run).passed


def test_button_listed_twice_must_appear_twice():
    check = check_from_yaml("bot_uttered: {buttons: [{title: 'Yes'}, {title: 'Yes'}]}")
    assert not check.evaluate(conv(bot("?", buttons=[YES, NO]))).passed
    assert check.evaluate(conv(bot("?", buttons=[YES, NO, YES]))).passed


def test_shorthand_buttons_and_utter_name():
    run = conv({"event": "bot", "text": "?", "utter_name": "utter_ask", "buttons": [{"title": "Yes"}]})
    assert check_from_yaml("bot_uttered: {utter_name: utter_ask, buttons: [{title: 'Yes'}]}").evaluate(run).passed


def test_button_without_title_has_title_null():
    run = conv(bot("?", buttons=[{"payload": "/x"}]))
    assert not check_from_yaml("bot_uttered: {buttons: [{title: ''}]}").evaluate(run).passed


def test_no_bot_message_at_all():
    result = check_from_yaml("bot_uttered: {utter_name: utter_greet}").evaluate(conv(user("hi")))
    assert result.detail == "no bot message event was recorded"


@pytest.mark.parametrize("key", ["bot_uttered", "bot_did_not_utter"])
def test_load_errors(key):
    assert assertion_error(f"- {key}: {{}}\n") == (
        f"t.yml:1:{len(key) + 5}: `{key}` must set at least one of `utter_name`, `text_matches`, `buttons`"
    )
    message = assertion_error(f"- {key}:\n    text_matches: '(unclosed'\n")
    assert message == (
        f"t.yml:2:19: `text_matches` in `{key}` is not a valid regular expression: missing ) at position 9"
    )
    assert assertion_error(f"- {key}:\n    buttons:\n      - payload: /x\n") == (
        f"t.yml:3:9: button 1 of `{key}` is missing required field `title`"
    )
    assert assertion_error(f"- {key}:\n    text_match: x\n") == (
        f"t.yml:2:5: unknown field `text_match` in `{key}` (did you mean `text_matches`?)\n"
        f"t.yml:2:5: `{key}` must set at least one of `utter_name`, `text_matches`, `buttons`"
    )
