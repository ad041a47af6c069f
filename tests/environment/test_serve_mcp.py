"""The environment served over MCP on loopback, driven by the official SDK's own Streamable HTTP client."""

from __future__ import annotations

import subprocess
import sys

import anyio
import httpx
import orjson
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from dialogcheck.environment import load_environment
from dialogcheck.environment.serve import RUN_HEADER

from .conftest import HANG, RUN_A, RUN_B, Sleeps, with_faults, write_environment


def session(url: str, script, headers: dict[str, str] | None = None, statuses: list[int] | None = None, mode: str = "auto"):
    """Connect the SDK's client to `url` (in `mode`: `auto`, `legacy`, a protocol version) and return what
    `script(client)` returns."""

    async def seen(response):
        if statuses is not None:
            statuses.append(response.status_code)

    async def main():
        async with create_mcp_http_client(headers=headers or {}) as http:
            http.event_hooks["response"].append(seen)
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=HANG, mode=mode) as client:
                return await script(client)

    return anyio.run(main)


def text_of(result) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def test_tools_list_gives_the_environments_tools_with_their_schemas(server, shop):
    run = shop.start(seed=0)
    mcp = server.attach(RUN_A, run)["mcp"]

    async def script(client):
        return (await client.list_tools()).tools

    tools = session(mcp, script)
    assert [(t.name, t.description, t.input_schema) for t in tools] == [(t["name"], t["description"], t["parameters"]) for t in run.tools]
    assert run.events == []  # listing is not a call


@pytest.mark.parametrize("mode", ["auto", "legacy", "2026-07-28"])
def test_tools_call_answers_as_the_environment_does_and_records_each_call(server, shop, mode):
    """Through either era of the protocol: the initialize handshake (legacy) or the 2026 one without it."""
    run = shop.start(seed=0)
    mcp = server.attach(RUN_A, run)["mcp"]

    async def script(client):
        read = await client.call_tool("get_order", {"order_id": "O1"})
        cancelled = await client.call_tool("cancel_order", {"order_id": "O1", "reason": "late"})
        again = await client.call_tool("get_order", {"order_id": "O1"})
        missing = await client.call_tool("get_order", {"order_id": "O9"})
        invalid = await client.call_tool("get_order", {"order_id": 5})
        bare = await client.call_tool("get_order")
        return read, cancelled, again, missing, invalid, bare

    read, cancelled, again, missing, invalid, bare = session(mcp, script, mode=mode)
    order = {"id": "O1", "status": "placed", "total": 30, "paid": True}
    assert (read.is_error, orjson.loads(text_of(read)), read.structured_content) == (False, order, order)
    assert (cancelled.is_error, cancelled.structured_content) == (False, {"order_id": "O1", "status": "cancelled"})
    assert again.structured_content["status"] == "cancelled"
    assert (missing.is_error, text_of(missing), missing.structured_content) == (True, "not found: orders.O9", None)
    assert (invalid.is_error, text_of(invalid)) == (True, "invalid arguments at `order_id`: 5 is not of type 'string'")
    assert (bare.is_error, text_of(bare)) == (True, "invalid arguments: 'order_id' is a required property")
    assert [(e["tool_name"], e["arguments"], e["is_error"]) for e in run.events] == [
        ("get_order", {"order_id": "O1"}, False),
        ("cancel_order", {"order_id": "O1", "reason": "late"}, False),
        ("get_order", {"order_id": "O1"}, False),
        ("get_order", {"order_id": "O9"}, True),
        ("get_order", {"order_id": 5}, True),
        ("get_order", {}, True),
    ]
    assert {(e["source"], e["mcp_server"]) for e in run.events} == {("mcp", "shop")}  # as an MCP tool's run is recorded


def test_an_unknown_tool_is_a_tool_error_the_agent_sees(server, shop):
    run = shop.start(seed=0)
    mcp = server.attach(RUN_A, run)["mcp"]

    async def script(client):
        return await client.call_tool("get_ordr", {"order_id": "O1"})

    result = session(mcp, script)
    assert result.is_error is True
    assert text_of(result).startswith("unknown tool `get_ordr` (did you mean `get_order`?)")
    assert run.events[0]["tool_name"] == "get_ordr"


