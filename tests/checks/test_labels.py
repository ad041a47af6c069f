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
