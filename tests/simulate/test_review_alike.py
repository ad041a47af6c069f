"""`alike` is `likeness(a, b) >= at_least`, whatever difflib's cheap bounds rule out first."""

from hypothesis import given, strategies as st

from dialogcheck.simulate.review import _text

WORDS = st.lists(st.sampled_from(["my", "card", "is", "lost", "please", "help", "yes", "no"]), max_size=12)


@given(WORDS, WORDS, st.sampled_from([0.0, 0.5, 0.85, 0.9, 1.0]))
def test_alike_is_likeness_at_least(a, b, at_least):
    assert _text.alike(a, b, at_least) == (_text.likeness(a, b) >= at_least)


def test_alike_on_examples():
    assert _text.alike(("my", "card", "is", "lost"), ("my", "card", "is", "lost"), 0.9)
    assert not _text.alike(("my", "card", "is", "lost"), ("please", "help"), 0.5)
    assert _text.alike((), (), 1.0)
