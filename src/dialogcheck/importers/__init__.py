"""Read other tools' conversation logs as native events (SPEC section 1), so recorded runs can be checked.

One module per format, each with `read(path) -> Iterator[ImportedConversation]`:
lazy (a JSONL of many conversations is converted one at a time), and every
problem names the file, line and column of the source value. An imported
conversation is read back through the native event reader before it is
handed out, so `dialogcheck import` never writes what `check` would refuse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..events.load import conversation_files
from ..events.model import Conversation
from . import openai_messages, rasa_proto, rasa_tracker, tau2, tau_bench
from ._build import ImportedConversation

Reader = Callable[[str | Path], Iterator[ImportedConversation]]

#: Format name (as `--from` and `--input-format` take it) -> reader.
IMPORTERS: dict[str, Reader] = {
    "rasa-tracker": rasa_tracker.read,
    "rasa-proto": rasa_proto.read,
    "openai": openai_messages.read,
    "tau-bench": tau_bench.read,
    "tau2": tau2.read,
}


def import_file(path: str | Path, fmt: str) -> Iterator[ImportedConversation]:
    """Every conversation of one file in format `fmt`, converted lazily; bad input raises `LoadError`."""
    try:
        reader = IMPORTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown import format {fmt!r}: expected one of {', '.join(IMPORTERS)}") from None
    return reader(path)


def iter_imported_conversations(paths: Iterable[str | Path], fmt: str) -> Iterator[Conversation]:
    """The conversations of files and folders in format `fmt`, as `iter_conversations` gives native ones."""
    for path in conversation_files(paths):
        for imported in import_file(path, fmt):
            yield imported.conversation


__all__ = ["IMPORTERS", "ImportedConversation", "import_file", "iter_imported_conversations"]
