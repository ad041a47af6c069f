"""Labels are cached on the check: built once per batch, never part of its identity."""

import pickle

from tests.conftest import check_from_yaml

TEXT = "sequencing:\n  - skill_activated: {skill_id: s}\n  - memory_was_set: user_id\n"


def test_a_label_is_built_once_and_leaves_equality_and_pickling_alone():
    check = check_from_yaml(TEXT)
    fresh = check_from_yaml(TEXT)
    assert check.label == "sequencing skill_activated s → memory_was_set user_id"
    assert check.label is check.label
    assert check == fresh and hash(check) == hash(fresh)
    copy = pickle.loads(pickle.dumps(check))
    assert copy == check and copy.label == check.label


def test_two_checks_of_one_tool_say_which_asks_for_arguments_and_which_counts_runs():
    with_arguments = check_from_yaml("tool_executed: {tool_name: book, source: local, arguments: {a: 1}, is_error: false}")
    counted = check_from_yaml("tool_executed: {tool_name: book, source: local, is_error: false, times: 1}")
    plain = check_from_yaml("tool_executed: {tool_name: book, source: mcp, mcp_server: s}")
    assert with_arguments.label == "tool_executed book (local) with arguments"
    assert counted.label == "tool_executed book (local) times 1"
    assert check_from_yaml("tool_executed: {tool_name: book, source: local, times: 0}").label == "tool_executed book (local) times 0"
    assert plain.label == "tool_executed book (mcp:s)"
