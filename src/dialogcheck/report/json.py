"""`--format json`: one JSON document on stdout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ..errors import LoadError
from ..evaluate import ConversationResult
from .data import check_document, conversation_dict, tally


def dumps(document: Any) -> str:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


def render_check(results: Sequence[ConversationResult]) -> str:
    return dumps(check_document(results))


def render_load_error(error: LoadError) -> str:
    """`{"error": {message, file, line, column}}` for the first problem, every problem under `problems`."""
    first = error.problems[0].to_dict()
    return dumps({"error": {**first, "problems": [p.to_dict() for p in error.problems]}})


def conversation_json(result: ConversationResult) -> str:
    """One conversation of a streamed `{"conversations": [...]}` document."""
    return orjson.dumps(conversation_dict(result, with_source=True)).decode()


def tally_json(verdicts) -> str:
    return orjson.dumps(tally(verdicts)).decode()
