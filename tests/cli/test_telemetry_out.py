"""`--otlp-out`, `--openinference-out` and `--otlp-endpoint` on `check` and `run`: what is written, and when nothing is."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.cli.test_run import make_project
from tests.conftest import EXAMPLE

SOP = EXAMPLE / "sops" / "replace_card.yml"
CONVERSATIONS = EXAMPLE / "conversations"


pytestmark = pytest.mark.usefixtures("plain_output")


def invoke(*args):
    return CliRunner().invoke(cli, [*map(str, args)])


def records(path) -> list[dict]:
    """Every log record of an OTLP/JSON logs file, with its attributes as a plain dict."""
    found = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceLogs"]:
            for scope in resource["scopeLogs"]:
                for record in scope["logRecords"]:
                    record["attrs"] = {a["key"]: next(iter(a["value"].values())) for a in record["attributes"]}
                    found.append(record)
    return found


def test_check_writes_one_event_per_check_and_the_html_report_too(tmp_path):
    out, html = tmp_path / "verdicts.jsonl", tmp_path / "report.html"
    result = invoke("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--format", "json", "--otlp-out", out, "--html", html)
    assert result.exit_code == 1, result.output
    conversations = json.loads(result.stdout)["conversations"]
    expected = sorted((c["source"], s["outcome"]) for c in conversations for s in c["sop"])
    found = records(out)
    assert len(out.read_text().splitlines()) == len(conversations)
    by_conversation = {}
    for line, conversation in zip(out.read_text().splitlines(), conversations):
        labels = [r["attributes"] for r in json.loads(line)["resourceLogs"][0]["scopeLogs"][0]["logRecords"]]
        by_conversation[conversation["source"]] = labels
    assert sorted((source, next(a["value"]["stringValue"] for a in attrs if a["key"] == "gen_ai.evaluation.score.label"))
                  for source, labels in by_conversation.items() for attrs in labels) == expected
    assert all("traceId" not in r for r in found)  # native conversations come from no trace
    assert {r["attrs"]["dialogcheck.check.kind"] for r in found} == {"sop"}
    assert html.read_text().count("<html") == 1


def test_bad_input_writes_no_telemetry_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "user", "text": 3}\n')
    out = tmp_path / "verdicts.jsonl"
    result = invoke("check", "--no-judge", "--sop", SOP, bad, "--otlp-out", out, "--openinference-out", tmp_path / "oi.jsonl")
    assert result.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_run_writes_the_verdicts_of_every_run(tmp_path):
    project = make_project(tmp_path / "p")
    out, sessions = tmp_path / "verdicts.jsonl", tmp_path / "sessions.jsonl"
    result = invoke("run", project, "--runs", "2", "--results", tmp_path / "r", "--otlp-out", out, "--openinference-out", sessions)
    assert result.exit_code == 1, result.output  # beta looks up 'balance', not 'card'
    labels = sorted(r["attrs"]["gen_ai.evaluation.score.label"] for r in records(out))
    assert labels == ["fail", "fail", "pass", "pass"]
    spans = [json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0] for line in sessions.read_text().splitlines()]
    assert sorted(s["status"]["code"] for s in spans) == [1, 1, 2, 2]
    kinds = {a["value"]["stringValue"] for s in spans for a in s["attributes"] if a["key"].endswith("annotator_kind")}
    assert kinds == {"CODE"}


def test_the_endpoint_needs_the_sdk_and_ray_writes_none(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http._log_exporter", None)
    result = invoke("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--otlp-endpoint", "http://127.0.0.1:1")
    assert result.exit_code == 2 and "pip install 'dialogcheck[otlp]'" in result.output
    result = invoke("run", make_project(tmp_path / "p"), "--otlp-endpoint", "http://127.0.0.1:1", "--results", tmp_path / "r")
    assert result.exit_code == 2 and "pip install 'dialogcheck[otlp]'" in result.output
    assert not (tmp_path / "r").exists()  # nothing ran
    result = invoke("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--engine", "ray", "--output", tmp_path / "o", "--otlp-out", tmp_path / "v.jsonl")
    assert result.exit_code == 2 and "written by --engine local" in result.output
