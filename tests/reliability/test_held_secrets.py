"""Every credential the process holds is masked wherever text from outside is written.

The three cases of the security review, in one `dialogcheck run` (a real subprocess,
`--format text` and `json`, with `--junit` and `--html` copies and the answer cache on):

- an HTTP agent whose URL carries `bot:PASSWORD@` answers 401 with a body quoting the
  password it decoded from the Basic credential;
- the judge's answers echo its API key: once in prose that is no JSON (the "raw answer"
  the error keeps), once inside a valid verdict's rationale;
- `extra_headers: {X-Gateway-Token: ${GW_TOKEN}}` goes with every judge request, so it
  must stay out of the cache entries (which store only a hash of the headers).

Every file under the test folder and stdout and stderr are searched for each planted
value, in each form it could be written in: as given, percent-encoded in the URL, and as
the Basic credential.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
import uuid
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.importers.test_otlp import _Collector
from tests.llm.conftest import judge_text, openai_body
from tests.reliability.figures import record
from tests.reliability.peers import FaultServer, Seen, clean_env, ok, status
from tests.reliability.test_secrets import every_written_text

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

SCENARIO = """\
scenario:
  name: {slug}
  simulation_context: say hi
  script: [{message}]
  goals:
    criteria: ["The agent answers. {criterion}"]
