"""The spans of an OTLP/JSON document, decoded into plain records that remember where they came from.

OTLP/JSON is what the OpenTelemetry Collector's file exporter writes (one
`{"resourceSpans": [...]}` a line) and what the OTLP/HTTP JSON encoding
sends: ids are hex strings, times are nanoseconds since 1970 as strings (or
numbers), and attribute values are tagged `AnyValue` objects
(`{"stringValue": ...}`, `{"arrayValue": {"values": [...]}}`, ...). Only the
fields the conventions read are decoded; anything else in a span is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._redact import mask
from ..events.parse import json_type
from ._build import expect
from ._records import Item, ItemProblem, JsonPath

_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")
_SPAN_ID = re.compile(r"[0-9a-fA-F]{16}")
#: OTLP's `Status.code` for an error, as a number or as the enum's name.
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")
_DOCUMENT = "an OTLP/JSON document: an object with `resourceSpans` (the Collector's file exporter writes one a line)"


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time: int
    attributes: dict[str, Any]
    path: JsonPath


@dataclass
class Span:
    """One span: its place in its trace, its times, its attributes and events, and where it is in the file."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[SpanEvent]
    error: bool
    status_message: str
    item: Item = field(repr=False)
    path: JsonPath = ()

    def problem_at(self, message: str, *steps: str | int):
        return self.item.problem(message, (*self.path, *steps))


def any_value(value: Any, path: JsonPath) -> Any:
    """An OTLP `AnyValue` as a plain value: strings, numbers, booleans, lists and objects (a kvlist)."""
    value = expect(value, dict, "value", path, optional=True)
    if not value:
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise ItemProblem(f"`intValue` must be an integer (a number or a string of digits), got {json_type(raw)}", (*path, "intValue")) from None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        values = (value["arrayValue"] or {}).get("values") or []
        return [any_value(v, (*path, "arrayValue", "values", i)) for i, v in enumerate(values)]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values"), (*path, "kvlistValue", "values"))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(raw: Any, path: JsonPath) -> dict[str, Any]:
    """A list of `{key, value}` as a dict; a later key wins, as the SDK keeps the last one set."""
    found: dict[str, Any] = {}
    for i, pair in enumerate(expect(raw, list, "attributes", path, optional=True) or ()):
        pair = expect(pair, dict, "attribute", (*path, i))
        key = expect(pair.get("key"), str, "key", (*path, i, "key"))
        found[key] = any_value(pair.get("value"), (*path, i, "value"))
    return found


def _nanos(raw: Any, what: str, path: JsonPath) -> int:
    if raw is None:
        return 0
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    raise ItemProblem(f"`{what}` must be nanoseconds since 1970 (a string of digits), got {json_type(raw)} {raw!r}", path)


def _id(raw: Any, pattern: re.Pattern, what: str, digits: int, path: JsonPath) -> str:
    if not isinstance(raw, str) or not pattern.fullmatch(raw) or not raw.strip("0"):
        found = f"{json_type(raw)} {raw!r}" if raw is not None else "nothing"
        raise ItemProblem(f"`{what}` must be {digits} hex digits (OTLP/JSON writes ids in hex), not all zero; got {found}", path)
    return raw.lower()


def _events(raw: Any, path: JsonPath) -> list[SpanEvent]:
    events = []
    for i, event in enumerate(expect(raw, list, "events", path, optional=True) or ()):
        here = (*path, i)
        event = expect(event, dict, "span event", here)
        name = expect(event.get("name"), str, "name", (*here, "name"), optional=True) or ""
        time = _nanos(event.get("timeUnixNano"), "timeUnixNano", (*here, "timeUnixNano"))
        events.append(SpanEvent(name, time, attributes(event.get("attributes"), (*here, "attributes")), here))
    return events


def _span(raw: Any, item: Item, path: JsonPath) -> Span:
    raw = expect(raw, dict, "span", path)
    parent = raw.get("parentSpanId")
    status = expect(raw.get("status"), dict, "status", (*path, "status"), optional=True) or {}
    start = _nanos(raw.get("startTimeUnixNano"), "startTimeUnixNano", (*path, "startTimeUnixNano"))
    return Span(
        trace_id=_id(raw.get("traceId"), _TRACE_ID, "traceId", 32, (*path, "traceId")),
        span_id=_id(raw.get("spanId"), _SPAN_ID, "spanId", 16, (*path, "spanId")),
        parent_id=_id(parent, _SPAN_ID, "parentSpanId", 16, (*path, "parentSpanId")) if parent else None,
        name=expect(raw.get("name"), str, "name", (*path, "name"), optional=True) or "",
        start=start,
        end=_nanos(raw.get("endTimeUnixNano"), "endTimeUnixNano", (*path, "endTimeUnixNano")) or start,
        attributes=attributes(raw.get("attributes"), (*path, "attributes")),
        events=_events(raw.get("events"), (*path, "events")),
        error=status.get("code") in _STATUS_ERROR,
        status_message=message if isinstance(message := status.get("message"), str) else "",
        item=item,
        path=path,
    )


def document_spans(item: Item) -> Iterator[Span]:
    """Every span of one OTLP/JSON document, in file order; a document of logs or metrics only holds none."""
    doc = item.value
    if not isinstance(doc, dict) or not ({"resourceSpans", "resourceLogs", "resourceMetrics"} & doc.keys()):
        raise ItemProblem(f"expected {_DOCUMENT}, got {json_type(doc)}" + (f" with keys {mask(', '.join(sorted(doc)))[:80]}" if isinstance(doc, dict) else ""))
    for r, resource in enumerate(expect(doc.get("resourceSpans"), list, "resourceSpans", ("resourceSpans",), optional=True) or ()):
        rpath: JsonPath = ("resourceSpans", r)
        resource = expect(resource, dict, "resource spans", rpath)
        for s, scope in enumerate(expect(resource.get("scopeSpans"), list, "scopeSpans", (*rpath, "scopeSpans"), optional=True) or ()):
            spath = (*rpath, "scopeSpans", s)
            scope = expect(scope, dict, "scope spans", spath)
            for k, span in enumerate(expect(scope.get("spans"), list, "spans", (*spath, "spans"), optional=True) or ()):
                yield _span(span, item, (*spath, "spans", k))


def raw_spans(doc: Any) -> Iterator[dict[str, Any]]:
    """The span objects of a document as they are, skipping whatever is malformed (`document_spans` reports it)."""
    resources = doc.get("resourceSpans") if isinstance(doc, dict) else None
    for resource in resources if isinstance(resources, list) else ():
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        for scope in scopes if isinstance(scopes, list) else ():
            spans = scope.get("spans") if isinstance(scope, dict) else None
            yield from (span for span in (spans if isinstance(spans, list) else ()) if isinstance(span, dict))


def raw_attribute(span: dict[str, Any], key: str) -> Any:
    """One attribute of a span object as it is, or None (when absent or malformed)."""
    pairs = span.get("attributes")
    for pair in pairs if isinstance(pairs, list) else ():
        if isinstance(pair, dict) and pair.get("key") == key:
            try:
                return any_value(pair.get("value"), ())
            except ItemProblem:
                return None
    return None
