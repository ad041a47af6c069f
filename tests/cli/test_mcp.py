"""`dialogcheck mcp`: the installed command as a real subprocess, driven by the MCP SDK's own client over stdio
(and once over Streamable HTTP): every tool on the example project answers what the command's `--format json`
prints, bad arguments and paths outside the project are tool errors, and the server lives on after each."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.compare.builders import simple, write_batch, write_run_folder
from tests.compare.test_robustness import BASELINE, FAULTED
from tests.conftest import EXAMPLE

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
#: Seconds any wait on the server may take (its start, an answer, its exit): a bound on a hang, never reached by a
#: server that works, however loaded the machine.
HANG = 300
TOOLS = {"validate", "check", "run", "report", "compare", "explain"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "card_replace"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".dialogcheck", "results"))
    return target


def cli_json(project: Path, *args: str) -> dict:
    """What the command prints with `--format json`, run in the project folder."""
    done = subprocess.run([str(DIALOGCHECK), *args, "--format", "json"], cwd=project, capture_output=True, text=True, check=False)
    return json.loads(done.stdout)


def session(project: Path, script, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> None:
    """Start `dialogcheck mcp` in the project, connect the SDK's client over stdio, and run `script(client)`."""

    async def main():
        params = StdioServerParameters(command=str(DIALOGCHECK), args=["mcp", *args], cwd=str(project), env=env)
        async with Client(params, read_timeout_seconds=HANG) as client:
            await script(client)

    anyio.run(main)


def test_the_tools_and_their_schemas(project):
    async def script(client):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        required = {name: set(tool.input_schema.get("required", ())) for name, tool in tools.items()}
        assert required == {
            "validate": {"paths"}, "check": {"subject", "conversations"}, "run": {"paths"},
            "report": {"results"}, "compare": {"base", "new"}, "explain": {"results", "run"},
        }
        run = tools["run"].input_schema["properties"]
        assert (run["runs"]["default"], run["runs"]["minimum"], run["no_judge"]["default"]) == (1, 1, False)
        assert tools["check"].input_schema["properties"]["no_judge"]["default"] is False

    session(project, script)


def test_validate_answers_what_validate_prints(project):
    broken = project / "eval" / "scenarios" / "run_cancel.yml"
    broken.write_text(broken.read_text().replace("skill_cancelled:", "skill_canceled:", 1))

    async def script(client):
        result = await client.call_tool("validate", {"paths": ["."]})
        assert not result.is_error
        assert result.structured_content == cli_json(project, "validate", ".")
        assert result.structured_content["valid"] is False
        error = result.structured_content["error"]
        assert (error["file"], error["line"]) == ("eval/scenarios/run_cancel.yml", 32)
        assert "did you mean `skill_cancelled`?" in result.content[0].text
        assert "16 valid, 1 with problems" in result.content[0].text

    session(project, script)


def test_check_answers_what_check_prints_for_a_scenario_and_an_sop(project):
    scenario = "eval/scenarios/card_replace_confirms_first.yml"
    bad = "conversations/damaged_card_no_confirmation.jsonl"
    sop_conversations = ["conversations/sop_follows_procedure.jsonl", "conversations/sop_orders_without_confirming.jsonl"]

    async def script(client):
        one = await client.call_tool("check", {"subject": scenario, "conversations": [bad]})
        assert not one.is_error
        assert one.structured_content == cli_json(project, "check", "--scenario", scenario, bad)
        assert one.structured_content["verdict"] == "fail"
        several = await client.call_tool("check", {"subject": "sops/replace_card.yml", "conversations": sop_conversations, "no_judge": True})
        assert several.structured_content == cli_json(project, "check", "--sop", "sops/replace_card.yml", *sop_conversations, "--no-judge")
        assert [c["verdict"] for c in several.structured_content["conversations"]] == ["pass", "fail"]
        assert "2 conversations: 1 passed, 1 failed" in several.content[0].text

    session(project, script)


