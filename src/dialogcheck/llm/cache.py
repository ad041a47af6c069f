"""The disk cache is just another `ChatClient`: a rerun of the same requests makes no calls and gets the same answers.

The key is the sha256 of the whole request (`ChatRequest.identity()`); each
entry keeps that request beside the answer, so a folder of entries can be
read and audited. A file that cannot be read is a miss, and is rewritten; so is
an entry that is not a regular file (a named pipe, a folder) or is too large.
An entry holds no credential (held ones are masked, header values are only
hashed), and an entry that is a symbolic link is refused, never followed: a
cache folder committed to a repository could otherwise point a read at any
file, or a write anywhere.

Under strict replay (`replay=True`, `--replay`) every call must be answered
from the folder: a miss sends nothing and is an `LLMError` that names the
call and the first message that differs from the nearest cached request, so
a rerun that would quietly call the model again stops and says why.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import orjson

from .._paths import read_regular
from .._redact import mask, mask_bytes
from .._shown import counted
from .base import ChatClient, ChatRequest, ChatResponse, LLMError, Usage


def cache_key(request: ChatRequest) -> str:
    return hashlib.sha256(request.identity()).hexdigest()


class ReplayMiss(LLMError):
    """Strict replay found no cached answer for a request; nothing was sent."""


class CachedClient:
    """Answers from `folder` when it can, else from `inner` (and stores the answer); under `replay`, only from `folder`."""

    def __init__(self, inner: ChatClient, folder: str | Path, enabled: bool = True, replay: bool = False):
        self.inner = inner
        self.folder = Path(folder)
        self.enabled = enabled
        self.replay = replay
        self.hits = 0
        self.misses = 0

    def path_for(self, request: ChatRequest) -> Path:
        key = cache_key(request)
        return self.folder / key[:2] / f"{key}.json"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if not self.enabled:
            return await self.inner.complete(request)
        path = self.path_for(request)
        stored = _read(path, request)
        if stored is not None:
            self.hits += 1
            return stored
        self.misses += 1
        if self.replay:
            raise ReplayMiss(replay_miss(request, self.folder))
        response = await self.inner.complete(request)
        _write(path, {"request": orjson.loads(request.identity()), "response": _dump(response)})
        return response


#: How much of a differing message a replay miss quotes, either side of where it first differs.
QUOTE = 60


def replay_miss(request: ChatRequest, folder: Path) -> str:
    """What a replay miss says: the call, and how it differs from the nearest request the folder holds."""
    call = f"--replay: no cached answer for the call to {request.describe()} (key {cache_key(request)[:12]}) in {folder}; nothing was sent"
    wanted = orjson.loads(request.identity())
    nearest = _nearest(wanted, _stored_requests(folder))
    if nearest is None:
        return f"{call}: the cache holds no answer of this model"
    return f"{call}: {_first_difference(wanted, nearest)}"


def _stored_requests(folder: Path) -> list[dict[str, Any]]:
    """The requests of every readable entry of the cache folder (links and broken entries are passed over)."""
    found = []
    for path in sorted(folder.glob("*/*.json")):
        try:
            if path.is_symlink() or path.parent.is_symlink():
                continue
            entry = orjson.loads(_read_bytes(path))
            if isinstance(entry, dict) and isinstance(entry.get("request"), dict):
                found.append(entry["request"])
        except (OSError, ValueError):
            continue
    return found


def _messages(identity: dict[str, Any]) -> list[list[str]]:
    return [list(m) for m in identity.get("messages") or ()]


def _nearest(wanted: dict[str, Any], stored: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The stored request of the same provider, endpoint and model that shares the most leading messages."""
    same = [s for s in stored if all(s.get(k) == wanted.get(k) for k in ("provider", "endpoint", "model"))]

    def shared(candidate: dict[str, Any]) -> tuple[int, int]:
        ours, theirs = _messages(wanted), _messages(candidate)
        common = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        prefix = 0
        if common < min(len(ours), len(theirs)):
            a, b = ours[common][1], theirs[common][1]
            prefix = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return common, prefix

    return max(same, key=shared, default=None)


