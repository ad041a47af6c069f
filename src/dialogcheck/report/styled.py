"""Text with styles kept as plain pieces: what the text renderers make, and the CLI prints.

The plain form is the pieces joined, so output that goes to a pipe or a file
(CI logs, `summary.txt`) never builds rich's styled text; the styles are
applied, through rich, only when a terminal shows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text


class Styled:
    """Pieces of text, each with a rich style name ("" for none)."""

    __slots__ = ("pieces",)

    def __init__(self, text: str = "", style: str = "") -> None:
        self.pieces: list[tuple[str, str]] = [(text, style)] if text else []

    def append(self, text: str, style: str = "") -> Styled:
        if text:
            self.pieces.append((text, style))
        return self

    def extend(self, other: Styled) -> Styled:
        self.pieces.extend(other.pieces)
        return self

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.pieces)

    def to_rich(self) -> Text:
        from rich.text import Text

        text = Text()
        for piece, style in self.pieces:
            text.append(piece, style=style)
        return text
