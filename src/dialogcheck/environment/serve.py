"""The environment over HTTP and MCP on loopback: one port serving every run of a batch that is in flight.

A batch has several runs in flight, each with its own `RunEnvironment`; `EnvironmentServer.attach` gives each
its addresses under `/runs/RUN_ID`, and the root addresses serve the one run in flight, for agents started apart
that read `DIALOGCHECK_ENVIRONMENT_HTTP` and `_MCP` once. The server runs its own event loop in a thread, and
calls run in worker threads, since a latency or timeout fault sleeps in `RunEnvironment.call`.
The endpoints are described in docs/environment-reference.md, "Serving".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import os
import re
import socket
import threading
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson
from aiohttp import web

from .._shown import clip, visible
from .bounds import MAX_ARGUMENT_BYTES
from .run import RunEnvironment

if TYPE_CHECKING:
    from types import TracebackType

    from .serve_mcp import McpEndpoint

#: What an agent started apart reads to find the environment (the root addresses).
HTTP_VARIABLE = "DIALOGCHECK_ENVIRONMENT_HTTP"
MCP_VARIABLE = "DIALOGCHECK_ENVIRONMENT_MCP"
#: The header that picks a run at the root addresses while several are in flight.
RUN_HEADER = "Dialogcheck-Run"
MCP_INSTALL_HINT = "serving the environment over MCP needs the MCP SDK: pip install 'dialogcheck[mcp]'"
#: The most bytes a request's body may take: a call's arguments (`MAX_ARGUMENT_BYTES` as JSON), with room for
#: white space and, over MCP, the JSON-RPC envelope.
MAX_BODY_BYTES = 2 * MAX_ARGUMENT_BYTES
#: Threads calls are answered in, across runs: made as calls need them, as many as `run --parallel` may have runs
#: in flight (1,000), so a call a fault holds in its delay never queues another run's behind it.
MAX_WORKERS = 1_024
#: Seconds a stopping server gives requests in flight to finish.
SHUTDOWN_GRACE = 2.0

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: A body that does not parse as JSON: `RunEnvironment.call` answers it as arguments that are not a JSON value.
_NOT_JSON = object()


def loopback_problem(host: str) -> str | None:
    """Why `host` is not a loopback address to listen on, or None: the environment is for agents on this machine."""
    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass
    return f"the environment serves only loopback (127.0.0.1, ::1, localhost), not {host!r}: agents reach it from this machine"


def _is_loopback_name(name: str | None) -> bool:
    if name is None:
        return False
    return name == "localhost" or loopback_problem(name.strip("[]")) is None


def bound_address(environ: Mapping[str, str] | None = None) -> tuple[str, int]:
    """Where a batch serves its environments: the address `DIALOGCHECK_ENVIRONMENT_HTTP` names (an agent started
    apart reads the same variable), else a free loopback port. `ValueError` for an address that is not a loopback
    `http://HOST:PORT`."""
    url = (os.environ if environ is None else environ).get(HTTP_VARIABLE)
    if not url:
        return "127.0.0.1", 0
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or parts.hostname is None or port is None or parts.path not in ("", "/") or parts.query:
        raise ValueError(f"{HTTP_VARIABLE} must be the address to serve environments at, like http://127.0.0.1:8765, got {url!r}")
    problem = loopback_problem(parts.hostname)
    if problem is not None:
        raise ValueError(f"{HTTP_VARIABLE}: {problem}")
    return parts.hostname, port


class Refused(Exception):
    """A request the server answers with an HTTP error status and `{"error": message}`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _error(status: int, message: str) -> web.Response:
    return web.Response(status=status, body=orjson.dumps({"error": message}), content_type="application/json")


def _answer(document: Any) -> web.Response:
    return web.Response(body=orjson.dumps(document), content_type="application/json")


