"""Where a conversation imported from OpenTelemetry traces came from, kept in its events' metadata.

The `otlp` importer writes each event's `trace_id` and `span_id` (the span it
came from) and, on the first event, the `root_span_id` of its trace: verdicts
exported as telemetry are parented to that span, so they show up beside the
conversation in the tracing backend. A native file keeps them like any metadata.
"""

from __future__ import annotations

from .model import Conversation

TRACE_ID, SPAN_ID, ROOT_SPAN_ID = "trace_id", "span_id", "root_span_id"


def trace_context(conversation: Conversation) -> tuple[str, str] | None:
    """(trace id, root span id) of the trace the conversation starts in, or None when it was not read from one."""
    if not conversation.events:
        return None
    metadata = conversation.events[0].metadata
    trace_id, root = metadata.get(TRACE_ID), metadata.get(ROOT_SPAN_ID)
    return (trace_id, root) if isinstance(trace_id, str) and isinstance(root, str) else None
