"""What an environment adds to `dialogcheck run` on the bundled example, with the agent in process and over HTTP.

The example (`examples/card_replace`) has a bank environment and a scenario, `run_order_placed.yml`, whose
card tools are answered by it and whose assertions judge the end state; its script is the same as
`run_damaged_card.yml`'s. Batches of `dialogcheck.run_scenarios(..., no_judge=True)` on a copy of the project
under `benchmarks/out/environment_run/`:

* the baseline: a copy of `run_order_placed.yml` with its `environment` and its `state_*` assertions taken
  out, so the example agent answers its card tools from its own tables;
* with the environment: `run_order_placed.yml` as it is, and `run_order_timeout.yml` (a timeout fault on the
  order call) with its faults off and on;
* the same four batches through an HTTP agent: the example agent behind a loopback aiohttp server in a thread
  of this process, which, when the opening request carries `environment.http`, hands `respond` an environment
  whose `call(name, arguments)` POSTs to `{http}/tools/{name}` (httpx, keep-alive), so the environment is
  served over loopback HTTP, as `run` serves it to any agent not called in process.

Every round runs every batch once, after one untimed round: each agent's four batches together, in an order
rotated each round, the two agents taking turns to go first. A batch's figures
are its wall and CPU time (this process: the runner, the agent, the environment and their servers) over its
runs; a ratio is a batch's figure over its own agent's baseline batch in the same round, and the table gives
the median over rounds with the quartiles and range. Every batch's verdicts, environment calls and faults are
checked against what the scenario must give (and, over HTTP, that every call reached the agent's client), so
a batch that broke cannot look fast.

Run: .venv/bin/python benchmarks/environment_run.py [--runs 100] [--parallel 4] [--rounds 21] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import functools
import gc
import importlib.util
import json
import shutil
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, ROOT, log, save, spread, table

EXAMPLE = ROOT / "examples" / "card_replace"
WORK = OUT / "environment_run"
#: The baseline scenario written into the copy of the example: `run_order_placed.yml` without its environment.
BASELINE = "bench_no_environment.yml"


@dataclass(frozen=True)
class Batch:
    """One batch of runs of one scenario, and what every run of it must give."""

    key: str
    label: str
    scenario: str  # a file of the project's eval/scenarios/
    over_http: bool
    faults: bool = True
    verdict: str = "pass"
    environment_calls: int | None = 2  # per run; None: the run has no environment
    faults_met: int = 0  # per run

    @property
    def baseline(self) -> str:
        return "http_baseline" if self.over_http else "python_baseline"


def batches() -> list[Batch]:
    made = []
    for over_http, agent in ((False, "python"), (True, "http")):
        made += [
            Batch(f"{agent}_baseline", "no environment (the agent's own tables)", BASELINE, over_http, environment_calls=None),
            Batch(f"{agent}_placed", "environment: run_order_placed", "run_order_placed.yml", over_http),
            Batch(f"{agent}_timeout_off", "environment: run_order_timeout, faults off", "run_order_timeout.yml", over_http, faults=False),
            Batch(f"{agent}_timeout_on", "environment: run_order_timeout, faults on", "run_order_timeout.yml", over_http,
                  verdict="fail", faults_met=1),
        ]
    return made


# --------------------------------------------------------------------------- the project


def write_project(folder: Path) -> Path:
    """A fresh copy of the example with the baseline scenario added; the copy's folder."""
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("results", ".dialogcheck", "__pycache__"))
    scenarios = folder / "eval" / "scenarios"
    placed = yaml.safe_load((scenarios / "run_order_placed.yml").read_text(encoding="utf-8"))
    damaged = yaml.safe_load((scenarios / "run_damaged_card.yml").read_text(encoding="utf-8"))
    if placed["scenario"]["script"] != damaged["scenario"]["script"]:
        raise SystemExit("run_order_placed.yml no longer has run_damaged_card.yml's script: the baseline would differ in more than its environment")
    scenario = placed["scenario"]
    del scenario["environment"]
    scenario["name"] += " (no environment)"
    scenario["goals"]["assertions"] = [a for a in scenario["goals"]["assertions"] if not next(iter(a)).startswith("state_")]
    (scenarios / BASELINE).write_text(
        "# Written by benchmarks/environment_run.py: run_order_placed.yml without its environment and its state checks.\n"
        + yaml.safe_dump(placed, sort_keys=False), encoding="utf-8")
    return folder


