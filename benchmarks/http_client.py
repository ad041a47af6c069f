"""Client-side cost of the HTTP connector with many runs in flight, against the loopback agent of run_parallel.py.

R runs of T turns each send their turns one after another, all R at once, to
the same keep-alive loopback server (`run_parallel.py --serve agent`, fixed
latency). Ideal wall time is T x latency; the client's CPU per request is
reported too. Compared: `HttpConnector` (aiohttp) and the bare h11 transport
`run_parallel.H11Connector`, a lower bound.

Run: .venv/bin/python benchmarks/http_client.py [--latency 0.2] [--runs 50] [--turns 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_parallel  # noqa: E402

from dialogcheck.connectors import HttpConnector  # noqa: E402


async def batch(connector, runs: int, turns: int) -> tuple[float, float]:
    async def one(i: int) -> None:
        for _ in range(turns):
            await connector.send(f"c{i}", "hello")

    await asyncio.gather(*(one(i) for i in range(runs)))  # opens the connections
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(runs)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await connector.aclose()
    return wall, cpu / (runs * turns) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    server = run_parallel.start_server("agent", args.latency, args.turns, 0.0)
    url = f"http://127.0.0.1:{server.port}/agent"
    ideal = args.turns * args.latency
    try:
        for name, make in (("HttpConnector (aiohttp)", lambda: HttpConnector(url, 30.0)), ("bare h11 transport", lambda: run_parallel.H11Connector(url))):
            samples = [asyncio.run(batch(make(), args.runs, args.turns)) for _ in range(args.repeats)]
            wall, cpu_ms = min(samples)
            print(f"{name:26s} best {wall:.3f} s  ideal {ideal:.3f} s  ratio {wall / ideal:.3f}  client CPU {cpu_ms:.2f} ms/request")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
