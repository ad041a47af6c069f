"""The text renderer builds its `Text` in runs; the result must equal appending piece by piece."""

from rich.text import Text

from dialogcheck.report.text import _Styled

PIECES = [
    ("  ", ""),
    ("FAIL ", "bold red"),
    (" label\r", "bold"),
    (": a detail \x07with control codes…\n", ""),
    ("", ""),
    ("  ", ""),
    ("\r", "bold"),  # only control codes: Text.append keeps a zero-length span
    ("", "dim"),
    ("PASS ", "bold green"),
    (" sequencing a → b", ""),
    (": matched\n", ""),
]


def test_runs_of_unstyled_pieces_make_the_same_text_as_appending_each():
    styled = _Styled()
    expected = Text()
    for piece, style in PIECES:
        styled.add(piece, style)
        expected.append(piece, style)
    built = styled.text()
    assert built.plain == expected.plain
    assert built.spans == expected.spans
    assert built == expected
