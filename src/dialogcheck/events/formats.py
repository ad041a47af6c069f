"""What the files of the formats `import` reads look like, told from one item of a file.

Here, below both readers, so the native reader can say a file it refuses is
in another format (and which `--input-format` reads it), as `import` does.
"""

from __future__ import annotations

from typing import Any

#: What each format's files hold, as a message names it.
FORMAT_NAMES = {
    "rasa-tracker": "native tracker events",
    "rasa-proto": "Mantle ProtoJSON events",
    "openai": "OpenAI chat messages",
    "tau-bench": "tau-bench trajectories",
    "tau2": "tau2-bench simulation results",
    "otlp": "OpenTelemetry traces (OTLP/JSON)",
}
#: The format of native events (docs/concepts.md, the conversation record), which `check` reads without `--input-format`.
NATIVE_FORMAT = "rasa-tracker"
#: Keys of a tau2 simulation run that an OpenAI conversation object does not have.
_TAU2_RUN_KEYS = {"termination_reason", "reward_info", "task_id", "trial"}
#: Keys of a ProtoJSON event envelope that a native event does not have.
_PROTO_KEYS = {"sequence", "event_id", "deployment_environment"}


def guess_format(item: Any) -> str | None:
    """The format one item of a file (its first is enough) is written in, or None when it looks like none of them."""
    if isinstance(item, list):
        first = item[0] if item else None
        return guess_format(first) if isinstance(first, dict) and ("role" in first or "event" in first) else None
    if not isinstance(item, dict):
        return None
    if "resourceSpans" in item:
        return "otlp"
    if "traj" in item:
        return "tau-bench"
    if "simulations" in item or ("messages" in item and _TAU2_RUN_KEYS & item.keys()):
        return "tau2"
    if "messages" in item or "role" in item:
        return "openai"
    if "event" in item:
        return "rasa-tracker"
    if _PROTO_KEYS & item.keys():
        return "rasa-proto"
    events = item.get("events")
    first = next((event for event in events if isinstance(event, dict)), None) if isinstance(events, list) else None
    return guess_format(first) if first is not None and ("event" in first or _PROTO_KEYS & first.keys()) else None
