"""Read other tools' conversation logs as native events (docs/concepts.md, the conversation record), so recorded runs can be checked.

One module per format, each with `read(path) -> Iterator[ImportedConversation]`:
lazy (a JSONL of many conversations is converted one at a time), and every
problem names the file, line and column of the source value. An imported
conversation is read back through the native event reader before it is
handed out, so `dialogcheck import` never writes what `check` would refuse.

A file read as the wrong format fails on every item in the same way; when its
first item looks like another format, that is said once instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from importlib import import_module
from pathlib import Path

from ..errors import LoadError
from ..events.formats import FORMAT_NAMES, guess_format
from ..events.load import conversation_files
from ..events.model import Conversation
from ._build import ImportedConversation
from ._records import file_items

Reader = Callable[[str | Path], Iterator[ImportedConversation]]

#: Format name (as `--from` and `--input-format` take it) -> the module of this package whose `read` reads it.
#: Imported when a file of the format is read: the command line lists the names without loading every reader.
IMPORTERS: dict[str, str] = {
    "rasa-tracker": "rasa_tracker",
    "rasa-proto": "rasa_proto",
    "openai": "openai_messages",
    "tau-bench": "tau_bench",
    "tau2": "tau2",
    "otlp": "otlp",
}


def reader(fmt: str) -> Reader:
    """The reader of format `fmt` (a name of `IMPORTERS`)."""
    return import_module(f".{IMPORTERS[fmt]}", __name__).read


assert FORMAT_NAMES.keys() == IMPORTERS.keys()


def _other_format(path: str | Path, fmt: str) -> LoadError | None:
    """One error naming the format the file is in, when its first item looks like another than `fmt` and reads as that.

    Reading it as the guess is the proof: a file of `fmt` with a mistake in it keeps its own errors.
    """
    try:
        first = next(iter(file_items(path)), None)
        if first is None:
            return None
        guess = guess_format(first.value)
        if guess is None or guess == fmt:
            return None
        next(iter(reader(guess)(path)))
    except (LoadError, ValueError, StopIteration):
        return None
    message = f"this looks like {FORMAT_NAMES[guess]}, not {FORMAT_NAMES[fmt]} (`{fmt}`): the format is `{guess}`"
    return LoadError([first.problem(message)])


def _naming_the_format(conversations: Iterator[ImportedConversation], path: str | Path, fmt: str) -> Iterator[ImportedConversation]:
    try:
        yield from conversations
    except LoadError as err:
        raise _other_format(path, fmt) or err from None


def import_file(path: str | Path, fmt: str) -> Iterator[ImportedConversation]:
    """Every conversation of one file in format `fmt`, converted lazily; bad input raises `LoadError`.

    When the file fails and its first item looks like another format, the one error says which.
    """
    if fmt not in IMPORTERS:
        raise ValueError(f"unknown import format {fmt!r}: expected one of {', '.join(IMPORTERS)}")
    return _naming_the_format(reader(fmt)(path), path, fmt)


def iter_imported_conversations(paths: Iterable[str | Path], fmt: str) -> Iterator[Conversation]:
    """The conversations of files and folders in format `fmt`, as `iter_conversations` gives native ones."""
    for path in conversation_files(paths):
        for imported in import_file(path, fmt):
            yield imported.conversation


__all__ = ["FORMAT_NAMES", "IMPORTERS", "ImportedConversation", "guess_format", "import_file", "iter_imported_conversations", "reader"]