"""
CASES = {
    "agent_401": ("break", ""),
    "judge_echo_raw": ("hello", "ECHO-RAW"),
    "judge_echo_rationale": ("hello", "ECHO-RATIONALE"),
    "healthy": ("hello", ""),
}


def agent_answer(request: Seen):
    if request.body.get("text") == "break":
        user, _, password = base64.b64decode(request.headers["authorization"].removeprefix("Basic ")).decode().partition(":")
        return status(401, {"error": f"user {user} may not log in with password {password}"})
    return ok({"messages": [{"text": "Hi there"}], "events": []})


def judge_answer(request: Seen):
    prompt = json.dumps(request.body["messages"])
    echoed = f"I was called with {request.headers['authorization']} and gateway token {request.headers.get('x-gateway-token')}"
    if "ECHO-RAW" in prompt:
        return ok(openai_body(f"Sorry, no JSON today. {echoed}"))
    if "ECHO-RATIONALE" in prompt:
        return ok(openai_body(judge_text(request.body, rationale=echoed)))
    return ok(openai_body(judge_text(request.body)))


@pytest.fixture
def planted() -> dict[str, str]:
    return {
        "agent password": f"pw!planted-{uuid.uuid4().hex}",
        "judge key": f"judge-key-planted-{uuid.uuid4().hex}",
        "gateway token": f"gw-token-planted-{uuid.uuid4().hex}",
    }


def needles(planted: dict[str, str]) -> dict[str, bytes]:
    forms = {name: value.encode() for name, value in planted.items()}
    password = planted["agent password"]
    forms["agent password, percent-encoded"] = password.replace("!", "%21").encode()
    forms["agent Basic credential"] = base64.b64encode(f"bot:{password}".encode())
    return forms


def test_no_held_credential_reaches_a_file_or_a_stream(tmp_path, planted):
    agent, llm = FaultServer(agent_answer), FaultServer(judge_answer)
    try:
        root = tmp_path / "project"
        (root / "eval" / "scenarios").mkdir(parents=True)
        password_in_url = planted["agent password"].replace("!", "%21")
        (root / "eval" / "conftest.yml").write_text(
            f"agent: {{type: http, url: 'http://bot:{password_in_url}@{agent.url.removeprefix('http://')}', timeout: 60}}\n"
            "evaluation:\n"
            f"  llm: {{provider: openai_compatible, base_url: '{llm.url}/v1', model: judge, api_key_env: JUDGE_KEY, max_retries: 0,\n"
            "         extra_headers: {X-Gateway-Token: '${GW_TOKEN}'}}\n"
            "cache: {dir: .cache}\n"
        )
        for slug, (message, criterion) in CASES.items():
            (root / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(slug=slug, message=message, criterion=criterion))
        env = clean_env(JUDGE_KEY=planted["judge key"], GW_TOKEN=planted["gateway token"])
        streams = {}
        for fmt in ("text", "json"):
            done = subprocess.run(
                [str(DIALOGCHECK), "run", str(root), "--results", str(tmp_path / f"results-{fmt}"), "--format", fmt,
                 "--junit", str(tmp_path / f"extra-{fmt}.xml"), "--html", str(tmp_path / f"extra-{fmt}.html")],
                capture_output=True, env=env, timeout=120, check=False,
            )
            assert done.returncode == 3, done.stdout.decode() + done.stderr.decode()
            streams[f"{fmt} stdout"], streams[f"{fmt} stderr"] = done.stdout, done.stderr

        # The credentials really went out, and the peers really quoted them back.
        sent = b"".join(seen.raw for seen in agent.seen + llm.seen)
        assert base64.b64encode(f"bot:{planted['agent password']}".encode()) in sent
        assert f"authorization: Bearer {planted['judge key']}".encode() in sent
        assert f"x-gateway-token: {planted['gateway token']}".encode() in sent
        runs = {slug: json.loads((tmp_path / "results-json" / slug / "run_1.json").read_text()) for slug in CASES}
        assert runs["agent_401"]["verdict"] == "error" and "may not log in with password [redacted]" in runs["agent_401"]["error"]
        assert "raw answer: 'Sorry, no JSON today. I was called with Bearer [redacted] and gateway token [redacted]'" in runs["judge_echo_raw"]["criteria"][0]["detail"]
        assert runs["judge_echo_rationale"]["criteria"][0]["detail"] == "I was called with Bearer [redacted] and gateway token [redacted]"
        entries = [json.loads(path.read_text()) for path in (root / ".cache").rglob("*.json")]
        assert len(entries) == len(llm.seen) and all(len(entry["request"]["headers_sha256"]) == 64 for entry in entries)

        searched = {str(path): data for path, data in every_written_text(tmp_path).items() if path.name != "conftest.yml"} | streams
        found = [f"{name} in {where}" for where, data in searched.items() for name, needle in needles(planted).items() if needle in data]
        record("held secrets", {
            "values planted": len(needles(planted)), "runs": 2 * len(CASES), "files and streams searched": len(searched),
            "bytes searched": sum(map(len, searched.values())), "leaks": len(found),
        })
        assert found == []
    finally:
        agent.stop()
        llm.stop()


@pytest.mark.parametrize("output", [["--format", "text"], ["--format", "json"], ["--output", "shards"]])
def test_check_masks_a_held_key_that_a_recorded_conversation_quotes(tmp_path, output):
    """`check` prints and writes what conversations say; a key the config holds is masked there too."""
    key = "sk-held-" + "q" * 24
    project = tmp_path / "project"
    (project / "eval" / "scenarios").mkdir(parents=True)
    (project / "eval" / "conftest.yml").write_text(
        f"evaluation:\n  llm: {{provider: openai_compatible, model: m, base_url: 'http://127.0.0.1:9/v1', api_key: {key}}}\n"
    )
    scenario = project / "eval" / "scenarios" / "s.yml"
    scenario.write_text(
        "scenario:\n  name: s\n  simulation_context: c\n  goals:\n    assertions:\n      - bot_uttered: {text_matches: never said}\n"
    )
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"event": "bot", "text": f"{key} is my key"}) + "\n")
    done = subprocess.run(
        [str(DIALOGCHECK), "check", "--no-judge", "--scenario", str(scenario), str(log), *output],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 1, done.stderr
    written = done.stdout + done.stderr + "".join(p.read_text() for p in (tmp_path / "shards").glob("*") if p.is_file())
    assert "[redacted] is my key" in written
    assert key not in written


def _slices(secret: str, width: int = 12) -> set[str]:
    """Every run of `width` characters of `secret`: what a cut through it would leave of it, at the least."""
    return {secret[i : i + width] for i in range(len(secret) - width + 1)}


def _shortened(secret: str) -> dict[str, str]:
    """What each point that shortens text makes of a text holding `secret` where its cut falls."""
    from ruamel.yaml.nodes import ScalarNode

    from dialogcheck._shown import TEXT_LIMIT, cut
    from dialogcheck._yaml import _bad_scalar
    from dialogcheck.checks.sop_judge import LlmJudge
    from dialogcheck.connectors._client import excerpt
    from dialogcheck.connectors.json_values import _quote
    from dialogcheck.events.values import show
    from dialogcheck.importers._records import Item, ItemProblem
    from dialogcheck.importers.otlp_spans import document_spans
    from dialogcheck.llm.cache import _first_difference
    from dialogcheck.report.junit import _short
    from dialogcheck.simulate.review._text import excerpt as review_excerpt

    def problem(doc: dict[str, int]) -> str:
        try:
            list(document_spans(Item(doc, "spans.json", "{}")))
        except ItemProblem as err:
            return str(err)
        raise AssertionError("the document was read")

    return {
        "the report's cut at 10,000 characters": cut("a" * (TEXT_LIMIT - 60) + secret + "b" * 100),
        "a long message quoted in a check's detail": show("x" * 50 + secret + "y" * 200),
        "a message whose quotes push it past the limit": show("x" * (79 - len(secret)) + secret),
        "a JSON value quoted in a check's detail": show({"token": "x" * 40 + secret}),
        "a value JSON cannot hold, whose repr cuts a string's middle out": show(("x" * 180 + secret + "y" * 420, {1}), limit=1_000),
        "a JUnit failure message": _short("x" * 180 + " " + secret + " tail"),
        "a judged step's label": LlmJudge(criterion="x" * 40 + secret).label,
        "a YAML value that is not of its tag": _bad_scalar(ScalarNode("tag:yaml.org,2002:int", "x" * 20 + secret)),
        "an agent's error body": excerpt(("x" * 180 + secret + "y" * 50).encode()),
        "an agent's value JSON cannot hold": _quote("x" * 20 + secret),
        "a simulated user's message in a review": review_excerpt("x" * 60 + " " + secret),
        "a replay miss (the cache stores the secret masked)": _first_difference(
            {"messages": [["user", "x" * 100 + secret + " now"]]}, {"messages": [["user", "x" * 100 + "[redacted] before"]]}
        ),
        "an import's document of the wrong shape": problem({"a" * 60: 1, secret: 2}),
    }


def test_no_cut_keeps_part_of_a_held_secret():
    """Each point that shortens text masks the whole text first: the head a cut leaves is no secret the write points' `mask` knows."""
    from dialogcheck._redact import hold, mask

    secret = f"held-cut-{uuid.uuid4().hex}{uuid.uuid4().hex}"
    hold(secret)
    written = {where: mask(text) for where, text in _shortened(secret).items()}
    kept = {where: sorted(piece for piece in _slices(secret) if piece in text)[:1] for where, text in written.items()}
    assert {where: piece for where, piece in kept.items() if piece} == {}


