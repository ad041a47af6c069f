"""`dialogcheck run` against real loopback agents: a fake Rasa server, and an HTTP agent that breaks in every way.

Each broken run ends errored with its cause named, a silent agent's run fails
(it ended early, and its goals are not met), the others pass, and the summary
lists every run.
"""

import json

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.connectors.conftest import QUIET, LoopbackServer, Reply

#: The agent's timeout in the batch: far past a healthy answer on loopback (milliseconds), even on a loaded machine;
#: the `hang` run waits this long, while the others go on.
TIMEOUT = 5.0

SCENARIO = """
scenario:
  name: {slug}
  simulation_context: c
  script: [{message}, thanks]
  goals:
    assertions:
      - bot_uttered: {{text_matches: "replace it"}}
"""
BEHAVIOUR = {
    "my card is broken": Reply(body={"messages": [{"text": "Shall I replace it?"}], "events": [{"event": "skill_activated", "skill_id": "card_replace"}]}),
    "hang": Reply(body={"messages": [{"text": "late"}], "events": []}, delay=QUIET),
    "crash": Reply(500, {"error": "kaput"}),
    "drop": Reply(hang_up=True),
    "garbage": Reply(body=b"<html>oops</html>"),
    "badshape": Reply(body={"messages": "replace it"}),
    "silent": Reply(body={"messages": [], "events": []}),
}
EXPECTED = {
    "normal": ("pass", None),
    "silent": ("fail", None),
    "hang": ("error", f"no answer within {TIMEOUT:g} s (timed out)"),
    "crash": ("error", "the agent answered HTTP 500"),
    "drop": ("error", "the agent closed the connection without answering"),
    "garbage": ("error", "the answer is not JSON: <html>oops</html>"),
    "badshape": ("error", "`messages` must be a list"),
}


def breaking_agent(request):
    text = request.body["text"]
    if text is None:
        return Reply(body={"messages": [{"text": "Hi!"}], "events": []})
    return BEHAVIOUR.get(text, Reply(body={"messages": [{"text": "ok"}], "events": []}))


def project(tmp_path, conftest):
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(conftest)
    for slug in EXPECTED:
        message = "my card is broken" if slug == "normal" else slug
        (tmp_path / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(slug=slug, message=message))
    return tmp_path


def test_a_batch_against_a_breaking_http_agent_loses_no_run(tmp_path):
    server = LoopbackServer(breaking_agent)
    try:
        root = project(tmp_path / "p", f"agent: {{type: http, url: '{server.url}/agent', timeout: {TIMEOUT:g}}}\n")
        result = CliRunner().invoke(cli, ["run", str(root), "--parallel", "7", "--results", str(tmp_path / "r")])
    finally:
        server.stop()
    assert result.exit_code == 1, result.output  # `silent` failed; failures outrank errors
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["completed_runs"] == summary["planned_runs"] == len(EXPECTED)
    for slug, (verdict, cause) in EXPECTED.items():
        run = json.loads((tmp_path / "r" / slug / "run_1.json").read_text())
        assert run["verdict"] == verdict, (slug, run["error"])
        if cause is None:
            assert run["error"] is None
        else:
            assert run["error"].startswith("agent: POST ") and cause in run["error"], (slug, run["error"])
    silent = json.loads((tmp_path / "r" / "silent" / "run_1.json").read_text())
    assert silent["ended_because"] == "the agent sent no text"
    assert {r["slug"] for r in summary["errored_runs"]} == {"hang", "crash", "drop", "garbage", "badshape"}


def test_a_run_against_a_rasa_server_judges_the_tracker(tmp_path, rasa_server):
    root = tmp_path / "p"
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text("")
    (root / "eval" / "scenarios" / "broken.yml").write_text(
        "scenario:\n  name: Broken card\n  simulation_context: c\n"
        "  setup: {initial_slots: {project.preferred_language: en}}\n"
        "  script: [my card is broken, which language?]\n"
        "  goals:\n    assertions:\n"
        "      - skill_activated: {skill_id: card_replace}\n"
        "      - tool_executed: {tool_name: lookup_card, source: local, arguments: {last4: '1234'}}\n"
        "      - bot_uttered: {text_matches: I speak en}\n"
    )
    result = CliRunner().invoke(cli, ["run", str(root), "--agent", f"rasa:{rasa_server.url}", "--results", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "r" / "broken" / "run_1.json").read_text())
    assert run["verdict"] == "pass"
    assert run["conversation_id"].startswith("sim-")
    events = [json.loads(line) for line in (tmp_path / "r" / "broken" / "run_1.events.jsonl").read_text().splitlines()]
    assert events[0] == {"event": "user", "text": "/session_start", "timestamp": 1.0}
    assert {"event": "slot", "name": "project.preferred_language", "value": "en"} in events
