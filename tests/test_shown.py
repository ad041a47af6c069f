"""`_shown`: outside text in reports is bounded (`cut`) and, in text output, shows its control characters (`visible`)."""

from __future__ import annotations

import pytest

from dialogcheck import _redact
from dialogcheck._shown import TEXT_LIMIT, clip, cut, shown, visible


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("boom\r\nPASS  everything", "boom\\r\\nPASS  everything"),
        ("tab\there", "tab\\there"),
        ("\x1b[2J\x1b[32mPASS\x1b[0m", "\\x1b[2J\\x1b[32mPASS\\x1b[0m"),
        ("bell\x07 nul\x00 del\x7f c1\x85", "bell\\x07 nul\\x00 del\\x7f c1\\x85"),
        ("line\u2028sep\u2029para", "line\\u2028sep\\u2029para"),
        ("abc\u202edcb", "abc\\u202edcb"),  # right-to-left override: reorders what a terminal shows
        ("plain text, é and 中文 and a \\n that was written as two characters", "plain text, é and 中文 and a \\n that was written as two characters"),
    ],
)
def test_visible_writes_control_characters_as_escapes(text, expected):
    assert visible(text) == expected
    assert "\n" not in visible(text) and "\r" not in visible(text)


def test_visible_returns_clean_text_itself():
    text = "nothing to escape here " * 50
    assert visible(text) is text


def test_short_text_is_not_cut():
    text = "x" * TEXT_LIMIT
    assert cut(text) is text


def test_long_text_is_cut_to_the_limit_saying_how_long_it_was_and_where_it_is_whole():
    text = "x" * 10_485_760
    done = cut(text, "run_1.events.jsonl")
    notice = "… [cut from 10,485,760 characters, whole text in run_1.events.jsonl]"
    assert done.endswith(notice) and done == "x" * (TEXT_LIMIT - len(notice)) + notice
    assert len(done) == TEXT_LIMIT
    assert cut(done, "run_1.events.jsonl") is done  # a renderer cutting again changes nothing
    assert cut("y" * 20_001).endswith("… [cut from 20,001 characters]")


def test_shown_cuts_then_escapes():
    assert shown("a\nb") == "a\\nb"
    assert len(shown("\n" * 50_000)) <= 2 * TEXT_LIMIT


def test_clip_keeps_short_text_and_cuts_long_text_after_masking_it(monkeypatch):
    assert clip("twelve chars", 12) == "twelve chars"
    assert clip("thirteen char", 12) == "thirteen ch…"  # `limit - 1` characters and the ellipsis
    assert clip("thirteen char", 12, keep=12) == "thirteen cha…"
    secret = "tok-0123456789abcdef"
    monkeypatch.setattr(_redact, "_held", (secret,))
    assert clip(f"the token is {secret}", 20) == "the token is [redac…"  # no head of the secret is left
    assert clip(f"it is {secret}", 20) == "it is [redacted]"  # masked, it fits: nothing is cut


def test_a_cut_list_says_how_many_it_left_out():
    from dialogcheck._shown import listed

    assert listed(["a", "b"], 3) == "a, b"
    assert listed(["a", "b", "c"], 3) == "a, b, c"
    assert listed([f"n{i}" for i in range(1_203)], 2) == "n0, n1 and 1,201 more"
    assert listed([], 3) == ""
