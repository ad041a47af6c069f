"""The disk cache is just another `ChatClient`: a rerun of the same requests makes no calls and gets the same answers.

The key is the sha256 of the whole request (`ChatRequest.identity()`); each
entry keeps that request beside the answer, so a folder of entries can be
read and audited. A file that cannot be read is a miss, and is rewritten.
An entry holds no credential (held ones are masked, header values are only
hashed), and an entry that is a symbolic link is refused, never followed: a
cache folder committed to a repository could otherwise point a read at any
file, or a write anywhere.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import orjson

from .._redact import mask_bytes
from .base import ChatClient, ChatRequest, ChatResponse, LLMError, Usage


def cache_key(request: ChatRequest) -> str:
    return hashlib.sha256(request.identity()).hexdigest()


class CachedClient:
    """Answers from `folder` when it can, else from `inner` (and stores the answer)."""

    def __init__(self, inner: ChatClient, folder: str | Path, enabled: bool = True):
        self.inner = inner
        self.folder = Path(folder)
        self.enabled = enabled
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
        response = await self.inner.complete(request)
        _write(path, {"request": orjson.loads(request.identity()), "response": _dump(response)})
        return response


def _dump(response: ChatResponse) -> dict[str, Any]:
    return {"text": response.text, "model": response.model, "usage": response.usage.to_dict(), "attempts": response.attempts}


def _refuse_links(path: Path) -> None:
    """`LLMError` when the entry or its folder is a symbolic link."""
    for place in (path.parent, path):
        try:
            linked = stat.S_ISLNK(os.lstat(place).st_mode)
        except OSError:
            return  # not there yet: nothing to follow
        if linked:
            raise LLMError(f"the answer cache entry {place} is a symbolic link: refused, not followed (delete it, or pass --no-cache)")


def _read_bytes(path: Path) -> bytes:
    """The entry's bytes; opening never follows a link, even one made after `_refuse_links` looked."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(handle, "rb") as file:
        return file.read()


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
