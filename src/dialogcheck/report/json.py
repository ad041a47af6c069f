"""`--format json`: one JSON document on stdout, in the codec's shapes."""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import LoadError, error_document


def dumps(document: Any) -> str:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


def load_error_document(error: LoadError) -> dict[str, Any]:
    """`{message, file, line, column}` of the first problem, every problem under `problems` (`errors.error_document`)."""
    return error_document(error)["error"]


def render_load_error(error: LoadError) -> str:
    """`{"error": {message, file, line, column, problems}}`."""
    return dumps(error_document(error))


# `check --format json` of several conversations, written as they are judged (flat memory however many):
# `BATCH_OPEN`, each conversation's line (the codec's) joined by `BATCH_SEPARATOR`, then `batch_close`
# (or `batch_close_with_error` at bad input met after the first). One conversation is one indented document.

BATCH_OPEN = b'{"conversations": [\n'
BATCH_SEPARATOR = b",\n"


def _warnings_member(warnings: list[dict[str, Any]]) -> bytes:
    """`, "warnings": [...]` closing the document when typos were met; nothing otherwise."""
    return b', "warnings": ' + orjson.dumps(warnings) if warnings else b""


def batch_close(summary: dict[str, Any], warnings: list[dict[str, Any]]) -> bytes:
    return b'\n], "summary": ' + orjson.dumps(summary) + _warnings_member(warnings) + b"}\n"


def batch_close_with_error(error: dict[str, Any], warnings: list[dict[str, Any]]) -> bytes:
    """The end of a batch document begun, closed with the error met after it (`{message, file, line, column}`)."""
    return b'\n], "error": ' + orjson.dumps(error) + _warnings_member(warnings) + b"}\n"


def one_conversation(document: dict[str, Any], warnings: list[dict[str, Any]]) -> str:
    """The document of a check of one conversation: its own, indented, with the typos met under `warnings`."""
    return dumps({**document, "warnings": warnings} if warnings else document)