def _page_problem(request: web.Request) -> str | None:
    """Why a request looks sent by a web page rather than an agent (loopback is reachable from a browser): a Host
    that is not loopback (a rebound name) or an Origin that is not."""
    host = request.headers.get("Host")
    if host is not None and not _is_loopback_name(urlsplit(f"//{host}").hostname):
        return f"refused: the Host header names {clip(visible(host), 120)}, not this loopback server"
    origin = request.headers.get("Origin")
    if origin is not None and not _is_loopback_name(urlsplit(origin).hostname):
        return f"refused: a request from a web page ({clip(visible(origin), 120)}) may not call the environment"
    return None


@web.middleware
async def _guarded(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    """Every answer of the server is JSON, its errors `{"error": ...}` with the status saying what kind."""
    problem = _page_problem(request)
    if problem is not None:
        return _error(403, problem)
    try:
        return await handler(request)
    except Refused as refused:
        return _error(refused.status, refused.message)
    except web.HTTPRequestEntityTooLarge:
        return _error(413, f"the request's body takes more than {MAX_BODY_BYTES:,} bytes: a tool's arguments may take {MAX_ARGUMENT_BYTES:,} bytes as JSON")
    except web.HTTPMethodNotAllowed as err:
        return _error(405, f"{request.method} is not answered at {_shown_path(request)}: use {', '.join(sorted(err.allowed_methods))}")
    except web.HTTPNotFound:
        return _error(404, (
            f"nothing is served at {_shown_path(request)}: the endpoints are GET /tools and POST /tools/NAME (and /mcp with the"
            " MCP SDK), under /runs/RUN_ID or at the root"
        ))


def _shown_path(request: web.Request) -> str:
    return clip(visible(request.path), 200)


def _arguments_of(body: bytes) -> Any:
    """The arguments a request's body holds; an empty body is a call with none."""
    if not body.strip():
        return {}
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return _NOT_JSON


class EnvironmentServer:
    """Serves the runs attached to it over HTTP (and MCP, with the `mcp` extra) from one loopback port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        problem = loopback_problem(host)
        if problem is not None:
            raise ValueError(problem)
        self.host, self._asked_port = host, port
        self._runs: dict[str, RunEnvironment] = {}
        self._runs_lock = threading.Lock()
        self._executor = concurrent.futures.ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="dialogcheck-environment")
        self._mcp, self.mcp_problem = _mcp_endpoint(self._executor)
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    # ------------------------------------------------------------------ lifetime

    def start(self) -> None:
        """Listen, and serve in a thread of its own; returns once requests are answered."""
        if self._thread is not None:
            raise RuntimeError("this environment server was started already")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.create_server((self.host, self._asked_port), family=family)
        self._port = sock.getsockname()[1]
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._serve_thread, args=(sock, ready), name="dialogcheck-environment-server", daemon=True)
        self._thread.start()
        ready.result()

    def stop(self) -> None:
        """Stop serving (calls in flight get a short grace); a second stop does nothing."""
        loop, stopping, thread = self._loop, self._stopping, self._thread
        if loop is not None and stopping is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stopping.set)
            except RuntimeError:  # the loop closed meanwhile
                pass
        if thread is not None:
            thread.join()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> EnvironmentServer:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the environment server is not started: call start() first")
        return self._port

    # ------------------------------------------------------------------ runs

    @property
    def root_addresses(self) -> dict[str, str | None]:
        """The addresses that serve the one run in flight (or the run a `Dialogcheck-Run` header names)."""
        base = self._base()
        return {"http": base, "mcp": f"{base}/mcp" if self._mcp is not None else None}

    def attach(self, run_id: str, run: RunEnvironment) -> dict[str, str | None]:
        """Serve `run` under `/runs/RUN_ID` until `detach`: its HTTP and MCP addresses (MCP None without the SDK).
        Once the server is started, since the addresses name its port."""
        if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            raise ValueError(f"a run id is 1 to 128 letters, digits, `.`, `_` or `-`, the first a letter or digit: not {run_id!r}")
        with self._runs_lock:
            if run_id in self._runs:
                raise ValueError(f"run `{run_id}` is attached already: detach it first")
            self._runs[run_id] = run
        http = f"{self._base()}/runs/{run_id}"
        return {"http": http, "mcp": f"{http}/mcp" if self._mcp is not None else None}

    def detach(self, run_id: str) -> None:
        """Stop serving a run (its address answers 404 from now on); an unknown id does nothing."""
        with self._runs_lock:
            self._runs.pop(run_id, None)

    def _base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def run_of(self, request: web.Request) -> RunEnvironment:
        """The run a request is for: the one its path names, else the one its `Dialogcheck-Run` header names, else
        the only one in flight."""
        run_id = request.match_info.get("run_id") or request.headers.get(RUN_HEADER)
        with self._runs_lock:
            if run_id is not None:
                run = self._runs.get(run_id)
                if run is None:
                    raise Refused(404, f"no run `{clip(visible(run_id), 120)}` is in flight here")
                return run
            if not self._runs:
                raise Refused(503, "no run is in flight: the root address serves a run while one is attached")
            if len(self._runs) > 1:
                raise Refused(409, (
                    f"{len(self._runs)} runs are in flight, so the root address names none of them: "
                    f"send the header `{RUN_HEADER}: RUN_ID`, or use the run's own address (/runs/RUN_ID)"
                ))
            return next(iter(self._runs.values()))

    # ------------------------------------------------------------------ serving

    def _serve_thread(self, sock: socket.socket, ready: concurrent.futures.Future[None]) -> None:
        loop = self._loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve(sock, ready))
        except BaseException as err:  # noqa: BLE001 - handed to start(), which raises it in its caller
            if not ready.done():
                ready.set_exception(err)
        finally:
            sock.close()
            loop.close()

    async def _serve(self, sock: socket.socket, ready: concurrent.futures.Future[None]) -> None:
        self._stopping = asyncio.Event()
        async with AsyncExitStack() as stack:
            if self._mcp is not None:
                await stack.enter_async_context(self._mcp.running())
            runner = web.AppRunner(self._app(), access_log=None, shutdown_timeout=SHUTDOWN_GRACE)
            await runner.setup()
            stack.push_async_callback(runner.cleanup)
            await web.SockSite(runner, sock).start()
            ready.set_result(None)
            await self._stopping.wait()

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[_guarded], client_max_size=MAX_BODY_BYTES)
        for base in ("", "/runs/{run_id}"):
            app.router.add_get(f"{base}/tools", self._list_tools)
            app.router.add_post(f"{base}/tools/{{name}}", self._call_tool)
            if self._mcp is not None:
                app.router.add_route("*", f"{base}/mcp", self._serve_mcp)
        return app

    async def _list_tools(self, request: web.Request) -> web.Response:
        return _answer({"tools": self.run_of(request).tools})

    async def _call_tool(self, request: web.Request) -> web.Response:
        run = self.run_of(request)
        arguments = _arguments_of(await request.read())
        answer = await asyncio.get_running_loop().run_in_executor(self._executor, run.call, request.match_info["name"], arguments)
        return _answer(answer)

    async def _serve_mcp(self, request: web.Request) -> web.StreamResponse:
        assert self._mcp is not None
        return await self._mcp.serve(request, self.run_of(request))


def _mcp_endpoint(executor: concurrent.futures.Executor) -> tuple[McpEndpoint | None, str | None]:
    """The MCP side of the server, or None and why (the `mcp` extra is not installed)."""
    try:
        from .serve_mcp import McpEndpoint
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in ("mcp", "mcp_types", "starlette", "pydantic", "anyio", "sse_starlette", "httpx"):
            raise
        return None, MCP_INSTALL_HINT
    return McpEndpoint(executor, MAX_BODY_BYTES), None


__all__ = ["HTTP_VARIABLE", "MAX_BODY_BYTES", "MCP_INSTALL_HINT", "MCP_VARIABLE", "RUN_HEADER", "EnvironmentServer", "loopback_problem"]