def test_a_held_token_is_masked_before_any_report_cuts_it(tmp_path):
    """The review's case: a gateway token the agent says is cut in a check's quote (80) and in a report's transcript (10,000).

    A Python agent says it twice, `dialogcheck run` records and reports the batch, and `dialogcheck check`
    re-checks the recorded events; text, JSON, JUnit, HTML and OTLP carry no piece of the token.
    """
    token = f"gw-{uuid.uuid4().hex}{uuid.uuid4().hex}"
    root = tmp_path / "project"
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text(
        "agent: {type: python, callable: 'agent:respond'}\n"
        "evaluation:\n  llm: {provider: openai_compatible, model: m, base_url: 'http://127.0.0.1:9/v1', extra_headers: {X-Gateway-Token: '${GW_TOKEN}'}}\n"
    )
    (root / "agent.py").write_text(
        "import os\n\n\ndef respond(conversation_id, text, initial_slots=None):\n"
        "    if text is None:\n        return {'messages': [{'text': 'hello'}], 'events': []}\n"
        "    said = f\"the token is {os.environ['GW_TOKEN']}\"\n"
        "    return {'messages': [{'text': said if text == 'short' else 'A' * 9_900 + said + 'B' * 300}], 'events': []}\n"
    )
    scenario = root / "eval" / "scenarios" / "s.yml"
    scenario.write_text(
        "scenario:\n  name: s\n  simulation_context: x\n  script: [short, long]\n  goals:\n    assertions:\n"
        "      - bot_did_not_utter: {text_matches: '^the token'}\n"
    )
    env = clean_env(GW_TOKEN=token)
    results, streams = tmp_path / "results", {}
    done = subprocess.run(
        [str(DIALOGCHECK), "run", str(root), "--results", str(results), "--junit", str(tmp_path / "run.xml"),
         "--html", str(tmp_path / "run.html"), "--otlp-out", str(tmp_path / "run-otlp.jsonl")],
        capture_output=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 1, done.stdout.decode() + done.stderr.decode()
    streams["run stdout"], streams["run stderr"] = done.stdout, done.stderr
    for fmt in ("text", "json"):
        check = subprocess.run(
            [str(DIALOGCHECK), "check", "--no-judge", "--config", str(root / "eval" / "conftest.yml"), "--scenario", str(scenario),
             str(results / "s" / "run_1.events.jsonl"), "--format", fmt, "--junit", str(tmp_path / f"check-{fmt}.xml"),
             "--html", str(tmp_path / f"check-{fmt}.html"), "--otlp-out", str(tmp_path / f"check-{fmt}-otlp.jsonl")],
            capture_output=True, env=env, timeout=120, check=False,
        )
        assert check.returncode == 1, check.stdout.decode() + check.stderr.decode()
        streams[f"check {fmt} stdout"], streams[f"check {fmt} stderr"] = check.stdout, check.stderr

    run = json.loads((results / "s" / "run_1.json").read_text())
    assert run["transcript"][-1]["text"].startswith("A" * 9_900 + "the token is [redacted]BBB")
    assert run["transcript"][-1]["text"].endswith("… [cut from 10,223 characters, whole text in run_1.events.jsonl]")
    assert "bot message 'the token is [redacted]' at event" in streams["check text stdout"].decode()
    searched = {str(path): data for path, data in every_written_text(tmp_path).items() if path.suffix != ".py"} | streams
    found = sorted({f"{piece} in {where}" for where, data in searched.items() for piece in _slices(token) if piece.encode() in data})
    assert found[:3] == []


def test_the_otlp_endpoint_gets_held_credentials_masked_as_the_otlp_file_does(tmp_path):
    """`--otlp-endpoint` hands the verdicts to the OpenTelemetry SDK, which sends them: masked, like `--otlp-out`'s file."""
    token = f"gw-{uuid.uuid4().hex}"
    (tmp_path / "conftest.yml").write_text(
        "evaluation:\n  llm: {provider: openai_compatible, model: m, base_url: 'http://127.0.0.1:9/v1', extra_headers: {X-Gateway-Token: '${GW_TOKEN}'}}\n"
    )
    (tmp_path / "s.yml").write_text(
        "scenario:\n  name: s\n  simulation_context: x\n  goals:\n    assertions:\n      - bot_did_not_utter: {text_matches: token}\n"
    )
    (tmp_path / "conv.jsonl").write_text(
        json.dumps({"event": "user", "text": "what is the token?"}) + "\n" + json.dumps({"event": "bot", "text": f"the token is {token}"}) + "\n"
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Collector.received = []
    try:
        done = subprocess.run(
            [str(DIALOGCHECK), "check", "--no-judge", "--config", str(tmp_path / "conftest.yml"), "--scenario", str(tmp_path / "s.yml"),
             str(tmp_path / "conv.jsonl"), "--otlp-out", str(tmp_path / "otlp.jsonl"), "--otlp-endpoint", f"http://127.0.0.1:{server.server_address[1]}"],
            capture_output=True, env=clean_env(GW_TOKEN=token), timeout=120, check=False,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done.stdout.decode() + done.stderr.decode()
    explanation = b"bot message 'the token is [redacted]' at event 1 (turn 1) matched"
    sent = b"".join(request.SerializeToString() for _, request in _Collector.received)  # protobuf keeps strings as they are
    assert b"gen_ai.evaluation.result" in sent and explanation in sent
    assert explanation in (tmp_path / "otlp.jsonl").read_bytes()
    assert token.encode() not in sent + (tmp_path / "otlp.jsonl").read_bytes() + done.stdout + done.stderr
