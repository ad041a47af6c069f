"""Names in a log one keystroke away from a known one: `tool_exectued` for `tool_executed`, `txt` for `text`.

Unknown event types and fields are kept (docs/concepts.md, the conversation record), so a typo would pass silently: an event
nobody checks, a field left at its default. A name one edit from a known one (a letter added, dropped
or changed, or two neighbours swapped: Damerau-Levenshtein distance 1) is worth a warning. Each
distinct name is judged once and remembered, so a log that repeats a name costs one lookup an event.
"""

from __future__ import annotations

from .model import EVENT_CLASSES, Record

#: The fields each known event type reads, as recorded (`event` itself included).
KNOWN_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(name for name in cls.__struct_encode_fields__ if not name.startswith("(dialogcheck")) | {"event"}
    for kind, cls in EVENT_CLASSES.items()
}
#: How many distinct names are remembered; past it each is judged again (still cheap: a few comparisons).
_MAX_REMEMBERED = 10_000
_remembered: dict[tuple[str, str], str | None] = {}


def one_edit_apart(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one insertion, deletion, substitution, or swap of two neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        rest_a, rest_b = a[start + 1 :], b[start + 1 :]
        swapped = a[start + 1 : start + 2] == b[start : start + 1] and a[start : start + 1] == b[start + 1 : start + 2]
        return rest_a == rest_b or (swapped and a[start + 2 :] == b[start + 2 :])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]


def _nearest(name: str, known: frozenset[str] | dict) -> str | None:
    close = sorted(k for k in known if one_edit_apart(name, k))
    return close[0] if close else None


def _remember(key: tuple[str, str], hint: str | None) -> str | None:
    if len(_remembered) < _MAX_REMEMBERED:
        _remembered[key] = hint
    return hint


def type_hint(kind: str) -> str | None:
    """The known event type an unknown `kind` is one edit from, if any."""
    key = ("", kind)
    if key in _remembered:
        return _remembered[key]
    return _remember(key, _nearest(kind, EVENT_CLASSES))


def field_hint(kind: str, field: str) -> str | None:
    """The field of the known event type `kind` that an unknown `field` is one edit from, if any."""
    key = (kind, field)
    if key in _remembered:
        return _remembered[key]
    return _remember(key, _nearest(field, KNOWN_FIELDS[kind]))


class NameWarning(Record, frozen=True):
    """A name in event `index` that is probably a typo of `hint`: an event type, or a field of event type `kind`."""

    index: int
    name: str
    hint: str
    kind: str | None = None  # the event's type, for a field; None for an event type

    @property
    def message(self) -> str:
        what = f"field `{self.name}` in a `{self.kind}` event" if self.kind else f"event type `{self.name}`"
        return f"event {self.index}: unknown {what} (did you mean `{self.hint}`?)"


def name_warnings(index: int, obj: dict) -> list[NameWarning]:
    """The probable typos among the names of one recorded event object (its type, or its fields)."""
    kind = obj.get("event")
    if not isinstance(kind, str):
        return []
    fields = KNOWN_FIELDS.get(kind)
    if fields is None:
        hint = type_hint(kind)
        return [NameWarning(index, kind, hint)] if hint else []
    if obj.keys() <= fields:
        return []
    found = []
    for name in obj:
        if name not in fields:
            hint = field_hint(kind, name)
            if hint:
                found.append(NameWarning(index, name, hint, kind))
    return found
