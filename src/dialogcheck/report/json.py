"""`--format json`: one JSON document on stdout, in the codec's shapes."""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import LoadError


def dumps(document: Any) -> str:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


def load_error_document(error: LoadError) -> dict[str, Any]:
    """`{message, file, line, column}` of the first problem, every problem under `problems`."""
    return {**error.problems[0].to_dict(), "problems": [p.to_dict() for p in error.problems]}


def render_load_error(error: LoadError) -> str:
    """`{"error": {message, file, line, column, problems}}`."""
    return dumps({"error": load_error_document(error)})
