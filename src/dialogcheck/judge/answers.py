"""Read a model's JSON answer: find the object, parse it, validate it against a schema.

Models wrap JSON in code fences or add a sentence around it; the object is
taken from between the first `{` and the last `}`. Anything that still does
not parse or validate is a `MalformedAnswer`, which the judge retries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

CRITERION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["PASS", "FAIL"]},
        "rationale": {"type": "string"},
    },
    "required": ["verdict", "rationale"],
}


class MalformedAnswer(ValueError):
    """The answer is not the JSON object the schema asks for; says what is wrong."""


def parse_json_answer(text: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise MalformedAnswer("the answer holds no JSON object")
    try:
        answer = orjson.loads(text[start : end + 1])
    except orjson.JSONDecodeError as err:
        raise MalformedAnswer(f"the answer is not valid JSON: {err.msg}") from None
    import jsonschema

    try:
        jsonschema.validate(answer, schema)
    except jsonschema.ValidationError as err:
        path = ".".join(str(p) for p in err.absolute_path) or "the answer"
        raise MalformedAnswer(f"{path}: {err.message}") from None
    return answer


def metrics_schema(metrics: tuple[str, ...]) -> dict[str, Any]:
    """The answer schema of a metrics request: task_completion pass/fail, the others 1 to 5."""
    properties: dict[str, Any] = {}
    for name in metrics:
        if name == "task_completion":
            value = {"passed": {"type": "boolean"}, "reasoning": {"type": "string"}}
            required = ["passed", "reasoning"]
        else:
            value = {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "reasoning": {"type": "string"}}
            required = ["score", "reasoning"]
        properties[name] = {"type": "object", "properties": value, "required": required}
    return {"type": "object", "properties": properties, "required": list(metrics)}
