"""Turn converted events into checked conversations, keeping every problem's place in the source file.

An importer writes native event objects into a `Draft`, each with the item and
JSON path it came from. `finish` reads them with the reader every source goes
through (`events.parse`), once: an imported conversation is never one the
native loader would refuse, its typed events are those `check` reads from the
written file, and a bad field points back at the source, not at the output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from ..errors import LoadError, Problem, ProblemLog
from ..events.model import Conversation
from ..events.parse import EventFieldError, EventReader, json_type
from ._records import Item, ItemProblem, JsonPath


@dataclass(frozen=True)
class ImportedConversation:
    """One conversation read from another format: the typed record, which keeps the native events it was read from."""

    conversation: Conversation

    @property
    def events(self) -> tuple[Mapping[str, Any], ...]:
        """The native events (docs/concepts.md, the conversation record) the conversation was read from."""
        return tuple(self.conversation.raw_events)

    @property
    def conversation_id(self) -> str | None:
        return self.conversation.conversation_id

    def tracker(self) -> dict[str, Any]:
        """The native tracker object (docs/concepts.md, the conversation record) that `dialogcheck check` reads back unchanged."""
        return {"sender_id": self.conversation_id, "events": list(self.events)}


@dataclass
class Draft:
    """Native events of one conversation being built, each remembering where it came from."""

    conversation_id: str | None
    events: list[dict[str, Any]] = field(default_factory=list)
    origins: list[tuple[Item, JsonPath]] = field(default_factory=list)

    def add(self, event: dict[str, Any], item: Item, path: JsonPath) -> dict[str, Any]:
        self.events.append(event)
        self.origins.append((item, path))
        return event

    def place_messages(self, key: str) -> Draft:
        """Each event converted from a message of the list `key` keeps that message's index in
        `metadata.source_index`, so a verdict (a blame) can point at the message in the original file."""
        for event, (_, path) in zip(self.events, self.origins):
            if len(path) >= 2 and path[0] == key and isinstance(path[1], int):
                event.setdefault("metadata", {})["source_index"] = path[1]
        return self


def finish(draft: Draft, source: str) -> ImportedConversation:
    """Read the draft's events as native events; every refused field is a problem at its source."""
    reader = EventReader()
    problems = ProblemLog()
    for i, (event, (item, path)) in enumerate(zip(draft.events, draft.origins)):
        try:
            reader.add(event)
        except EventFieldError as err:
            if problems.counting:
                problems.count_one()
            else:
                problems.add(item.problem(f"converted event {i} ({event.get('event')}): {err}", path))
    if problems:
        raise problems.error()
    return ImportedConversation(Conversation(tuple(reader.events), source, draft.conversation_id, tuple(draft.events)))


class _Unit(Protocol):
    """What an importer converts one at a time: an item, or a group of them, that can place a problem in the file."""

    def problem(self, message: str, path: JsonPath = ()) -> Problem: ...


_U = TypeVar("_U", bound=_Unit)


def convert_items(
    items: Iterable[_U], convert: Callable[[_U], Iterable[Draft]], file: str
) -> Iterator[ImportedConversation]:
    """Convert items lazily, one conversation at a time; raise every problem of the file together at the end.

    Conversations of a batch are named `file#conversation_id`; a file holding
    just one is named by the file, as the native loader names it. After the
    first problem nothing more is yielded, but the rest of the file is still
    read for problems, so one run shows them all (past the first 50, how many).
    """
    problems = ProblemLog()
    pending: ImportedConversation | None = None
    count = 0
    iterator = iter(items)
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            break
        except LoadError as err:  # the container itself is broken: nothing after this can be read
            problems.extend(err.problems)
            break
        try:
            for draft in convert(item):
                imported = finish(draft, f"{file}#{draft.conversation_id}")
                if problems:
                    continue
                if pending is not None:
                    yield pending
                pending, count = imported, count + 1
        except ItemProblem as err:
            if problems.counting:
                problems.count_one()
            else:
                problems.add(item.problem(str(err), err.path))
        except LoadError as err:
            problems.extend(err.problems)
    if problems:
        raise problems.error()
    if pending is None:
        raise LoadError.one("the file holds no conversations", file)
    yield pending if count > 1 else replace(pending, conversation=replace(pending.conversation, source=file))


def expect(value: Any, kind: type | tuple[type, ...], what: str, path: JsonPath, optional: bool = False) -> Any:
    """`value` when it has the expected JSON type; else an `ItemProblem` saying what was found."""
    if value is None and optional:
        return None
    if isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind)):
        return value
    names = {str: "a string", dict: "an object", list: "a list", bool: "a boolean", int: "a number", float: "a number"}
    wanted = " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in _as_tuple(kind)))
    raise ItemProblem(f"`{what}` must be {wanted}, got {json_type(value)}", path)


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)
