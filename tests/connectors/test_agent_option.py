"""`run --agent` as a user writes it, and an agent that is down found once, before the batch.

`--agent http://host/chat` is an http agent; a problem with the flag names
`--agent`, never eval/conftest.yml; the flag keeps the config's
`agent.timeout`. An agent that cannot be connected to ends `run` at once with
exit 3 and one message naming it (its password masked); an agent that answers,
even with errors, is up, and its runs go ahead. Real loopback servers and a
real closed port throughout.
"""

from __future__ import annotations

import asyncio
import json
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.connectors import AgentError, HttpConnector, PythonConnector, RasaConnector
from tests.connectors.conftest import PATIENT, QUIET, LoopbackServer, Reply
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
SCENARIO = """\
scenario:
  name: {slug}
  simulation_context: c
  script: [my card is broken]
  goals:
    assertions:
      - bot_uttered: {{text_matches: "replace it"}}
"""


def project(root: Path, conftest: str = "", slugs=("one", "two", "three")) -> Path:
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text(conftest)
    for slug in slugs:
        (root / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(slug=slug))
    return root


def run(*args) -> object:
    return CliRunner().invoke(cli, ["run", *map(str, args)])


def test_a_plain_url_is_an_http_agent(tmp_path, agent_server):
    root = project(tmp_path / "p")
    result = run(root, "--agent", f"{agent_server.url}/agent", "--results", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["passed"] == 3
    assert [r.body["text"] for r in agent_server.requests if r.body["text"]] == ["my card is broken"] * 3


def test_the_flag_keeps_the_configs_agent_timeout(tmp_path):
    slow = LoopbackServer(lambda request: Reply(body={"messages": [{"text": "late"}], "events": []}, delay=QUIET))
    try:
        root = project(tmp_path / "p", "agent: {type: rasa, url: 'http://127.0.0.1:9', timeout: 0.3}\n", slugs=("one",))
        result = run(root, "--agent", f"http:{slow.url}/agent", "--results", tmp_path / "r")
    finally:
        slow.stop()
    assert result.exit_code == 3, result.output
    run_1 = json.loads((tmp_path / "r" / "one" / "run_1.json").read_text())
    assert run_1["error"] == f"agent: POST {slow.url}/agent: no answer within 0.3 s (timed out)"


def test_a_bad_agent_flag_names_the_flag_not_the_config(tmp_path):
    root = project(tmp_path / "p", "agent: {type: python, callable: 'agent:respond'}\n")
    (root / "agent.py").write_text("def respond(conversation_id, text):\n    return {'messages': []}\n")
    result = run(root, "--agent", "python:agent:nope", "--results", tmp_path / "r")
    assert result.exit_code == 2
    assert "Error: Invalid value for '--agent': cannot set up the agent: agent module `agent`" in result.stderr
    assert "has no `nope`" in result.stderr and "conftest.yml" not in result.stderr
    result = run(root, "--agent", "localhost:5005", "--results", tmp_path / "r")
    assert result.exit_code == 2
    assert "Error: --agent must be rasa:URL, http:URL (or the http(s) URL alone) or python:MODULE:FUNC, got 'localhost:5005'" in result.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kind", ["http", "rasa"])
def test_an_agent_that_is_down_ends_run_at_once_with_one_message(tmp_path, closed_port, kind):
    root = project(tmp_path / "p")
    address = f"http://bot:s3cret-pass@127.0.0.1:{closed_port}/chat"
    done = subprocess.run(
        [str(DIALOGCHECK), "run", str(root), "--agent", f"{kind}:{address}", "--runs", "5", "--results", str(tmp_path / "r")],
        capture_output=True, text=True, env=clean_env(), timeout=300,
    )
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr == (
        f"the agent is not reachable, so no run was started: cannot connect to the agent at"
        f" http://bot:[redacted]@127.0.0.1:{closed_port}/chat (connection refused: is it running?)\n"
    )
    assert not (tmp_path / "r").exists()


def test_an_agent_that_is_down_in_json(tmp_path, closed_port):
    root = project(tmp_path / "p", f"agent: {{type: http, url: 'http://127.0.0.1:{closed_port}/chat'}}\n")
    result = run(root, "--format", "json")
    assert result.exit_code == 3
    assert json.loads(result.stdout) == {
        "error": {
            "message": f"the agent is not reachable, so no run was started: cannot connect to the agent at http://127.0.0.1:{closed_port}/chat"
            " (connection refused: is it running?)",
            "file": None,
            "line": None,
            "column": None,
        }
    }
    assert not (root / "eval" / "results").exists()


def test_an_agent_that_answers_errors_is_up_and_its_runs_go_ahead(tmp_path):
    broken = LoopbackServer(lambda request: Reply(500, {"error": "kaput"}))
    try:
        root = project(tmp_path / "p")
        result = run(root, "--agent", f"{broken.url}/agent", "--results", tmp_path / "r")
    finally:
        broken.stop()
    assert result.exit_code == 3, result.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert (summary["completed_runs"], summary["errored"]) == (3, 3)
    assert len(broken.requests) == 3  # one opening request a run: the check before the batch sent none


def test_reachability_of_each_connector(tmp_path, agent_server, rasa_server, closed_port):
    assert asyncio.run(HttpConnector(agent_server.url + "/agent").check_reachable()) is None
    assert asyncio.run(RasaConnector(rasa_server.url).check_reachable()) is None
    assert agent_server.requests == [] and rasa_server.requests == []  # a connection, no request
    (tmp_path / "reach_agent.py").write_text("def respond(cid, text):\n    return {'messages': []}\n")
    try:
        assert asyncio.run(PythonConnector("reach_agent:respond", tmp_path).check_reachable()) is None
    finally:
        sys.modules.pop("reach_agent", None)
    with pytest.raises(AgentError) as info:
        asyncio.run(HttpConnector(f"http://localhost:{closed_port}/a", PATIENT).check_reachable())
    assert str(info.value) == f"cannot connect to the agent at http://localhost:{closed_port}/a (connection refused: is it running?)"
    with pytest.raises(AgentError) as info:
        asyncio.run(RasaConnector("http://no-such-host.invalid:5005", PATIENT).check_reachable())
    assert str(info.value).startswith("cannot connect to the agent at http://no-such-host.invalid:5005 (unknown host: ")


def test_an_agent_whose_port_takes_no_connection_is_down_after_its_timeout():
    """A listening socket whose backlog is full drops new connections unanswered, as a blackholed host does."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    waiting = []
    try:
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            waiting.append(filler)
        # The backlog is full once one of them is connected: from then on the kernel drops the next connection's SYN.
        _, connected, _ = select.select([], waiting, [], 60)
        assert connected
        started = time.monotonic()
        with pytest.raises(AgentError) as info:
            asyncio.run(RasaConnector(f"http://127.0.0.1:{port}", 0.5).check_reachable())
        assert time.monotonic() - started < 60  # the 0.5 s timeout, not the kernel's minutes of SYN retries
    finally:
        for sock in (*waiting, listener):
            sock.close()
    assert str(info.value) == f"cannot connect to the agent at http://127.0.0.1:{port}: no connection within 0.5 s"
