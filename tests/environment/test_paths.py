"""Paths into the state and values filled from a call's arguments."""

from __future__ import annotations

import pytest

from dialogcheck.environment.paths import NotFound, PathError, append_at, delete_at, follow, parse_path, parse_template, set_at


def test_a_whole_placeholder_keeps_the_arguments_type_and_a_part_becomes_its_text():
    assert parse_template("{count}").fill({"count": 2}) == 2
    assert parse_template("{count} x {sku}").fill({"count": 2, "sku": "B"}) == "2 x B"
    assert parse_template("{flag}!").fill({"flag": True}) == "true!"
    assert parse_template("{{literal}} {a}").fill({"a": "x"}) == "{literal} x"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a", "a lone `{` at character 1: write `{{` for a literal brace"),
        ("a}", "a lone `}` at character 2: write `}}` for a literal brace"),
        ("{not a name}", "`{not a name}` does not name an argument (write `{{` and `}}` for literal braces)"),
        ("{}", "`{}` does not name an argument (write `{{` and `}}` for literal braces)"),
    ],
)
def test_bad_templates_say_what_is_wrong(text, message):
    with pytest.raises(ValueError) as caught:
        parse_template(text)
    assert str(caught.value) == message


def test_a_missing_argument_is_a_path_error():
    with pytest.raises(PathError) as caught:
        parse_path("orders.{order_id}").keys({})
    assert str(caught.value) == "the argument `order_id` is missing"


def test_an_empty_step_is_refused():
    with pytest.raises(ValueError) as caught:
        parse_path("orders..status")
    assert str(caught.value) == "the path 'orders..status' has an empty step: write steps separated by single dots, like `orders.{order_id}`"


def test_following_setting_appending_and_deleting_through_mappings_and_lists():
    state = {"orders": {"O1": {"items": [{"sku": "A"}]}}}
    assert follow(state, ["orders", "O1", "items", "0", "sku"]) == "A"
    set_at(state, ["orders", "O1", "items", "0", "sku"], "B")
    set_at(state, ["orders", "O1", "note"], "new key")
    append_at(state, ["orders", "O1", "items"], {"sku": "C"})
    delete_at(state, ["orders", "O1", "items", "0"])
    assert state == {"orders": {"O1": {"items": [{"sku": "C"}], "note": "new key"}}}
    for broken in (lambda: follow(state, ["orders", "O9"]), lambda: set_at(state, ["orders", "O9", "x"], 1),
                   lambda: set_at(state, ["orders", "O1", "items", "5"], 1), lambda: delete_at(state, ["orders", "O9"])):
        with pytest.raises(NotFound):
            broken()
    with pytest.raises(PathError) as caught:
        append_at(state, ["orders", "O1", "note"], 1)
    assert str(caught.value) == "cannot append to orders.O1.note: it is not a list"
