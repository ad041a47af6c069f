"""The text renderer builds its `Text` in runs; the result must equal appending piece by piece."""

import pytest
from rich.text import Text

from dialogcheck.report.text import _Styled

PIECES = [
    ("  ", ""),
    ("FAIL ", "bold red"),
    (" label", "bold"),
    (": a detail with a cut…\n", ""),
    ("", ""),
    ("  ", ""),
    ("PASS ", "bold green"),
    (" sequencing a → b", "bold"),
    (": matched\n", ""),
    ("    ", ""),
    ("SKIP ", "dim"),
    (" step", ""),
    (": never called\n", "dim"),
]

CONTROL = [
    ("  ", ""),
    ("FAIL ", "bold red"),
    (" label\r", "bold"),  # a control code in an ASCII run
    (": said \x07hi\n", ""),
    ("\r", "bold"),  # only control codes: Text.append keeps a zero-length span
    ("", "dim"),
    ("ünïcode\r", "bold"),
    ("PASS ", "bold green"),
]


@pytest.mark.parametrize("pieces", [PIECES, CONTROL, PIECES + CONTROL + PIECES, [("…", "bold")], []])
def test_the_built_text_equals_appending_each_piece(pieces):
    styled = _Styled()
    expected = Text()
    for piece, style in pieces:
        styled.add(piece, style)
        expected.append(piece, style)
    built = styled.text()
    assert built.plain == expected.plain
    assert built.spans == expected.spans
    assert built == expected