def _first_difference(wanted: dict[str, Any], cached: dict[str, Any]) -> str:
    """Where the request first differs from the cached one: a message (quoted around the spot), or a setting.

    The messages are compared masked, as the cache stores them (so the spot is counted in the masked text): a
    quote cut around the spot then never holds part of a held secret.
    """
    ours, theirs = ([[mask(part) if isinstance(part, str) else part for part in m] for m in _messages(side)] for side in (wanted, cached))
    for number, (a, b) in enumerate(zip(ours, theirs), 1):
        if a != b:
            if a[0] != b[0]:
                return f"message {number} is from the {a[0]}, the nearest cached request's from the {b[0]}"
            at = next((i for i, (x, y) in enumerate(zip(a[1], b[1])) if x != y), min(len(a[1]), len(b[1])))
            return (
                f"message {number} ({a[0]}) differs from the nearest cached request's at character {at + 1}: "
                f"now {_quote(a[1], at)}, cached {_quote(b[1], at)}"
            )
    if len(ours) != len(theirs):
        return f"it has {counted(len(ours), 'message')}, the nearest cached request {len(theirs):,}"
    differing = sorted(k for k in set(wanted) | set(cached) if k != "messages" and wanted.get(k) != cached.get(k))
    return f"its messages match the nearest cached request, but not its {', '.join(differing)}"


def _quote(text: str, at: int) -> str:
    start = max(at - QUOTE, 0)
    return repr(("…" if start else "") + text[start : at + QUOTE] + ("…" if at + QUOTE < len(text) else ""))


def _dump(response: ChatResponse) -> dict[str, Any]:
    entry = {"text": response.text, "model": response.model, "usage": response.usage.to_dict(), "attempts": response.attempts}
    return entry | {"truncated": True} if response.truncated else entry


def _refuse_links(path: Path) -> None:
    """`LLMError` when the entry or its folder is a symbolic link."""
    for place in (path.parent, path):
        try:
            linked = stat.S_ISLNK(os.lstat(place).st_mode)
        except OSError:
            return  # not there yet: nothing to follow
        if linked:
            raise LLMError(f"the answer cache entry {place} is a symbolic link: refused, not followed (delete it, or pass --no-cache)")


#: The largest entry read: a request holds its whole prompt (the judge's is up to `max_prompt_chars`), never more.
MAX_ENTRY_BYTES = 64 * 1024 * 1024


def _read_bytes(path: Path) -> bytes:
    """The entry's bytes; `OSError` (a miss) for anything but a regular file of at most `MAX_ENTRY_BYTES`.

    Opening never follows a link, even one made after `_refuse_links` looked, and never waits: a named pipe
    committed as an entry would block the read until something wrote to it.
    """
    return read_regular(path, MAX_ENTRY_BYTES, follow_links=False)


def _read(path: Path, request: ChatRequest) -> ChatResponse | None:
    """The stored answer, or None when there is none or it is unreadable or for another request."""
    _refuse_links(path)
    try:
        entry = orjson.loads(_read_bytes(path))
        if orjson.dumps(entry["request"], option=orjson.OPT_SORT_KEYS) != request.identity():
            return None
        answer = entry["response"]
        usage = answer.get("usage") or {}
        return ChatResponse(
            text=str(answer["text"]),
            model=str(answer["model"]),
            usage=Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0), usage.get("cost")),
            cached=True,
            attempts=int(answer.get("attempts", 1)),
            truncated=answer.get("truncated") is True,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write(path: Path, entry: dict[str, Any]) -> None:
    """Write through a temporary file and `os.replace`, so a reader never sees half an entry."""
    _refuse_links(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:8]}-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(mask_bytes(orjson.dumps(entry, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
