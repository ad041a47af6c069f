"""How text from outside (an agent's message, an error it raised, a judge's rationale) is shown in reports.

Three rules, one place:

- `cut`: one message, error or check detail contributes at most `TEXT_LIMIT`
  characters to a report, and says where it was cut. A 10 MB reply made a
  91 MB results folder, and a report nobody can open; the whole text stays in
  the run's events file.
- `visible`: in text output (terminal, `summary.txt`, `run_N.txt`) control
  characters and line breaks are written as escapes (`\\r\\n`, `\\x1b`), so an
  agent cannot forge a line (`\\r\\nPASS  everything`) or drive the terminal.
  JSON, JUnit and HTML escape by their own formats.
- `counted`: a count in a message says `1 file` and `1,200 files` (JSON keeps plain numbers).
"""

from __future__ import annotations

import re

from ._redact import mask

#: Characters of one piece of outside text a report keeps (the cut notice included).
TEXT_LIMIT = 10_000

#: C0 and C1 controls, DEL, Unicode line and paragraph separators, and the bidirectional
#: controls that reorder what a terminal shows.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def cut(text: str, whole_in: str | None = None, limit: int = TEXT_LIMIT) -> str:
    """`text` when it has at most `limit` characters; else its start and a notice, `limit` characters in all.

    Cutting what was already cut changes nothing, so every renderer may apply it. The whole text is masked
    before it is cut: a cut through a held secret would leave its head, which no write point's `mask` knows.
    """
    if len(text) <= limit:
        return text
    text = mask(text)
    if len(text) <= limit:
        return text
    where = f", whole text in {whole_in}" if whole_in else ""
    notice = f"… [cut from {len(text):,} characters{where}]"
    return text[: max(limit - len(notice), 0)] + notice


def clip(text: str, limit: int, keep: int | None = None) -> str:
    """`text` when it has at most `limit` characters, else its first `keep` (default `limit - 1`) and `…`: a quote
    of outside text inside a one-line message. Held secrets are masked before the cut, as in `cut`."""
    if len(text) <= limit:
        return text
    text = mask(text)
    if len(text) <= limit:
        return text
    return text[: limit - 1 if keep is None else keep] + "…"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 file`, `2 files`, `1,200 files`: a count as text output shows it, the noun singular for exactly one and
    the number with thousands separators. `plural` is for a noun that does not add an `s` (`criteria`)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def listed(names: list[str], limit: int) -> str:
    """The first `limit` names joined by commas, and how many were left out ("a, b and 7 more"): a cut list
    always says what it cut."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


def visible(text: str) -> str:
    """`text` with every control character written as an escape (the same text when there is none)."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """Outside text as text output shows it: cut to `TEXT_LIMIT`, its control characters visible."""
    return visible(cut(text))
