"""The schemas the judge's answers must follow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: `criterion` names the id it answers (answers are matched by id, never by position); `evidence` cites the
#: turns and events it relied on; INCONCLUSIVE says the conversation shows it neither way.
CRITERION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "criterion": {"type": "string"},
        "verdict": {"type": "string", "enum": ["PASS", "FAIL", "INCONCLUSIVE"]},
        "rationale": {"type": "string"},
        "evidence": {
            "type": "object",
            "properties": {
                "turns": {"type": "array", "items": {"type": "integer"}},
                "events": {"type": "array", "items": {"type": "integer"}},
            },
        },
    },
    "required": ["criterion", "verdict", "rationale", "evidence"],
}


#: The localiser's answer (`--blame llm`): who erred, at which turn and event, and why; `unknown` is allowed.
BLAME_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "actor": {"type": "string", "enum": ["agent", "user", "environment", "unknown"]},
        "turn": {"type": ["integer", "null"]},
        "event": {"type": ["integer", "null"]},
        "reason": {"type": "string"},
    },
    "required": ["actor", "turn", "event", "reason"],
}


def metrics_schema(metrics: tuple[str, ...]) -> dict[str, Any]:
    """The answer schema of a metrics request: task_completion pass/fail, the others 1 to 5."""
    properties: dict[str, Any] = {}
    for name in metrics:
        if name == "task_completion":
            value: dict[str, Any] = {"passed": {"type": "boolean"}, "reasoning": {"type": "string"}}
            required = ["passed", "reasoning"]
        else:
            value = {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "reasoning": {"type": "string"}}
            required = ["score", "reasoning"]
        properties[name] = {"type": "object", "properties": value, "required": required}
    return {"type": "object", "properties": properties, "required": list(metrics)}