def load_agent(project: Path) -> Any:
    """The copy's agent.py as a module of its own (not the one `run` imports for the in-process batches)."""
    spec = importlib.util.spec_from_file_location("environment_run_agent", project / "agent.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it is executed
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- the HTTP agent


class HttpEnvironment:
    """What the HTTP agent hands `respond` for a run with an environment: each call a POST to the run's address."""

    def __init__(self, http: str, agent: HttpAgent):
        self.http = http
        self._agent = agent

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = self._agent.client().post(f"{self.http}/tools/{name}", json=arguments)
        if answer.status_code != 200:
            raise RuntimeError(f"POST {self.http}/tools/{name} answered {answer.status_code}: {answer.text[:300]}")
        self._agent.count_call()
        return answer.json()


class HttpAgent:
    """The example agent behind the HTTP agent protocol, on loopback, in a thread with its own event loop.

    `respond` blocks on its tool calls, so each turn runs in a worker thread, with a keep-alive httpx client of
    that thread's own for the environment.
    """

    def __init__(self, respond: Any):
        self._respond = respond
        self._environments: dict[str, HttpEnvironment | None] = {}
        self._workers = concurrent.futures.ThreadPoolExecutor(32, thread_name_prefix="http-agent")
        self._local = threading.local()
        self._clients: list[Any] = []
        self._lock = threading.Lock()
        self.tool_calls = 0
        self.url = ""

    def client(self) -> Any:
        import httpx

        if not hasattr(self._local, "client"):
            self._local.client = httpx.Client(timeout=60.0)
            with self._lock:
                self._clients.append(self._local.client)
        return self._local.client

    def count_call(self) -> None:
        with self._lock:
            self.tool_calls += 1

    async def _turn(self, request: Any) -> Any:
        from aiohttp import web

        body = orjson.loads(await request.read())
        conversation_id, text = body["conversation_id"], body["text"]
        if text is None:
            http = (body.get("environment") or {}).get("http")
            self._environments[conversation_id] = HttpEnvironment(http, self) if http else None
        turn = functools.partial(self._respond, conversation_id, text, body.get("initial_slots"), self._environments.get(conversation_id))
        answer = await asyncio.get_running_loop().run_in_executor(self._workers, turn)
        return web.Response(body=orjson.dumps(answer), content_type="application/json")

    def __enter__(self) -> HttpAgent:
        ready: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name="http-agent-server", daemon=True)
        self._thread.start()
        self.url = ready.result(timeout=60)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(timeout=60)
        self._workers.shutdown()
        for client in self._clients:
            client.close()

    def _serve(self, ready: concurrent.futures.Future[str]) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve_until_stopped(ready))
        except BaseException as err:  # noqa: BLE001 - handed to __enter__, which raises it
            if not ready.done():
                ready.set_exception(err)
        finally:
            self._loop.close()

    async def _serve_until_stopped(self, ready: concurrent.futures.Future[str]) -> None:
        from aiohttp import web

        self._stopping = asyncio.Event()
        app = web.Application()
        app.router.add_post("/", self._turn)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        ready.set_result(f"http://{host}:{port}/")
        await self._stopping.wait()
        await runner.cleanup()


# --------------------------------------------------------------------------- measuring


def run_batch(project: Path, batch: Batch, runs: int, parallel: int, agent: HttpAgent, results: Path) -> dict[str, float]:
    """One batch, timed: wall and CPU milliseconds per run. Stops the script when a run did not give what it must."""
    from dialogcheck import run_scenarios

    gc.collect()
    calls_before = agent.tool_calls
    cpu, start = time.process_time(), time.perf_counter()
    result = run_scenarios(project / "eval" / "scenarios" / batch.scenario, agent=agent.url if batch.over_http else None,
                           runs=runs, parallel=parallel, results=results, no_judge=True, faults=batch.faults)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    problems = check_batch(batch, result, runs)
    if batch.over_http and agent.tool_calls - calls_before != runs * (batch.environment_calls or 0):
        problems.append(f"the agent's client made {agent.tool_calls - calls_before} calls over HTTP, not {runs * (batch.environment_calls or 0)}")
    if problems:
        raise SystemExit(f"batch {batch.key} did not run as it must (kept in {results}): " + "; ".join(problems[:5]))
    shutil.rmtree(results)
    return {"wall_ms": 1e3 * wall / runs, "cpu_ms": 1e3 * cpu / runs}