def test_run_then_report_explain_and_compare(project):
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done, total, message):
        progress.append((done, total, message))

    async def script(client):
        ran = await client.call_tool("run", {"paths": ["."], "no_judge": True}, progress_callback=on_progress)
        assert not ran.is_error
        summary = ran.structured_content
        assert (summary["passed"], summary["failed"], summary["errored"]) == (12, 2, 0)
        folder = Path(summary["results"])
        assert folder.resolve().is_relative_to(project.resolve()) and (folder / "summary.json").is_file()
        assert "14 runs: 12 passed, 2 failed, 0 errored" in ran.content[0].text
        assert [p[:2] for p in progress] == [(n, 14) for n in range(1, 15)]
        assert "run_stolen_card run 1: fail" in {p[2] for p in progress}

        reported = await client.call_tool("report", {"results": str(folder)})
        assert reported.structured_content == cli_json(project, "report", str(folder))

        explained = await client.call_tool("explain", {"results": str(folder), "run": "run_stolen_card/run_1"})
        failing = explained.structured_content["failing_checks"]
        assert [c["check"] for c in failing] == [
            "sequencing bot_uttered utter_confirm_replacement → tool_executed order_replacement (local)",
            "SOP confirm_before_ordering Ask the customer to confirm before ordering",
        ]
        sop = failing[1]
        assert sop["evidence"] and sop["evidence"][0]["event"]["tool_name"] == "order_replacement"
        assert "closest: bot message utter_greet" in explained.content[0].text
        by_item_id = await client.call_tool("explain", {"results": str(folder), "run": "run_stolen_card[run-1]"})
        assert by_item_id.structured_content == explained.structured_content
        passed = await client.call_tool("explain", {"results": str(folder), "run": "run_cancel"})
        assert passed.structured_content["verdict"] == "pass" and passed.structured_content["failing_checks"] == []
        unknown = await client.call_tool("explain", {"results": str(folder), "run": "run_stolen_card/run_2"})
        assert unknown.is_error and "no run 'run_stolen_card/run_2'" in unknown.content[0].text

        compared = await client.call_tool("compare", {"base": str(folder), "new": str(folder)})
        assert not compared.is_error
        assert compared.structured_content == cli_json(project, "compare", str(folder), str(folder))
        assert compared.structured_content["verdict"] == "no significant change"

    session(project, script)


def test_bad_arguments_and_paths_outside_the_project_are_tool_errors_and_the_server_lives_on(project, tmp_path):
    outside = tmp_path / "elsewhere.yml"
    outside.write_text("scenario: {}\n")

    async def script(client):
        for name, arguments, said in [
            ("run", {"paths": ["."], "runs": 0}, "greater than or equal to 1"),
            ("run", {"paths": []}, "at least 1 item"),
            ("validate", {}, "paths"),
            ("check", {"subject": 3, "conversations": ["x"]}, "subject"),
            ("validate", {"paths": ["../elsewhere.yml"]}, "outside the project folder"),
            ("check", {"subject": str(outside), "conversations": ["conversations"]}, "outside the project folder"),
            ("report", {"results": "/"}, "outside the project folder"),
            ("check", {"subject": "eval/conftest.yml", "conversations": ["conversations"]}, "not a scenario or SOP file"),
        ]:
            result = await client.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            assert said in result.content[0].text, (name, result.content[0].text)
        missing = await client.call_tool("report", {"results": "eval/results/none"})
        assert missing.is_error
        assert missing.content[0].text == "eval/results/none:1:1: no results folder here (give the folder `dialogcheck run` wrote)"
        assert missing.structured_content == cli_json(project, "report", "eval/results/none")
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS  # still serving
        still = await client.call_tool("validate", {"paths": ["sops"]})
        assert not still.is_error and still.structured_content["valid"] is True

    session(project, script)


def test_a_match_that_backtracks_catastrophically_is_a_tool_error_and_the_server_answers_the_next_call(project):
    slow = "a" * 5000 + "!"
    write_batch(project / "base.json", [simple(slow, "pass"), simple("task-1", "pass")])
    write_batch(project / "new.json", [simple("task-1", "fail")])

    async def script(client):
        for match, said in [
            ("(a+)+$", f"base.json:2:1: --match /(a+)+$/ ran out of its 1 s for searching `{slow[:79]}…` (5,001 characters):"),
            ("(a|aa)+$", "base.json:2:1: --match /(a|aa)+$/ ran out of its 1 s for searching"),
            ("(x{5000})", "too large a regular expression: a repeat count of 5,000 is more than the limit of 1,000"),
        ]:
            result = await client.call_tool("compare", {"base": "base.json", "new": "new.json", "match": match})
            assert result.is_error, match
            assert result.content[0].text.startswith(said), result.content[0].text
        still = await client.call_tool("validate", {"paths": ["sops"]})
        assert not still.is_error and still.structured_content["valid"] is True
        compared = await client.call_tool("compare", {"base": "new.json", "new": "new.json", "match": r"task-(\d+)"})
        assert not compared.is_error and compared.structured_content["verdict"] == "no significant change"

    session(project, script)


