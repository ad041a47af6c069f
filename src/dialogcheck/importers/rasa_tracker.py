"""`rasa-tracker`: the native form itself (flat tracker events), read by the native loader.

Listed as a format so a pipeline can name every source the same way; the
conversations and their errors are exactly those of `dialogcheck check` on
the file (docs/concepts.md, the conversation record).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..events.load import iter_conversation_file
from ._build import ImportedConversation


def read(path: str | Path) -> Iterator[ImportedConversation]:
    """Every conversation of a native file, lazily where its container allows."""
    for conversation in iter_conversation_file(path):
        yield ImportedConversation(conversation)
