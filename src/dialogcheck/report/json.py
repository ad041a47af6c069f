"""`--format json`: one JSON document on stdout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ..errors import LoadError
from ..evaluate import ConversationResult
from .data import check_document


def dumps(document: Any) -> str:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


def render_check(results: Sequence[ConversationResult]) -> str:
    return dumps(check_document(results))


def render_load_error(error: LoadError) -> str:
    """`{"error": {message, file, line, column}}` for the first problem, every problem under `problems`."""
    first = error.problems[0].to_dict()
    return dumps({"error": {**first, "problems": [p.to_dict() for p in error.problems]}})