def test_a_path_the_system_cannot_take_and_a_run_number_too_long_are_argument_errors(project):
    """A NUL, a name over 255 bytes, a path over 4,095, a run number of 5,000 digits: each the caller's mistake, said
    as one, never `dialogcheck failed` (the mark of a bug of ours)."""
    long_name, long_path, digits = "x" * 300, "/".join(["d" * 200] * 21), "9" * 5000

    async def script(client):
        for name, arguments, said in [
            ("validate", {"paths": ["sops/a\x00b.yml"]}, "a path cannot hold a NUL character"),
            ("validate", {"paths": [long_name]}, "a name in this path is 300 bytes long"),
            ("check", {"subject": f"eval/{long_name}/s.yml", "conversations": ["conversations"]}, "a name in this path is 300 bytes long"),
            ("check", {"subject": "sops/replace_card.yml", "conversations": [long_path]}, "this path is 4,220 bytes long"),
            ("run", {"paths": ["\x00"]}, "a path cannot hold a NUL character"),
            ("report", {"results": long_name}, "a name in this path is 300 bytes long"),
            ("compare", {"base": "eval", "new": f"a\x00{long_name}"}, "a path cannot hold a NUL character"),
            ("explain", {"results": long_name, "run": "x"}, "a name in this path is 300 bytes long"),
            ("explain", {"results": "eval/results/b", "run": f"s/run_{digits}"}, "no run 's/run_999"),
            ("explain", {"results": "eval/results/b", "run": f"s[run-{digits}]"}, "no run 's[run-999"),
        ]:
            result = await client.call_tool(name, arguments)
            text = result.content[0].text
            assert result.is_error, (name, arguments)
            assert said in text and "dialogcheck failed" not in text, (name, text[:300])
            assert len(text) < 1_000, (name, text[:300])  # the path is named by its start, not whole

    folder = project / "eval" / "results" / "b"
    scenario = project / "eval" / "scenarios" / "card_replace_confirms_first.yml"
    subprocess.run([str(DIALOGCHECK), "run", str(scenario), "--no-judge", "--results", str(folder)], cwd=project, capture_output=True, check=True)
    session(project, script)


def test_no_config_above_the_server_s_folder_is_searched_or_loaded(tmp_path):
    """Started in outer/inner (or with --root outer/inner), `run` and `check` find no config: outer/eval/conftest.yml,
    whose agent is outer/outer_agent.py, is neither loaded nor run."""
    outer = tmp_path / "outer"
    inner = outer / "inner"
    (inner / "eval" / "scenarios").mkdir(parents=True)
    (outer / "eval").mkdir()
    ran = outer / "ran.txt"
    (outer / "outer_agent.py").write_text(
        f"open({str(ran)!r}, 'w').write('imported')\n"
        "def respond(conversation_id, text, initial_slots=None):\n    return {'messages': [{'text': 'ok'}], 'events': []}\n"
    )
    (outer / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'outer_agent:respond'}\nnot_a_setting: 1\n")
    (inner / "eval" / "scenarios" / "s.yml").write_text(SECRET_SCENARIO.replace("${MY_SECRET}", "x"))
    (inner / "c.jsonl").write_text('{"event": "user", "text": "hi"}\n')

    async def script(client):
        result = await client.call_tool("run", {"paths": ["."], "no_judge": True})
        text = result.content[0].text
        assert result.is_error, text
        assert "outer" not in text.replace(str(inner), "INNER"), text
        checked = await client.call_tool("check", {"subject": "eval/scenarios/s.yml", "conversations": ["c.jsonl"], "no_judge": True})
        assert not checked.is_error, checked.content[0].text  # the outer config, which has a problem, was not read
        valid = await client.call_tool("validate", {"paths": ["."]})
        assert valid.structured_content["valid"] is True, valid.content[0].text

    session(inner, script)
    session(outer, script, args=("--root", "inner"))
    assert not ran.exists()
    assert not (outer / "eval" / "results").exists() and not (inner / "eval" / "results").exists()