def check_batch(batch: Batch, result: Any, runs: int) -> list[str]:
    """What is wrong with a batch's runs: a verdict, an environment's calls or its faults not what they must be."""
    problems = [] if len(result.runs) == runs else [f"{len(result.runs)} runs finished of {runs}"]
    for run in result.runs:
        where = f"run {run.number}"
        if run.verdict.value != batch.verdict:
            problems.append(f"{where}: {run.verdict.value}, not {batch.verdict} ({run.error or 'see its record'})")
        calls = None if run.environment is None else run.environment.calls
        if calls != batch.environment_calls:
            problems.append(f"{where}: the environment answered {calls} calls, not {batch.environment_calls}")
        met = 0 if run.environment is None else len(run.environment.faults)
        if met != batch.faults_met:
            problems.append(f"{where}: {met} faults met, not {batch.faults_met}")
        if run.environment is not None and (run.environment.unanswered or run.environment.unreported):
            problems.append(f"{where}: the agent's reports and the environment's calls do not pair")
    return problems


def round_order(every: list[Batch], round_no: int) -> list[Batch]:
    """The batches of a round: each agent's together, so a batch runs close to its baseline, the agents taking turns
    to go first and each agent's batches rotated, so no batch always follows the same one."""
    blocks = [[b for b in every if not b.over_http], [b for b in every if b.over_http]]
    if round_no % 2:
        blocks.reverse()
    return [batch for block in blocks for batch in block[round_no % len(block):] + block[:round_no % len(block)]]


def measure(runs: int, parallel: int, rounds: int) -> dict[str, list[dict[str, float]]]:
    project = write_project(WORK / "project")
    every = batches()
    samples: dict[str, list[dict[str, float]]] = {batch.key: [] for batch in every}
    with HttpAgent(load_agent(project).respond) as agent:
        for batch in every:  # untimed: imports, the agent module, the first environment's schemas
            run_batch(project, batch, min(runs, 4), parallel, agent, WORK / "results" / f"warm-{batch.key}")
        for round_no in range(rounds):
            for batch in round_order(every, round_no):
                samples[batch.key].append(run_batch(project, batch, runs, parallel, agent, WORK / "results" / f"{round_no}-{batch.key}"))
            log(f"round {round_no + 1}/{rounds}: " + ", ".join(f"{key} {s[-1]['wall_ms']:.1f} ms" for key, s in samples.items()))
    return samples


def rows_of(samples: dict[str, list[dict[str, float]]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, float]]]:
    """Each batch's medians and its ratios to its agent's baseline; and the HTTP agent's baseline over the Python agent's."""
    rows = []
    for batch in batches():
        own, base = samples[batch.key], samples[batch.baseline]
        rows.append({
            "key": batch.key,
            "agent": "HTTP agent (loopback)" if batch.over_http else "Python agent (in process)",
            "batch": batch.label,
            "baseline": batch.baseline,
            "wall_ms": round(statistics.median(s["wall_ms"] for s in own), 3),
            "cpu_ms": round(statistics.median(s["cpu_ms"] for s in own), 3),
            "wall_ratio": spread([s["wall_ms"] / b["wall_ms"] for s, b in zip(own, base)]),
            "cpu_ratio": spread([s["cpu_ms"] / b["cpu_ms"] for s, b in zip(own, base)]),
        })
    http, python = samples["http_baseline"], samples["python_baseline"]
    over_http = {"wall_ratio": spread([h["wall_ms"] / p["wall_ms"] for h, p in zip(http, python)]),
                 "cpu_ratio": spread([h["cpu_ms"] / p["cpu_ms"] for h, p in zip(http, python)])}
    return rows, over_http


def ratio_cell(figures: dict[str, float]) -> str:
    return f"{figures['median']:.2f} ({figures['q1']:.2f}-{figures['q3']:.2f}; {figures['min']:.2f}-{figures['max']:.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="runs a batch")
    parser.add_argument("--parallel", type=int, default=4, help="runs in flight at once (run --parallel)")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--json", action="store_true", help="print the JSON document instead of the table")
    args = parser.parse_args(argv)
    rows, over_http = rows_of(measure(args.runs, args.parallel, args.rounds))
    result = save("environment_run", {"runs": args.runs, "parallel": args.parallel, "rounds": args.rounds, "rows": rows,
                                      "http_baseline_over_python_baseline": over_http})
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(table(
        ["agent: batch", "ms per run (wall)", "× baseline, wall (quartiles; range)", "CPU ms per run", "× baseline, CPU (quartiles; range)"],
        [[f"{r['agent']}: {r['batch']}", f"{r['wall_ms']:.2f}", ratio_cell(r["wall_ratio"]), f"{r['cpu_ms']:.2f}", ratio_cell(r["cpu_ratio"])]
         for r in rows],
    ))
    print(f"\nthe HTTP agent's baseline over the Python agent's: wall {ratio_cell(over_http['wall_ratio'])}, "
          f"CPU {ratio_cell(over_http['cpu_ratio'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
