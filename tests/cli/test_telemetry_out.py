"""`--otlp-out`, `--openinference-out` and `--otlp-endpoint` on `check` and `run`: what is written, and when nothing is."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class _Redirecting(BaseHTTPRequestHandler):
    """A collector behind a proxy that answers every export with a redirect, and the authorizations it was sent."""

    status = 308
    sent: list[str | None] = []

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.sent.append(self.headers.get("Authorization"))
        self.send_response(self.status)
        self.send_header("Location", "http://bob:PW@127.0.0.1:1/v1/logs")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("status", [308, 301, 307])
def test_a_collector_answering_a_redirect_is_not_counted_as_delivered_and_no_password_is_shown(tmp_path, status):
    """The exporter does not follow a redirect and takes it for delivered: dialogcheck says the verdicts were not
    delivered (exit 2), and neither the password of the address given nor of the one redirected to is shown."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    _Redirecting.status, _Redirecting.sent = status, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://bob:PW@127.0.0.1:{server.server_address[1]}"
        result = invoke("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--otlp-endpoint", url)
    finally:
        server.shutdown()
        server.server_close()
    assert _Redirecting.sent, "the collector was never asked"
    assert result.exit_code == 2, result.output
    assert f"http://bob:[redacted]@127.0.0.1:{server.server_address[1]}/v1/logs:1:1: the collector did not take" in result.output
    assert f"it answered {status} " in result.output and "(a redirect, to http://bob:[redacted]@127.0.0.1:1/v1/logs)" in result.output
    assert "PW" not in result.output


def test_a_collector_refusing_the_verdicts_is_named_without_its_password(tmp_path):
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    _Redirecting.status, _Redirecting.sent = 400, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://alice:s3cr3t-pass@127.0.0.1:{server.server_address[1]}/v1/logs"
        result = invoke("check", "--no-judge", "--sop", SOP, CONVERSATIONS, "--otlp-endpoint", url)
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 2, result.output
    assert f"http://alice:[redacted]@127.0.0.1:{server.server_address[1]}/v1/logs:1:1: the collector did not take 48 of the verdicts sent\n" in result.output
    assert "s3cr3t" not in result.output and "redirect" not in result.output
