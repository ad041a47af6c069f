"""`_redact.redact`: what servers quote back loses its credentials, and ordinary text is left alone."""

from __future__ import annotations

import base64
import html
import xml.etree.ElementTree as ElementTree

import orjson
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


def test_a_held_url_password_is_masked_as_written_decoded_and_as_its_basic_credential():
    from dialogcheck._redact import hold_url, mask, mask_bytes

    hold_url("http://bot:pw%21held-0a1b2c3d@agent.example:8080/chat")
    basic = base64.b64encode(b"bot:pw!held-0a1b2c3d").decode()
    text = f"401: password pw!held-0a1b2c3d (sent as Basic {basic}) for http://bot:pw%21held-0a1b2c3d@agent.example:8080/chat"
    assert mask(text) == f"401: password {MASK} (sent as Basic {MASK}) for http://bot:{MASK}@agent.example:8080/chat"
    assert mask_bytes(text.encode()) == mask(text).encode()


def test_a_held_secret_is_masked_in_the_forms_json_html_and_xml_give_it():
    from dialogcheck._redact import hold, mask

    secret = 'k"e<y>&\\held-9f8e7d'
    hold(secret)
    written = {  # the text a writer makes -> how the secret is spelt in it
        orjson.dumps({"detail": secret}).decode(): 'k\\"e<y>&\\\\held-9f8e7d',
        html.escape(secret): "k&quot;e&lt;y&gt;&amp;\\held-9f8e7d",
        ElementTree.tostring(ElementTree.Element("failure", message=secret), encoding="unicode"): "k&quot;e&lt;y&gt;&amp;\\held-9f8e7d",
        repr(secret): 'k"e<y>&\\\\held-9f8e7d',
    }
    for text, spelt in written.items():
        assert spelt in text and mask(text) == text.replace(spelt, MASK)


def test_text_without_a_held_secret_is_returned_as_it_is():
    from dialogcheck._redact import hold, mask

    hold("held-value-that-is-elsewhere", None, "", "short")
    text = "nothing secret here " * 100
    assert mask(text) is text
    assert mask("short and short") == "short and short"  # shorter than MIN_SECRET_CHARS: never held
