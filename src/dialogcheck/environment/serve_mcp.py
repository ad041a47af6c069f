"""The environment as an MCP server: the official SDK's Streamable HTTP transport, under the aiohttp server's routes.

One low-level MCP `Server` answers every run: the aiohttp handler has already found the run a request is for and
hands it to the SDK's ASGI app in the request's scope, where `tools/list` and `tools/call` read it back. The
transport is stateless (the run is in the address, so there is no session to keep) and answers each request with
one JSON body. Needs the `mcp` extra; `serve` imports this module only when the SDK is there.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import mcp_types as types
import orjson
from aiohttp import web
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from .. import __version__
from .run import RunEnvironment

#: Where, in the ASGI scope of a request, the run it is for is handed to the MCP handlers.
RUN_SCOPE_KEY = "dialogcheck.environment.run"
#: The bytes of a request's body handed to the ASGI app at a time.
_READ_CHUNK = 2**16

Scope = dict[str, Any]
Message = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]


def content_of(answer: dict[str, Any]) -> types.CallToolResult:
    """A call's answer as MCP gives it: the result as text (its JSON when not a string), a JSON object result also as
    structured content, and `is_error` as the environment said."""
    result = answer["result"]
    text = result if isinstance(result, str) else orjson.dumps(result).decode()
    structured = result if isinstance(result, dict) else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=answer["is_error"])


def _run_of(ctx: Any) -> RunEnvironment:
    return ctx.request.scope[RUN_SCOPE_KEY]


class McpEndpoint:
    """`tools/list` and `tools/call` of whichever run a request is for, served at the run's `/mcp`."""

    def __init__(self, executor: concurrent.futures.Executor, max_body_bytes: int):
        self._executor = executor
        server: Server[Any] = Server(
            "dialogcheck-environment", version=__version__,
            instructions="The tools of a dialogcheck test environment: fake tools with a state of their own, for one run.",
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
        )
        self._manager = StreamableHTTPSessionManager(server, json_response=True, stateless=True, max_request_body_size=max_body_bytes)

    def running(self) -> AbstractAsyncContextManager[None]:
        """The SDK's task group, entered for as long as the server serves."""
        return self._manager.run()

    async def serve(self, request: web.Request, run: RunEnvironment) -> web.StreamResponse:
        return await asgi_response(self._manager.handle_request, request, {RUN_SCOPE_KEY: run})  # type: ignore[arg-type]  # the SDK's ASGI types, ours spelt apart

    async def _list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = [types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"]) for t in _run_of(ctx).tools]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        run = _run_of(ctx)
        arguments = {} if params.arguments is None else params.arguments  # a call with no arguments leaves them out
        call = functools.partial(run.call, over_mcp=True)  # recorded as an MCP tool's run, as the agent made it
        answer = await asyncio.get_running_loop().run_in_executor(self._executor, call, params.name, arguments)
        return content_of(answer)


def _peer(request: web.Request) -> tuple[str, int] | None:
    peer = request.transport.get_extra_info("peername") if request.transport is not None else None
    return (peer[0], peer[1]) if isinstance(peer, tuple) and len(peer) >= 2 else None  # an IPv6 peer has four parts


async def asgi_response(app: ASGIApp, request: web.Request, extra: Scope) -> web.StreamResponse:
    """Answer an aiohttp request with an ASGI app, its body streamed as the app sends it; `extra` joins the scope."""
    scope: Scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method, "scheme": request.scheme, "path": request.path, "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(), "root_path": "", "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "client": _peer(request), "server": None, **extra,
    }
    answered = asyncio.Event()
    body_read = False

    async def receive() -> Message:
        nonlocal body_read
        if not body_read:
            chunk = await request.content.read(_READ_CHUNK)
            body_read = request.content.at_eof()
            return {"type": "http.request", "body": chunk, "more_body": not body_read}
        await answered.wait()  # the client stays until the app has answered
        return {"type": "http.disconnect"}

    response: web.StreamResponse | None = None

    async def send(message: Message) -> None:
        nonlocal response
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=message["status"])
            for name, value in message.get("headers", ()):
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        elif message["type"] == "http.response.body" and response is not None:
            if message.get("body"):
                await response.write(message["body"])
            if not message.get("more_body", False):
                await response.write_eof()

    try:
        await app(scope, receive, send)
    finally:
        answered.set()
    if response is None:
        return web.Response(status=500, body=b'{"error": "the MCP transport gave no answer"}', content_type="application/json")
    return response


__all__ = ["RUN_SCOPE_KEY", "McpEndpoint", "asgi_response", "content_of"]
