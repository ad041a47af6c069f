"""`_redact.redact`: what servers quote back loses its credentials, and ordinary text is left alone."""

from __future__ import annotations

import pytest

from dialogcheck._redact import MASK, redact, redact_url
from dialogcheck.llm.base import ChatMessage, ChatRequest

KEY = "sk-planted-0123456789abcdef0123"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Incorrect API key provided: {KEY}.", f"Incorrect API key provided: {MASK}."),
        ("Authorization: Bearer abc.def-ghi", f"Authorization: Bearer {MASK}"),
        ("authorization: Basic Ym90OnB3LXBsYW50ZWQ=", f"authorization: Basic {MASK}"),
        ('{"x-api-key": "ant-123456789"}', f'{{"x-api-key": "{MASK}"}}'),
        ("POST http://bot:pw-planted@127.0.0.1:8080/agent: HTTP 500", f"POST http://bot:{MASK}@127.0.0.1:8080/agent: HTTP 500"),
        ("GET https://h/x?api_key=abcdef123&q=1", f"GET https://h/x?api_key={MASK}&q=1"),
        ("key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA leaked", f"key {MASK} leaked"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123", f"token {MASK}"),
    ],
)
def test_credentials_are_masked(text, expected):
    assert redact(text) == expected


def test_known_secrets_are_masked_wherever_they_stand():
    assert redact("echo: xxplanted-valuexx", ["planted-value"]) == f"echo: xx{MASK}xx"
    assert redact("short abc", ["abc"]) == "short abc"  # too short to mask safely


@pytest.mark.parametrize(
    "text",
    [
        "the agent answered HTTP 500 Internal Server Error: {\"error\": \"boom\"}",
        "POST http://127.0.0.1:8080/agent: no answer within 1 s (timed out)",
        "no valid answer after 3 attempts: the answer holds no JSON object",
        "A skeptical customer wants a bearer bond, basic support and a token gesture.",
        "https://example.com:8443/v1",
    ],
)
def test_ordinary_error_text_is_unchanged(text):
    assert redact(text) == text


def test_the_cache_identity_keeps_no_url_password():
    request = ChatRequest("openai", "m", (ChatMessage("user", "hi"),), endpoint="https://user:pw-planted@gw.example/v1")
    assert b"pw-planted" not in request.identity()
    assert redact_url("https://gw.example/v1") == "https://gw.example/v1"
