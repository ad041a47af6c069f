"""`run` serving each run's environment on loopback to an agent over HTTP: a real HTTP agent calling its tools
over HTTP and over MCP (the official SDK's client), and an agent started apart reaching the root address."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from dialogcheck import run_scenarios

from ..environment.conftest import SHOP, write_environment

SCENARIO = """\
scenario:
  name: {name}
  simulation_context: You want your order cancelled.
  environment: shop
  script: [please cancel my order]
  goals:
    assertions:
      - tool_executed: {{tool_name: cancel_order, source: {source}}}
      - state_equals: {{path: orders.O1.status, value: cancelled}}
"""


async def call_over_mcp(url: str, name: str, arguments: dict) -> dict:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(url), read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        assert name in [tool.name for tool in listed.tools]
        answer = await client.call_tool(name, arguments)
        return {"is_error": answer.is_error, "text": answer.content[0].text}


class Agent:
    """An HTTP agent on loopback: it keeps the environment addresses each opening request gives, and cancels the
    order through them (over `via`: "http", "mcp", or "root": the address an agent started apart was given)."""

    def __init__(self, via: str, root: str | None = None):
        self.via, self.root = via, root
        self.addresses: dict[str, dict] = {}
        self.answers: list[dict] = []

    async def alive(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        cid = body["conversation_id"]
        if body["text"] is None:
            self.addresses[cid] = body.get("environment") or {}
            return web.json_response({"messages": [{"text": "Hello"}]})
        arguments = {"order_id": "O1", "reason": "asked"}
        if self.via == "mcp":
            answer = await call_over_mcp(self.addresses[cid]["mcp"], "cancel_order", arguments)
        else:
            base = self.root if self.via == "root" else self.addresses[cid]["http"]
            async with httpx.AsyncClient() as client:
                answer = (await client.post(f"{base}/tools/cancel_order", json=arguments, timeout=60)).json()
        self.answers.append(answer)
        text = "Sorry, that failed." if answer["is_error"] else "Your order is cancelled."
        return web.json_response({"messages": [{"text": text}]})


@pytest.fixture
def serve_agent():
    """Serve an `Agent` on a loopback port in a thread of its own; yields a function giving its URL."""
    started: list[tuple[asyncio.AbstractEventLoop, web.AppRunner, threading.Thread]] = []

    def serve(agent: Agent) -> str:
        loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_post("/", agent.handle)
        app.router.add_get("/", agent.alive)
        runner = web.AppRunner(app)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # a started site has its server
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        started.append((loop, runner, thread))
        return f"http://127.0.0.1:{port}/"

    yield serve
    for loop, runner, thread in started:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(60)


def project(root: Path, scenarios: int = 1, source: str = "local") -> Path:
    write_environment(root, SHOP)
    folder = root / "eval" / "scenarios"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(scenarios):
        (folder / f"cancel_{n}.yml").write_text(SCENARIO.format(name=f"cancel {n}", source=source))
    return root


def run_json(folder: Path, slug: str, number: int = 1) -> dict:
    return json.loads((folder / slug / f"run_{number}.json").read_text())


@pytest.mark.parametrize("via", ["http", "mcp"])
def test_an_http_agent_calls_its_runs_own_environment_at_the_addresses_of_its_opening_request(tmp_path, serve_agent, via):
    agent = Agent(via)
    url = serve_agent(agent)
    source = "mcp" if via == "mcp" else "local"  # a call over MCP is recorded as an MCP tool's run
    batch = run_scenarios(project(tmp_path, source="mcp, mcp_server: shop" if via == "mcp" else "local"), agent=f"http:{url}", runs=3, parallel=3, results=tmp_path / "out", no_judge=True)

    assert (batch.passed, batch.failed, batch.errored) == (3, 0, 0), [run.error for run in batch.runs]
    assert len(agent.addresses) == 3
    for addresses in agent.addresses.values():
        assert addresses["http"].startswith("http://127.0.0.1:") and "/runs/sim-" in addresses["http"]
        assert addresses["mcp"] == addresses["http"] + "/mcp"
    assert len({a["http"] for a in agent.addresses.values()}) == 3  # each run its own
    for number in (1, 2, 3):
        recorded = [json.loads(line) for line in (tmp_path / "out" / "cancel_0" / f"run_{number}.events.jsonl").read_text().splitlines()]
        [cancel] = [e for e in recorded if e["event"] == "tool_executed"]
        assert cancel["metadata"]["environment"] is True and cancel["arguments"] == {"order_id": "O1", "reason": "asked"}
        assert cancel["source"] == source and cancel.get("mcp_server") == ("shop" if via == "mcp" else None)
        assert len(run_json(tmp_path / "out", "cancel_0", number)["environment"]["final_state"]["refunds"]) == 1
    with pytest.raises(httpx.HTTPError):  # the batch is over: nothing serves the runs any more
        httpx.get(next(iter(agent.addresses.values()))["http"] + "/tools", timeout=5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_agent_started_apart_reaches_the_root_address_the_variable_names(tmp_path, serve_agent, monkeypatch):
    root = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("DIALOGCHECK_ENVIRONMENT_HTTP", root)
    agent = Agent("root", root=root)
    url = serve_agent(agent)
    batch = run_scenarios(project(tmp_path, scenarios=2), agent=f"http:{url}", parallel=1, results=tmp_path / "out", no_judge=True)

    assert batch.passed == 2, [run.error for run in batch.runs]
    assert [answer["is_error"] for answer in agent.answers] == [False, False]


def test_an_address_in_the_variable_that_is_not_loopback_stops_the_batch_before_anything_is_written(tmp_path, serve_agent, monkeypatch):
    from dialogcheck.errors import LoadError

    monkeypatch.setenv("DIALOGCHECK_ENVIRONMENT_HTTP", "http://192.0.2.1:8765")
    url = serve_agent(Agent("http"))
    with pytest.raises(LoadError) as raised:
        run_scenarios(project(tmp_path), agent=f"http:{url}", results=tmp_path / "out", no_judge=True)
    assert str(raised.value.problems[0]).startswith("DIALOGCHECK_ENVIRONMENT_HTTP:1:1: DIALOGCHECK_ENVIRONMENT_HTTP: ")
    assert not (tmp_path / "out").exists()
