"""Mask credentials in error text before it is written anywhere.

Servers quote what they were sent: a gateway's 401 repeats the key, a 500 page
echoes the request headers, an address carries `user:password@`. Error
messages end up in run files, summaries, reports and logs, so every place that
words an error about a peer passes it through `redact` first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "[redacted]"
#: Known secret values shorter than this are not masked (they would mask ordinary words).
MIN_SECRET_CHARS = 8

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


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with the given secret values, auth header values, bearer tokens, URL passwords and key-shaped words masked."""
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    text = redact_url(text)
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group('scheme')}{m.group('gap')}{MASK}", text)
    text = _HEADER_VALUE.sub(lambda m: f"{m.group('head')}{MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)


def redact_url(url: str | None) -> str | None:
    """An address without the password of its `user:password@` part."""
    return None if url is None else _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:{MASK}@", url)
