"""`dialogcheck environment serve FILE`: one run's environment over HTTP and MCP on loopback, started by hand.

For developing an agent against an environment file: it prints the addresses (and the variables an agent
started apart reads), answers calls until Ctrl-C or SIGTERM, then says how many calls it answered and which
faults fired. The file is read, and `python:` tools refused under `--safe-env`, before anything is served.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections import Counter
from typing import Any

import click

from .._shown import counted
from ..errors import LoadError, os_reason
from .env_options import env_options
from .output import EXIT_BAD_INPUT, fail_with_load_error

#: The run `serve` attaches: its own address is printed too, the root ones serve it as the one run in flight.
SERVED_RUN = "serve"


@click.group()
def environment() -> None:
    """Serve an environment file (eval/environments/NAME.yml) by hand, for developing an agent against it."""


@environment.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="The loopback address to listen on (127.0.0.1, ::1 or localhost).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="The port to listen on; 0 picks a free one (printed).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The run's seed: which calls a fault with a `rate` hits.")
@click.option("--faults", "faults", type=click.Choice(["on", "off"]), default="on", show_default=True, help="off switches the file's faults off.")
@env_options
def serve(file: str, host: str, port: int, seed: int, faults: str) -> None:
    """Serve the environment of FILE over HTTP and MCP on loopback until Ctrl-C, printing its addresses.

    One run's environment (its own copy of the state, the faults drawn from --seed) answers GET /tools,
    POST /tools/NAME and MCP at /mcp; at the end it says how many calls it answered and which faults fired.
    """
    from ..environment import load_environment
    from ..environment.serve import EnvironmentServer, loopback_problem

    problem = loopback_problem(host)
    if problem is not None:
        raise click.BadParameter(problem, param_hint="'--host'")
    try:
        loaded = load_environment(file)
    except LoadError as err:
        fail_with_load_error(err, "text")
    stopping = threading.Event()
    run = loaded.start(seed, faults=faults == "on", sleep=lambda seconds: stopping.wait(seconds))  # type: ignore[arg-type]  # a stop ends a fault's delay (its bool unread)
    server = EnvironmentServer(host, port)
    try:
        server.start()
    except OSError as err:
        click.echo(f"dialogcheck environment serve: cannot listen on {host}:{port}: {os_reason(err)}", err=True)
        raise SystemExit(EXIT_BAD_INPUT) from None
    try:
        own = server.attach(SERVED_RUN, run)
        _say_addresses(loaded.name, file, server.root_addresses, own, seed, faults, server.mcp_problem)
        _wait_for_stop(stopping)
    finally:
        server.stop()
    click.echo(_summary(run.events))


def _say_addresses(name: str, file: str, root: dict[str, Any], own: dict[str, Any], seed: int, faults: str, mcp_problem: str | None) -> None:
    from ..environment.serve import HTTP_VARIABLE, MCP_VARIABLE

    lines = [f"serving environment `{name}` ({file}), seed {seed}, faults {faults}", f"http: {root['http']}"]
    if root["mcp"] is not None:
        lines.append(f"mcp: {root['mcp']}")
    lines.append(f"(this run's own addresses: {own['http']}" + (f" and {own['mcp']})" if own["mcp"] else ")"))
    lines.append(f"export {HTTP_VARIABLE}={root['http']}")
    if root["mcp"] is not None:
        lines.append(f"export {MCP_VARIABLE}={root['mcp']}")
    lines.append("Ctrl-C stops it.")
    click.echo("\n".join(lines))
    sys.stdout.flush()
    if mcp_problem is not None:
        click.echo(f"mcp: not served: {mcp_problem}", err=True)


def _wait_for_stop(stopping: threading.Event) -> None:
    """Block until Ctrl-C or SIGTERM."""

    def stop(signum: int, frame: Any) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        stopping.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _summary(events: list[dict[str, Any]]) -> str:
    """`answered N calls (E errors); F faults fired: timeout 1, error 2`."""
    errors = sum(1 for event in events if event["is_error"])
    fired = Counter(event["metadata"]["fault"]["kind"] for event in events if "fault" in event["metadata"])
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(fired.items()))
    faults = f"{counted(sum(fired.values()), 'fault')} fired" + (f": {kinds}" if kinds else "")
    return f"stopped: answered {counted(len(events), 'call')} ({counted(errors, 'error')}); {faults}"
