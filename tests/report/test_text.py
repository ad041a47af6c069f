"""Styled text: plain pieces with style names; rich's styled text only when a terminal shows it."""

import pytest
from rich.text import Text

from dialogcheck.checks.base import Outcome
from dialogcheck.report.check_text import outcome_line
from dialogcheck.report.styled import Styled

PIECES = [
    ("  ", ""),
    ("FAIL ", "bold red"),
    (" label", "bold"),
    (": a detail with a cut…\n", ""),
    ("", ""),
    ("ünïcode\r", "bold"),
    ("PASS ", "bold green"),
]


@pytest.mark.parametrize("pieces", [PIECES, [("…", "bold")], []])
def test_the_plain_form_joins_the_pieces_and_the_rich_form_styles_each(pieces):
    styled = Styled()
    expected = Text()
    for piece, style in pieces:
        styled.append(piece, style)
        expected.append(piece, style)
    assert styled.plain == "".join(piece for piece, _ in pieces)
    assert styled.to_rich() == expected
    assert ("", "") not in styled.pieces  # an empty piece adds nothing


def test_an_outcome_line_styles_its_word_and_a_failing_label():
    text = Styled()
    outcome_line(text, Outcome.FAIL, "tool_executed x", "no run")
    outcome_line(text, Outcome.PASS, "skill_completed s", "")
    assert text.plain == "  FAIL  tool_executed x: no run\n  PASS  skill_completed s\n"
    assert ("FAIL ", "bold red") in text.pieces and (" tool_executed x", "bold") in text.pieces
    assert (" skill_completed s", "") in text.pieces
