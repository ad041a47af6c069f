"""The environment's cost per tool call over HTTP and over MCP, against a direct Python call.

The tool is a realistic read: `get_order` looks up one order by its id in a state of 1,000 orders (each with
a customer, an address and three items), as an agent's first call of a support conversation would. Three ways:

* direct: `RunEnvironment.call` in this process (what a `python` agent is handed);
* HTTP: `POST {http}/tools/get_order` from another process through httpx with keep-alive, the environment served
  by `EnvironmentServer` in this process (as `dialogcheck run` serves it);
* MCP: `tools/call` from another process through the official SDK's Streamable HTTP client, one session.

Each round times every way in turn, each on a fresh run of the environment (its own copy of the state); a
client process makes a few calls before its timed ones. Wall time per call is what the agent waits; CPU per
call is what this process (the environment and its server) spends, with the client's CPU apart. Ratios are of
each round's figure over the direct call's in the same round; the table gives the median over rounds. Every
answer is checked (the order asked for, not an error), so a broken server cannot look fast.

Run: .venv/bin/python benchmarks/environment_calls.py [--calls N] [--mcp-calls N] [--rounds N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, log, save, table

ORDERS = 1_000
TOOL = """\
environment:
  state: state.json
  tools:
    - name: get_order
      description: Look up an order by its id.
      parameters:
        type: object
        properties: {order_id: {type: string, pattern: "^O[0-9]+$"}}
        required: [order_id]
      read: {path: "orders.{order_id}", not_found: "no order {order_id}"}
"""


def write_project(folder: Path) -> Path:
    """The environment file and its state of `ORDERS` orders; the file's path."""
    orders = {
        f"O{n}": {
            "id": f"O{n}", "status": ("placed", "shipped", "delivered")[n % 3], "total": round(10 + n * 0.37, 2), "paid": n % 7 != 0,
            "customer": {"id": f"C{n % 400}", "name": f"Customer {n % 400}", "email": f"customer{n % 400}@example.com"},
            "address": {"street": f"{n} Main Street", "city": ("Paris", "Oslo", "Lima")[n % 3], "zip": f"{10000 + n}"},
            "items": [{"sku": f"SKU-{n}-{i}", "quantity": i + 1, "price": 5.0 + i} for i in range(3)],
        }
        for n in range(ORDERS)
    }
    environments = folder / "eval" / "environments"
    environments.mkdir(parents=True, exist_ok=True)
    (folder / "state.json").write_bytes(orjson.dumps({"orders": orders, "refunds": []}))
    path = environments / "shop.yml"
    path.write_text(TOOL)
    return path


def order_ids(calls: int) -> list[str]:
    return [f"O{(n * 389) % ORDERS}" for n in range(calls)]  # spread over the table


# --------------------------------------------------------------------------- the client processes


def http_client(url: str, calls: int) -> dict[str, Any]:
    import httpx

    wrong = 0
    with httpx.Client(timeout=60.0) as http:
        for order_id in order_ids(20):
            http.post(f"{url}/tools/get_order", json={"order_id": order_id})
        ids = order_ids(calls)
        cpu, start = time.process_time(), time.perf_counter()
        for order_id in ids:
            answer = http.post(f"{url}/tools/get_order", json={"order_id": order_id}).json()
            wrong += answer["is_error"] or answer["result"]["id"] != order_id
        return {"seconds": time.perf_counter() - start, "client_cpu": time.process_time() - cpu, "wrong": wrong}


def mcp_client(url: str, calls: int) -> dict[str, Any]:
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> dict[str, Any]:
        wrong = 0
        async with Client(streamable_http_client(url), read_timeout_seconds=60.0) as client:
            for order_id in order_ids(20):
                await client.call_tool("get_order", {"order_id": order_id})
            ids = order_ids(calls)
            cpu, start = time.process_time(), time.perf_counter()
            for order_id in ids:
                result = await client.call_tool("get_order", {"order_id": order_id})
                wrong += result.is_error or (result.structured_content or {}).get("id") != order_id
            return {"seconds": time.perf_counter() - start, "client_cpu": time.process_time() - cpu, "wrong": wrong}

    return anyio.run(main)


# --------------------------------------------------------------------------- measuring


