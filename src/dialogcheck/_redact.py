"""Mask credentials before text is written anywhere.

Servers quote what they were sent: a gateway's 401 repeats the key, a 500 page
echoes the request headers (or the password of the address it was sent to), an
address carries `user:password@`, a judge's answer may echo its key. Two layers:

- the process's *held* secrets: every credential dialogcheck reads (API keys,
  `extra_headers` values, URL passwords and the Basic credential made of them)
  is handed to `hold` where it is read, and the write points (the atomic file
  writer, the answer cache, the CLI's printers) pass all they write through
  `mask`, so no caller has to remember;
- `redact`, for error text about a peer: the held secrets, and also auth
  header values, bearer tokens, URL passwords and key-shaped words dialogcheck
  was never told about.
"""

from __future__ import annotations

import base64
import html
import re
import threading
from collections.abc import Iterable
from typing import overload
from urllib.parse import unquote, urlsplit

import orjson

MASK = "[redacted]"
#: Known secret values shorter than this are not masked (they would mask ordinary words).
MIN_SECRET_CHARS = 8

#: Every form of every held secret, longest first (a secret inside a longer one is masked by the longer one).
_held: tuple[str, ...] = ()
_held_bytes: tuple[bytes, ...] = ()
_holding = threading.Lock()

_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*):[^\s/@]+@")
#: A credential after an auth scheme as headers write it; it holds a digit or punctuation, so "Basic support" stays.
_AUTH_SCHEME = re.compile(r"\b(?P<scheme>Bearer|bearer|Basic|Token|Digest)(?P<gap>\s+)(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{6,}")
_HEADER_VALUE = re.compile(
    r"(?P<head>\b(?:proxy-authorization|authorization|x-api-key|api-key|x-goog-api-key|api_key|apikey|access_token|auth_token)"
    r"['\"]?\s*[:=]\s*['\"]?)(?!(?:Bearer|Basic|Token|Digest)\b|\[redacted\])[^\s'\",;}&]+",
    re.IGNORECASE,
)
#: Shapes of common provider keys, for a key dialogcheck was never told about (one a server made up, say).
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})"
)


def _written_forms(secret: str) -> set[str]:
    """The secret as the writers may spell it: as is, escaped in JSON, in a Python repr, in HTML and XML."""
    xml_attribute = secret.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return {
        secret,
        orjson.dumps(secret).decode()[1:-1],
        repr(secret)[1:-1],
        html.escape(secret, quote=True),
        html.escape(secret, quote=False),
        xml_attribute,
    }


def hold(*secrets: str | None) -> None:
    """Remember credentials this process holds: from now on every write point masks them."""
    global _held, _held_bytes
    forms = {form for secret in secrets if secret for form in _written_forms(secret) if len(form) >= MIN_SECRET_CHARS}
    if not forms - set(_held):
        return
    with _holding:
        _held = tuple(sorted(forms | set(_held), key=len, reverse=True))
        _held_bytes = tuple(form.encode("utf-8", "surrogatepass") for form in _held)


def hold_url(url: str | None) -> None:
    """Hold the password of a `user:password@` address: as written, decoded, and in the Basic credential sent for it."""
    try:
        parts = urlsplit(url) if url else None
        password = parts.password if parts else None
    except ValueError:
        return
    if not password or parts is None:  # a password comes only with parts
        return
    user, secret = unquote(parts.username or ""), unquote(password)
    basic = [f"{user}:{secret}".encode(encoding, "strict") for encoding in ("utf-8", "latin-1") if _encodes(f"{user}:{secret}", encoding)]
    hold(password, secret, *(base64.b64encode(credential).decode() for credential in basic))


def _encodes(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def held() -> tuple[str, ...]:
    """Every form of every held secret, longest first."""
    return _held


def mask(text: str) -> str:
    """`text` with every held secret masked (the same text, not a copy, when none is in it)."""
    for form in _held:
        if form in text:
            text = text.replace(form, MASK)
    return text


def mask_bytes(data: bytes) -> bytes:
    """`mask` for UTF-8 bytes already rendered (a JSON document, a page)."""
    for form in _held_bytes:
        if form in data:
            data = data.replace(form, MASK.encode())
    return data


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with held and given secret values, auth header values, bearer tokens, URL passwords and key-shaped words masked."""
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    text = redact_url(mask(text))
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group('scheme')}{m.group('gap')}{MASK}", text)
    text = _HEADER_VALUE.sub(lambda m: f"{m.group('head')}{MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)


@overload
def redact_url(url: str) -> str: ...


@overload
def redact_url(url: str | None) -> str | None: ...


def redact_url(url: str | None) -> str | None:
    """An address without the password of its `user:password@` part."""
    return None if url is None else _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:{MASK}@", url)