def test_an_agent_that_is_down_is_a_tool_error_with_runs_message(project):
    (project / "eval" / "conftest.yml").write_text("agent: {type: http, url: 'http://127.0.0.1:9/chat'}\n")

    async def script(client):
        result = await client.call_tool("run", {"paths": ["."], "no_judge": True})
        assert result.is_error
        assert result.content[0].text.startswith("the agent is not reachable, so no run was started:")
        assert not (project / "eval" / "results").exists()

    session(project, script)


@pytest.mark.parametrize(
    "conftest",
    [
        "agent: {type: http, url: 'http://127.0.0.1:9/chat'}\n",  # down
        "agent: {type: python, callable: 'no_such_module:respond'}\n",  # cannot be set up: said at the config, as `run` says it
    ],
    ids=["down", "cannot-be-set-up"],
)
def test_run_s_errors_are_the_error_document_run_prints(project, conftest):
    (project / "eval" / "conftest.yml").write_text(conftest)
    printed = subprocess.run([str(DIALOGCHECK), "run", ".", "--no-judge"], cwd=project, capture_output=True, text=True, check=False)

    async def script(client):
        result = await client.call_tool("run", {"paths": ["."], "no_judge": True})
        assert result.is_error
        assert result.structured_content == cli_json(project, "run", ".", "--no-judge")
        assert result.content[0].text + "\n" == printed.stderr

    session(project, script)