def direct(environment: Any, calls: int) -> dict[str, Any]:
    run = environment.start(seed=0)
    for order_id in order_ids(20):
        run.call("get_order", {"order_id": order_id})
    ids = order_ids(calls)
    wrong = 0
    cpu, start = time.process_time(), time.perf_counter()
    for order_id in ids:
        answer = run.call("get_order", {"order_id": order_id})
        wrong += answer["is_error"] or answer["result"]["id"] != order_id
    seconds, server_cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"wall_us": 1e6 * seconds / calls, "cpu_us": 1e6 * server_cpu / calls, "client_cpu_us": 0.0, "wrong": wrong}


def served(environment: Any, server: Any, way: str, calls: int, round_no: int) -> dict[str, Any]:
    """One client process's calls over `way` (http or mcp), against a fresh run attached for it."""
    run_id = f"sim-bench-{way}-{round_no}"
    addresses = server.attach(run_id, environment.start(seed=0))
    cpu = time.process_time()
    done = subprocess.run([sys.executable, __file__, "--client", way, addresses[way], str(calls)], capture_output=True, text=True, check=False)
    server_cpu = time.process_time() - cpu
    server.detach(run_id)
    if done.returncode != 0:
        raise SystemExit(f"the {way} client failed:\n{done.stderr}")
    figures = json.loads(done.stdout)
    # This process's CPU while the client ran: its start and warm-up calls are in it too, a small overcount.
    return {"wall_us": 1e6 * figures["seconds"] / calls, "cpu_us": 1e6 * server_cpu / (calls + 20),
            "client_cpu_us": 1e6 * figures["client_cpu"] / calls, "wrong": figures["wrong"]}


def measure(calls: int, mcp_calls: int, rounds: int) -> list[dict[str, Any]]:
    from dialogcheck.environment import load_environment
    from dialogcheck.environment.serve import EnvironmentServer

    environment = load_environment(write_project(OUT / "environment_calls"))
    samples: dict[str, list[dict[str, Any]]] = {"direct": [], "http": [], "mcp": []}
    with EnvironmentServer() as server:
        if server.mcp_problem:
            raise SystemExit(server.mcp_problem)
        for round_no in range(rounds):
            samples["direct"].append(direct(environment, calls))
            samples["http"].append(served(environment, server, "http", calls, round_no))
            samples["mcp"].append(served(environment, server, "mcp", mcp_calls, round_no))
            log(f"round {round_no + 1}/{rounds}: " + ", ".join(f"{way} {s[-1]['wall_us']:.0f} µs" for way, s in samples.items()))
    if any(s["wrong"] for way in samples.values() for s in way):
        raise SystemExit("some answers were wrong: the figures measure a broken server")
    rows = []
    for way, label in (("direct", "direct Python call (`run.call`)"), ("http", "HTTP, httpx keep-alive"), ("mcp", "MCP, the SDK's Streamable HTTP client")):
        per_round = samples[way]
        rows.append({
            "key": way,
            "way": label,
            "calls_per_round": calls if way != "mcp" else mcp_calls,
            "wall_us": statistics.median(s["wall_us"] for s in per_round),
            "cpu_us": statistics.median(s["cpu_us"] for s in per_round),
            "client_cpu_us": statistics.median(s["client_cpu_us"] for s in per_round),
            "wall_ratio": statistics.median(s["wall_us"] / d["wall_us"] for s, d in zip(per_round, samples["direct"])),
            "cpu_ratio": statistics.median(s["cpu_us"] / d["cpu_us"] for s, d in zip(per_round, samples["direct"])),
        })
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2_000, help="timed calls per round, direct and over HTTP")
    parser.add_argument("--mcp-calls", type=int, default=500, help="timed calls per round over MCP")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the JSON document instead of the table")
    parser.add_argument("--client", nargs=3, metavar=("WAY", "URL", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.client:
        way, url, calls = args.client
        print(json.dumps((http_client if way == "http" else mcp_client)(url, int(calls))))
        return 0
    rows = measure(args.calls, args.mcp_calls, args.rounds)
    result = save("environment_calls", {"orders": ORDERS, "rounds": args.rounds, "rows": rows})
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(table(
        ["way", "µs per call (wall)", "× direct (wall)", "environment CPU µs per call", "× direct (CPU)", "client CPU µs per call"],
        [[r["way"], f"{r['wall_us']:.1f}", f"{r['wall_ratio']:.1f}", f"{r['cpu_us']:.1f}", f"{r['cpu_ratio']:.1f}", f"{r['client_cpu_us']:.1f}"] for r in rows],
    ))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
