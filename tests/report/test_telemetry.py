"""`report.telemetry`: every check of a result as a GenAI evaluation event or an OpenInference session evaluation."""

from __future__ import annotations

import dataclasses
import json

from dialogcheck import check_conversations
from dialogcheck.report.telemetry import evaluations, openinference_spans_line, otlp_logs_line
from tests.conftest import EXAMPLE

SCENARIO = EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"
CONVERSATION = EXAMPLE / "conversations" / "damaged_card_digression.jsonl"


def result():
    (found,) = check_conversations(SCENARIO, CONVERSATION, no_judge=True)
    return found


def test_one_evaluation_per_check_with_its_label_score_and_annotator():
    judged = result()
    found = list(evaluations(judged))
    lines = list(judged.checks())
    assert [e.name for e in found] == [line.title for line in lines]
    assert [e.label for e in found] == [line.outcome.value for line in lines]
    assert {e.label for e in found} >= {"pass", "fail", "skip"}  # the criteria are skipped with no judge
    for evaluation in found:
        assert evaluation.score == {"pass": 1.0, "fail": 0.0}.get(evaluation.label)
        assert evaluation.annotator == ("LLM" if evaluation.kind == "criterion" else "CODE")
        assert evaluation.trace is None


def test_the_logs_line_parents_to_the_trace_only_when_there_is_one():
    judged = result()
    records = json.loads(otlp_logs_line(judged, 7))["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert len(records) == len(list(judged.checks()))
    assert all("traceId" not in r and r["timeUnixNano"] == "7" and r["eventName"] == "gen_ai.evaluation.result" for r in records)
    skipped = next(r for r in records if {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": "skip"}} in r["attributes"])
    assert not any(a["key"] == "gen_ai.evaluation.score.value" for a in skipped["attributes"])  # no score for a skip
    traced = dataclasses.replace(judged, trace=("ab" * 16, "cd" * 8))
    records = json.loads(otlp_logs_line(traced, 7))["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert {(r["traceId"], r["spanId"]) for r in records} == {("ab" * 16, "cd" * 8)}


def test_the_session_span_is_stable_and_under_the_root_span():
    judged = dataclasses.replace(result(), trace=("ab" * 16, "cd" * 8))
    first, again = (json.loads(openinference_spans_line(judged, n))["resourceSpans"][0]["scopeSpans"][0]["spans"][0] for n in (1, 2))
    assert first["spanId"] == again["spanId"] and first["traceId"] == "ab" * 16 and first["parentSpanId"] == "cd" * 8
    assert first["status"]["code"] == 2  # the conversation failed
    kinds = [a["value"]["stringValue"] for a in first["attributes"] if a["key"].endswith(".evaluation.annotator_kind")]
    assert "LLM" in kinds and "CODE" in kinds