def test_a_fault_reaches_the_mcp_client_and_is_recorded(server, tmp_path):
    sleeps = Sleeps()
    faults = "- {tool: get_order, kind: error, status: 503, message: try again later, on_call: 1}\n- {tool: get_order, kind: malformed, on_call: 2}\n"
    run = load_environment(write_environment(tmp_path, with_faults(faults))).start(seed=0, sleep=sleeps)
    mcp = server.attach(RUN_A, run)["mcp"]

    async def script(client):
        return [await client.call_tool("get_order", {"order_id": "O1"}) for _ in range(3)]

    failed, malformed, fine = session(mcp, script)
    assert (failed.is_error, text_of(failed)) == (True, "try again later")
    assert malformed.is_error is False
    assert text_of(malformed) == run.events[1]["result"]  # a string result is the text as it is, cut JSON included
    assert malformed.structured_content is None
    assert fine.structured_content == {"id": "O1", "status": "placed", "total": 30, "paid": True}
    assert [e["metadata"].get("fault", {}).get("kind") for e in run.events] == ["error", "malformed", None]


def test_two_runs_over_mcp_never_see_each_others_writes(server, shop):
    first, second = shop.start(seed=0), shop.start(seed=0)
    a, b = server.attach(RUN_A, first)["mcp"], server.attach(RUN_B, second)["mcp"]

    async def cancel(client):
        return await client.call_tool("cancel_order", {"order_id": "O1", "reason": "late"})

    async def read(client):
        return await client.call_tool("get_order", {"order_id": "O1"})

    session(a, cancel)
    assert session(b, read).structured_content["status"] == "placed"
    assert session(a, read).structured_content["status"] == "cancelled"
    assert (len(first.events), len(second.events)) == (2, 1)


def test_the_root_mcp_address_routes_as_the_http_one(server, shop):
    first, second = shop.start(seed=0), shop.start(seed=0)
    server.attach(RUN_A, first)
    root = server.root_addresses["mcp"]

    async def read(client):
        return await client.call_tool("get_order", {"order_id": "O2"})

    assert session(root, read).structured_content["id"] == "O2"
    server.attach(RUN_B, second)
    statuses: list[int] = []
    with pytest.raises(Exception):  # noqa: B017 - the SDK's client gives up (an exception group), the status says why
        session(root, read, statuses=statuses)
    assert statuses and set(statuses) == {409}
    assert session(root, read, headers={RUN_HEADER: RUN_B}).structured_content["id"] == "O2"
    assert (len(first.events), len(second.events)) == (1, 1)
    refused = httpx.post(root, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=HANG)
    assert refused.status_code == 409
    assert refused.json()["error"].startswith("2 runs are in flight")


def test_an_unknown_run_over_mcp_is_404(server):
    url = f"{server.root_addresses['http']}/runs/{RUN_A}/mcp"
    answer = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=HANG)
    assert answer.status_code == 404
    assert answer.json() == {"error": f"no run `{RUN_A}` is in flight here"}


def test_without_the_sdk_http_is_served_and_the_mcp_address_is_none(tmp_path):
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "import httpx\n"
        "from dialogcheck.environment import load_environment\n"
        "from dialogcheck.environment.serve import EnvironmentServer\n"
        f"run = load_environment({str(write_environment(tmp_path, with_faults('[]')))!r}).start(seed=0)\n"
        "with EnvironmentServer() as server:\n"
        "    addresses = server.attach('sim-1', run)\n"
        "    print(addresses['mcp'], server.root_addresses['mcp'], server.mcp_problem)\n"
        "    print(httpx.post(addresses['http'] + '/tools/get_order', json={'order_id': 'O1'}).json()['is_error'])\n"
        "    print(httpx.post(addresses['http'] + '/mcp', json={}).status_code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "None None serving the environment over MCP needs the MCP SDK: pip install 'dialogcheck[mcp]'", "False", "404",
    ]


def test_mcp_clients_of_several_runs_at_once_each_see_their_own(server, shop):
    runs = {f"sim-{n}": shop.start(seed=0) for n in range(6)}
    addresses = {run_id: server.attach(run_id, run)["mcp"] for run_id, run in runs.items()}
    seen: dict[str, object] = {}

    async def agent(run_id: str) -> None:
        async with Client(streamable_http_client(addresses[run_id]), read_timeout_seconds=HANG) as client:
            for n in range(3):
                await client.call_tool("cancel_order", {"order_id": "O2", "reason": f"{run_id}/{n}"})
            seen[run_id] = (await client.call_tool("get_order", {"order_id": "O2"})).structured_content

    async def main():
        async with anyio.create_task_group() as group:
            for run_id in runs:
                group.start_soon(agent, run_id)

    anyio.run(main)
    for run_id, run in runs.items():
        assert seen[run_id]["status"] == "cancelled"
        assert [refund["note"] for refund in run.state["refunds"]] == [f"refund: {run_id}/{n}" for n in range(3)]
