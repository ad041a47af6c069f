"""Verdicts as telemetry: the checks of a result as GenAI evaluation events, or as OpenInference session evaluations.

One `Evaluation` per check (`ConversationResult.checks`: assertions, SOP
steps, criteria), rendered two ways:

- `otlp_logs_line`: an OTLP/JSON logs document holding one
  `gen_ai.evaluation.result` event per check (GenAI semantic conventions:
  `gen_ai.evaluation.name`, `.score.label` pass/fail/skip/error,
  `.score.value` 1 or 0 for pass or fail, `.explanation`), with
  `gen_ai.conversation.id`; when the conversation was imported from traces,
  the event carries its trace id and root span id, so a backend shows it on
  that trace.
- `openinference_spans_line`: an OTLP/JSON traces document holding one span a
  conversation (its `session.id`, parented to the root span of its trace when
  known) whose attributes are `session.evaluations.N.evaluation.{name, label,
  score, explanation, annotator_kind}`: `CODE` for deterministic checks, `LLM`
  for criteria and judged SOP steps. Phoenix loads OTLP traces as they are.

Both are one line of OTLP/JSON a conversation (ids in hex, times as strings
of nanoseconds), the layout of the Collector's file exporter; `emit_sdk`
hands the same events, masked as the files are, to the OpenTelemetry SDK, for `--otlp-endpoint`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from .._redact import mask
from ..checks.base import Outcome
from ..results.model import CheckKind, ConversationResult

EVENT_NAME = "gen_ai.evaluation.result"
SCOPE = {"name": "dialogcheck"}
_SCORE = {Outcome.PASS: 1.0, Outcome.FAIL: 0.0}
#: SOP evaluators decided by the LLM judge (the others are deterministic code).
_JUDGED_STEP_KEYS = {"llm_judge"}


@dataclass(frozen=True)
class Evaluation:
    """One check's verdict, with what places it: the conversation, and the trace it was read from."""

    name: str
    label: str
    score: float | None
    explanation: str
    annotator: str  # "CODE" or "LLM"
    kind: str
    conversation_id: str | None
    trace: tuple[str, str] | None


def evaluations(result: ConversationResult) -> Iterator[Evaluation]:
    """Every check of `result`, in report order, as an evaluation."""
    for line in result.checks():
        judged = line.kind is CheckKind.CRITERION or (line.kind is CheckKind.SOP and line.key in _JUDGED_STEP_KEYS)
        yield Evaluation(
            name=line.title, label=line.outcome.value, score=_SCORE.get(line.outcome), explanation=line.detail,
            annotator="LLM" if judged else "CODE", kind=line.kind.value, conversation_id=result.conversation_id, trace=result.trace,
        )


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def _attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in pairs.items() if value is not None]


def event_attributes(evaluation: Evaluation, subject: str) -> dict[str, Any]:
    """The attributes of one `gen_ai.evaluation.result` event (None values are left out)."""
    return {
        "gen_ai.evaluation.name": evaluation.name,
        "gen_ai.evaluation.score.label": evaluation.label,
        "gen_ai.evaluation.score.value": evaluation.score,
        "gen_ai.evaluation.explanation": evaluation.explanation,
        "gen_ai.conversation.id": evaluation.conversation_id,
        "dialogcheck.check.kind": evaluation.kind,
        "dialogcheck.subject": subject,
    }


def _resource() -> dict[str, Any]:
    return {"attributes": _attributes({"service.name": "dialogcheck"})}


def otlp_logs_line(result: ConversationResult, now_ns: int) -> bytes:
    """One OTLP/JSON logs document (a line) with a `gen_ai.evaluation.result` event per check of `result`."""
    records = []
    for evaluation in evaluations(result):
        record: dict[str, Any] = {
            "timeUnixNano": str(now_ns), "observedTimeUnixNano": str(now_ns), "eventName": EVENT_NAME,
            "attributes": _attributes({"event.name": EVENT_NAME, **event_attributes(evaluation, result.subject)}),
        }
        if evaluation.trace is not None:
            record.update(traceId=evaluation.trace[0], spanId=evaluation.trace[1], flags=1)
        records.append(record)
    document = {"resourceLogs": [{"resource": _resource(), "scopeLogs": [{"scope": SCOPE, "logRecords": records}]}]}
    return orjson.dumps(document) + b"\n"


def _span_id(result: ConversationResult) -> str:
    """A span id for the evaluations span, stable for a conversation and check subject (a re-run gives the same)."""
    seed = f"{result.trace}|{result.conversation_id}|{result.source}|{result.subject}".encode()
    return hashlib.sha256(seed).hexdigest()[:16]


def _trace_id(result: ConversationResult) -> str:
    if result.trace is not None:
        return result.trace[0]
    return hashlib.sha256(f"{result.conversation_id}|{result.source}".encode()).hexdigest()[:32]


def openinference_spans_line(result: ConversationResult, now_ns: int) -> bytes:
    """One OTLP/JSON traces document (a line): a span carrying the checks of `result` as session evaluations."""
    attributes: dict[str, Any] = {"openinference.span.kind": "EVALUATOR", "session.id": result.conversation_id or result.source}
    for n, evaluation in enumerate(evaluations(result)):
        prefix = f"session.evaluations.{n}.evaluation"
        attributes.update({
            f"{prefix}.name": evaluation.name, f"{prefix}.label": evaluation.label, f"{prefix}.score": evaluation.score,
            f"{prefix}.explanation": evaluation.explanation, f"{prefix}.annotator_kind": evaluation.annotator,
        })
    span: dict[str, Any] = {
        "traceId": _trace_id(result), "spanId": _span_id(result), "name": f"dialogcheck {result.subject}", "kind": 1,
        "startTimeUnixNano": str(now_ns), "endTimeUnixNano": str(now_ns), "attributes": _attributes(attributes),
        "status": {"code": 1 if result.verdict is Outcome.PASS else 2},
    }
    if result.trace is not None:
        span["parentSpanId"] = result.trace[1]
    resource = {"attributes": _attributes({"service.name": "dialogcheck", "openinference.project.name": "dialogcheck"})}
    document = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": SCOPE, "spans": [span]}]}]}
    return orjson.dumps(document) + b"\n"


def emit_sdk(logger: Any, result: ConversationResult) -> None:
    """Hand every check of `result` to an OpenTelemetry SDK logger as a `gen_ai.evaluation.result` event.

    The SDK sends what it is handed, past the writers that mask held credentials, so the text is masked here.
    """
    from opentelemetry import trace
    from opentelemetry._logs import LogRecord
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    for evaluation in evaluations(result):
        context = None
        if evaluation.trace is not None:
            parent = SpanContext(int(evaluation.trace[0], 16), int(evaluation.trace[1], 16), is_remote=True, trace_flags=TraceFlags(1))
            context = trace.set_span_in_context(NonRecordingSpan(parent))
        attributes = {k: mask(v) if isinstance(v, str) else v for k, v in event_attributes(evaluation, result.subject).items() if v is not None}
        logger.emit(LogRecord(context=context, event_name=EVENT_NAME, attributes=attributes))
