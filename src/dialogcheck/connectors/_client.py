"""JSON over HTTP for the connectors that talk to a server, every failure an `AgentError`.

One place decides how "the agent is down", "too slow", "answered 500" and
"answered garbage" are worded, so the Rasa and HTTP connectors report them
alike: `METHOD URL: what went wrong`.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from .._redact import hold_url, redact, redact_url
from ..errors import os_reason
from .base import AgentError, AgentSetupError

#: How much of an unexpected body an error message quotes.
EXCERPT_CHARS = 200
_HEADERS = {"content-type": "application/json", "accept": "application/json"}


def check_url(url: Any, what: str) -> str:
    """An http(s) base address without its trailing slash, or `AgentSetupError` before any run."""
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise AgentSetupError(f"{what} needs an http:// or https:// address, got {url!r}")
    return url.rstrip("/")


def excerpt(data: bytes) -> str:
    """The start of a body, white space collapsed, for an error message; redacted whole before it is cut."""
    text = " ".join(data.decode("utf-8", "replace").split())
    if not text:
        return "(empty body)"
    if len(text) <= EXCERPT_CHARS:
        return text
    text = redact(text)
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def _connect_reason(err: BaseException) -> str:
    """The useful cause under the HTTP library's own wording of a failed connection."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused: is it running?"
        if isinstance(seen, socket.gaierror):
            return f"unknown host: {os_reason(seen)}"
        seen = seen.__cause__ or seen.__context__
    return str(err) or type(err).__name__


async def _connect(host: str, port: int) -> None:
    """Connect to each address `host` resolves to until one takes the connection, then hang up.

    When none does, a refusal is the error raised (it says the most: nothing listens there).
    """
    loop = asyncio.get_running_loop()
    failures: list[OSError] = []
    for family, kind, proto, _, address in await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        with socket.socket(family, kind, proto) as sock:
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, address)
                return
            except OSError as err:
                failures.append(err)
    refused = [err for err in failures if isinstance(err, ConnectionRefusedError)]
    raise (refused or failures or [OSError(f"{host} has no address")])[0]


async def _mark_reused(session: aiohttp.ClientSession, context: Any, params: Any) -> None:
    context.trace_request_ctx["reused"] = True


#: Tells `JsonClient._exchange` whether a request went out on a pooled connection.
_REUSE_TRACE = aiohttp.TraceConfig()
_REUSE_TRACE.on_connection_reuseconn.append(_mark_reused)
_REUSE_TRACE.freeze()


class JsonClient:
    """Requests to one server, each bounded by `timeout` seconds in total (connecting included).

    On aiohttp, whose connection pool hands out an idle keep-alive connection in constant time: fifty
    runs in flight cost no more CPU per request than one.
    """

    def __init__(self, base_url: str, timeout: float):
        self.base_url = base_url
        self.timeout = timeout
        hold_url(base_url)  # its password goes out as a Basic credential: no written file may quote either
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _http(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            # A pooled connection belongs to the event loop that opened it: a new loop gets a new session.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, limit_per_host=0),
                trace_configs=[_REUSE_TRACE],
                headers=_HEADERS,
                timeout=aiohttp.ClientTimeout(total=None),  # `request` bounds the whole exchange itself
                cookie_jar=aiohttp.DummyCookieJar(),  # an agent under test is not a browser session
            )
            self._loop = loop
        return self._session

    async def check_reachable(self) -> None:
        """Open (and close) a TCP connection to the server: an agent that is down is found once, not once per run.

        Only the connection is tried, so a server that is up but answers errors
        counts as reachable: its runs go ahead and each says what went wrong.
        """
        parts = urlsplit(self.base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        address = redact_url(self.base_url)
        try:
            async with asyncio.timeout(self.timeout):
                await _connect(parts.hostname or "", port)
        except TimeoutError:
            raise AgentError(f"cannot connect to the agent at {address}: no connection within {self.timeout:g} s") from None
        except OSError as err:
            raise AgentError(f"cannot connect to the agent at {address} ({_connect_reason(err)})") from None

    async def request(self, method: str, path: str, body: Any = None, *, want_json: bool = True) -> Any:
        """Send `body` as JSON; return the parsed JSON answer (None when `want_json` is false)."""
        url = self.base_url + path
        where = f"{method} {url}"
        try:
            content = None if body is None else orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
        except TypeError as err:
            raise AgentError(f"{where}: cannot send the request as JSON: {err}") from None
        try:
            async with asyncio.timeout(self.timeout):
                response, data = await self._exchange(method, url, content)
        except TimeoutError:
            raise AgentError(f"{where}: no answer within {self.timeout:g} s (timed out)") from None
        except aiohttp.ClientConnectorError as err:
            raise AgentError(f"{where}: cannot connect to the agent ({_connect_reason(err)})") from None
        except aiohttp.ServerDisconnectedError as err:
            raise AgentError(f"{where}: the agent closed the connection without answering ({err})") from None
        except (aiohttp.ClientPayloadError, aiohttp.ClientOSError) as err:
            raise AgentError(f"{where}: the connection to the agent broke ({err or type(err).__name__})") from None
        except aiohttp.ClientResponseError as err:  # an answer that is not HTTP
            raise AgentError(f"{where}: the agent closed the connection without answering ({err.message})") from None
        except aiohttp.ClientError as err:
            raise AgentError(f"{where}: {type(err).__name__}: {err}") from None
        if not 200 <= response.status < 300:
            status = f"HTTP {response.status} {response.reason or ''}".rstrip()
            raise AgentError(f"{where}: the agent answered {status}: {excerpt(data)}")
        if not want_json:
            return None
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            raise AgentError(f"{where}: the answer is not JSON: {excerpt(data)}") from None

    async def _exchange(self, method: str, url: str, content: bytes | None) -> tuple[aiohttp.ClientResponse, bytes]:
        """One request, sent once more when the pooled connection it went out on turns out dead.

        A server may close an idle keep-alive connection (or one it answered
        an error on) just as it is reused; as browsers do, a request that
        failed that way before any answer came is sent again, once. The dead
        connection has left the pool by then.
        """
        trace: dict[str, bool] = {}
        try:
            return await self._send(method, url, content, trace)
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
            if not trace.get("reused"):
                raise
        return await self._send(method, url, content, {})

    async def _send(self, method: str, url: str, content: bytes | None, trace: dict[str, bool]) -> tuple[aiohttp.ClientResponse, bytes]:
        async with self._http().request(method, url, data=content, allow_redirects=False, trace_request_ctx=trace) as response:
            return response, await response.read()

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()
