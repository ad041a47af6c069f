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