def serve_http(project: Path, *args: str) -> tuple[subprocess.Popen, int, str]:
    """`dialogcheck mcp --http PORT` in the project, once it listens: the process, its port and the token it printed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([str(DIALOGCHECK), "mcp", "--http", str(port), *args], cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(server.stderr.readline()), daemon=True).start()
    try:
        line = lines.get(timeout=HANG)  # said before it listens
    except queue.Empty:
        line = f"(nothing within {HANG} s)"
    token = re.search(r"Authorization: Bearer ([A-Za-z0-9_-]{40,})`", line)
    if token is None:
        server.kill()
        server.wait(timeout=HANG)
    assert token, line
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    return server, port, token.group(1)


def http_session(port: int, headers: dict[str, str], script, statuses: list[int]) -> None:
    """Connect the SDK's Streamable HTTP client, sending `headers` with every request, and run `script(client)`;
    the status of every response the server gave goes to `statuses`."""

    async def seen(response):
        statuses.append(response.status_code)

    async def main():
        async with create_mcp_http_client(headers=headers) as http:
            http.event_hooks["response"].append(seen)
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), read_timeout_seconds=HANG) as client:
                await script(client)

    anyio.run(main)


def test_streamable_http_on_loopback_answers_only_the_token_printed_at_its_start(project):
    server, port, token = serve_http(project)
    try:
        async def script(client):
            assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
            result = await client.call_tool("validate", {"paths": ["sops"]})
            assert result.structured_content == cli_json(project, "validate", "sops")

        statuses: list[int] = []
        http_session(port, {"Authorization": f"Bearer {token}"}, script, statuses)
        assert statuses and set(statuses) <= {200, 202, 204}, statuses
        for refused in [{}, {"Authorization": f"Bearer {token[:-1]}{'x' if token[-1] != 'x' else 'y'}"}, {"Authorization": f"Basic {token}"}, {"Authorization": token}]:
            statuses = []
            with pytest.raises(Exception):  # noqa: B017 - the SDK's client gives up (an exception group), and the statuses say why
                http_session(port, refused, script, statuses)
            assert statuses and set(statuses) == {401}, (refused, statuses)
            request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=b"{}", headers={**refused, "Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as status:
                urllib.request.urlopen(request, timeout=HANG)
            assert status.value.code == 401
        assert server.poll() is None  # still serving
    finally:
        server.terminate()
        server.wait(timeout=HANG)
    again, _, other = serve_http(project)
    again.terminate()
    again.wait(timeout=HANG)
    assert other != token  # a new one each start


def test_without_the_sdk_the_command_says_how_to_install_it():
    code = "import sys; sys.modules['mcp'] = None; from dialogcheck._cli.main import main; main(['mcp'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "dialogcheck mcp needs the MCP SDK: pip install 'dialogcheck[mcp]'" in done.stderr


def test_a_crash_of_a_tool_is_a_tool_error_not_the_end_of_the_server(tmp_path):
    from dialogcheck._cli.mcp_server import Project, tool_body

    def broken(project: Project) -> None:
        raise KeyError("lost")

    result = anyio.run(tool_body(broken), Project(tmp_path))
    assert result.is_error
    assert result.content[0].text == "dialogcheck failed: KeyError: 'lost'"
    assert result.structured_content == {"error": {"message": "dialogcheck failed: KeyError: 'lost'", "file": None, "line": None, "column": None}}



SECRET_SCENARIO = "scenario:\n  name: s\n  simulation_context: x\n  script: ['say ${MY_SECRET}']\n  goals:\n    criteria: ['leak ${MY_SECRET}']\n"


@pytest.mark.parametrize(
    ("how", "args"),
    [({"DIALOGCHECK_SAFE_ENV": "1"}, ()), ({"DIALOGCHECK_ALLOW_ENV": "OTHER"}, ()), ({}, ("--safe-env",))],
    ids=["DIALOGCHECK_SAFE_ENV", "DIALOGCHECK_ALLOW_ENV", "--safe-env"],
)
def test_the_server_loads_every_file_under_safe_env_as_the_commands_do(project, how, args):
    """`${MY_SECRET}` reaches neither the agent (`run`) nor the judge (`check`'s criterion): each tool refuses the
    scenario at its line and column, as `dialogcheck run` and `check` refuse it."""
    heard = project / "heard.txt"
    (project / "agent.py").write_text(
        "def respond(conversation_id, text, initial_slots=None):\n"
        f"    if text is not None:\n        open({str(heard)!r}, 'a').write(text)\n"
        "    return {'messages': [{'text': 'ok'}], 'events': []}\n"
    )
    (project / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    scenarios = project / "eval" / "scenarios"
    shutil.rmtree(scenarios)
    scenarios.mkdir()
    (scenarios / "s.yml").write_text(SECRET_SCENARIO)
    (project / "c.jsonl").write_text('{"event": "user", "text": "hi"}\n')
    refused = "eval/scenarios/s.yml:4:12: environment variable `MY_SECRET` may not be read with --safe-env (used as `${MY_SECRET}`)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALOGCHECK_")} | {"MY_SECRET": "planted-env-value", **how}

    async def script(client):
        for name, arguments in [
            ("validate", {"paths": ["eval/scenarios"]}),
            ("check", {"subject": "eval/scenarios/s.yml", "conversations": ["c.jsonl"], "no_judge": True}),
            ("run", {"paths": ["."], "no_judge": True}),
        ]:
            result = await client.call_tool(name, arguments)
            said = result.content[0].text
            assert refused in said, (name, said)
            assert "planted-env-value" not in said + json.dumps(result.structured_content), name
        assert not heard.exists()

    session(project, script, env, args)
    assert subprocess.run([str(DIALOGCHECK), "run", ".", "--no-judge", *args], cwd=project, env=env, capture_output=True, check=False).returncode == 2


def test_compare_of_a_faulted_batch_against_its_baseline_answers_its_robustness(project):
    write_run_folder(project / "baseline", BASELINE)
    write_run_folder(project / "faulted", FAULTED)
    expected = cli_json(project, "compare", "baseline", "faulted")

    async def script(client):
        compared = await client.call_tool("compare", {"base": "baseline", "new": "faulted"})
        assert not compared.is_error, compared.content
        assert compared.structured_content["robustness"] == expected["robustness"]
        assert compared.structured_content["robustness"]["overall"]["ratio"] == pytest.approx(7 / 9)
        assert "robustness (NEW ran with faults on, BASE with them off; errored runs left out):" in compared.content[0].text

    session(project, script)
