"""Planted API keys and credentials never reach a written file, stdout or stderr.

A whole batch runs through `dialogcheck run` (a real subprocess) with an LLM user
(openai SDK, key from $OPENAI_API_KEY), an LLM judge (anthropic SDK, key from
$ANTHROPIC_API_KEY) and an HTTP agent whose URL carries a password (sent as an
`Authorization: Basic` header), all fake servers on loopback. Some requests fail
on purpose: 401 quoting the key, 500 echoing the whole request (headers included),
time-outs, and an agent that answers 500 to the run whose URL holds the password.
The cache is on. Then every file under the test folder, and stdout and stderr, is
searched for each planted value.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.llm.conftest import judge_text, openai_body
from tests.reliability.figures import record
from tests.reliability.peers import HANG, FaultServer, Seen, clean_env, ok, status

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
_MARKER = re.compile(r"FAULT:([\w-]+)")


def _echo(request: Seen, code: int) -> object:
    """A gateway that quotes what it was sent: the credential first, then the whole raw request."""
    credential = request.headers.get("authorization") or request.headers.get("x-api-key") or ""
    return status(code, {"error": {"message": f"rejected credential {credential}; request was: {request.raw.decode('latin-1')}", "type": "invalid_request_error"}})


def llm_answer(request: Seen):
    body = request.body
    prompt = json.dumps(body.get("messages"))
    marker = _MARKER.search(prompt)
    fault = marker.group(1) if marker else None
    if fault == "http401":
        return _echo(request, 401)
    if fault == "echo500":
        return _echo(request, 500)
    if fault == "hang":
        return HANG
    if request.path.endswith("/messages"):  # Anthropic: the judge
        return ok({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "judge",
            "content": [{"type": "text", "text": judge_text(body)}],
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 2},
        })
    return ok(openai_body('{"message": "balance please", "done": true}'))


def agent_answer(request: Seen):
    text = request.body.get("text")
    if text == "break":
        return status(500, {"error": "the agent broke", "you_sent": request.headers.get("authorization")})
    reply = {"messages": [{"text": "Hi there" if text is None else f"Looked up: {text}"}], "events": []}
    return ok(reply)


SCENARIO = """\
scenario:
  name: {name}
  simulation_context: "You want your card balance. {context}"
  max_turns: 2
  {script}
  goals:
    criteria: ["The agent answers. {criterion}"]
"""


@pytest.fixture
def planted():
    return {
        "OPENAI_API_KEY": f"sk-planted-{uuid.uuid4().hex}",
        "ANTHROPIC_API_KEY": f"sk-ant-planted-{uuid.uuid4().hex}",
        "DIALOGCHECK_TEST_JUDGE_KEY": f"sk-judge-planted-{uuid.uuid4().hex}",
        "agent_password": f"pw-planted-{uuid.uuid4().hex}",
    }


def every_written_text(folder: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file() and not path.is_symlink()}


def leaks(planted: dict[str, str], texts: dict[str, bytes]) -> list[str]:
    """Which planted value shows up where, in plain or in the Basic-auth encoding of the agent password."""
    needles = {name: value.encode() for name, value in planted.items()}
    needles["agent Basic credential"] = base64.b64encode(f"bot:{planted['agent_password']}".encode())
    return [f"{name} in {where}" for where, data in texts.items() for name, needle in needles.items() if needle in data]


def test_no_planted_secret_is_written_anywhere(tmp_path, planted):
    llm, agent = FaultServer(llm_answer), FaultServer(agent_answer)
    try:
        root = tmp_path / "project"
        scenarios = root / "eval" / "scenarios"
        scenarios.mkdir(parents=True)
        host = agent.url.removeprefix("http://")
        # Timeouts far past a healthy answer on a loaded machine: only `judge_hang` waits for one (its peer never answers).
        (root / "eval" / "conftest.yml").write_text(
            f"agent: {{type: http, url: 'http://bot:{planted['agent_password']}@{host}', timeout: 30}}\n"
            f"simulation:\n  llm: {{provider: openai_compatible, base_url: '{llm.url}/v1', model: sim, timeout: 10, max_retries: 0}}\n"
            f"evaluation:\n  llm: {{provider: anthropic, base_url: '{llm.url}', model: judge, timeout: 10, max_retries: 0}}\n"
            "cache: {dir: .cache}\n"
        )
        cases = {
            "healthy": ("", "", ""),
            "user_401": ("FAULT:http401", "", ""),
            "user_echo": ("FAULT:echo500", "", ""),
            "judge_echo": ("", "", "FAULT:echo500"),
            "judge_401": ("", "", "FAULT:http401"),
            "judge_hang": ("", "", "FAULT:hang"),
            "agent_echo": ("", "script: [break]", ""),
        }
        for slug, (context, script, criterion) in cases.items():
            (scenarios / f"{slug}.yml").write_text(SCENARIO.format(name=slug, context=context, script=script, criterion=criterion))
        env = clean_env(**{k: v for k, v in planted.items() if k.isupper()})
        results = tmp_path / "results"
        outputs = {}
        running = {
            fmt: subprocess.Popen(
                [str(DIALOGCHECK), "run", str(root), "--results", str(results / fmt), "--parallel", "8", "--timeout", "120",
                 "--format", fmt, "--junit", str(tmp_path / f"extra-{fmt}.xml"), "--html", str(tmp_path / f"extra-{fmt}.html")],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            )
            for fmt in ("text", "json")
        }
        for fmt, process in running.items():  # both formats at once: each batch waits on time-outs
            stdout, stderr = process.communicate(timeout=600)
            assert process.returncode == 3, stdout.decode() + stderr.decode()
            outputs[f"run --format {fmt} stdout"], outputs[f"run --format {fmt} stderr"] = stdout, stderr
            summary = json.loads((results / fmt / "summary.json").read_text())
            assert (summary["passed"], summary["errored"]) == (1, len(cases) - 1), summary
        # The faults were served, and the keys really went out (so not finding them means something).
        sent = b"".join(seen.raw for seen in llm.seen + agent.seen)
        assert planted["OPENAI_API_KEY"].encode() in sent and planted["ANTHROPIC_API_KEY"].encode() in sent
        assert base64.b64encode(f"bot:{planted['agent_password']}".encode()) in sent
        assert set(llm.faults) == {"status", "hang"} and set(agent.faults) == {"status"}
        assert (root / ".cache").is_dir() and any((root / ".cache").rglob("*.json"))

        searched = {str(p): data for p, data in every_written_text(tmp_path).items() if p.name != "conftest.yml"} | outputs
        found = leaks(planted, searched)
        record("planted secrets", {
            "values planted": len(planted) + 1, "runs": 2 * len(cases), "failing runs": 2 * (len(cases) - 1),
            "files and streams searched": len(searched), "bytes searched": sum(map(len, searched.values())), "leaks": len(found),
        })
        assert found == []
    finally:
        llm.stop()
        agent.stop()
