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

import httpx
import orjson

from .base import AgentError, AgentSetupError

#: How much of an unexpected body an error message quotes.
EXCERPT_CHARS = 200
#: Separate connection pools, so that none grows large (see `JsonClient._http`).
POOL_SHARDS = 16
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
    """The start of a body, white space collapsed, for an error message."""
    text = " ".join(data.decode("utf-8", "replace").split())
    if not text:
        return "(empty body)"
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def _connect_reason(err: BaseException) -> str:
    """The useful cause under httpx's "All connection attempts failed"."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused: is it running?"
        if isinstance(seen, socket.gaierror):
            return f"unknown host: {seen.strerror or seen}"
        seen = seen.__cause__ or seen.__context__
    return str(err) or type(err).__name__


class JsonClient:
    """Requests to one server, each bounded by `timeout` seconds in total (connecting included)."""

    def __init__(self, base_url: str, timeout: float):
        self.base_url = base_url
        self.timeout = timeout
        self._clients: dict[int, httpx.AsyncClient] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def _http(self) -> httpx.AsyncClient:
        """A client for this task. Pools are sharded: httpcore scans every pooled connection on
        each request, which costs milliseconds of CPU per request once 50 runs share one pool."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # A pooled connection belongs to the event loop that opened it: a new loop gets new clients.
            self._clients, self._loop = {}, loop
        shard = hash(asyncio.current_task()) % POOL_SHARDS
        client = self._clients.get(shard)
        if client is None:  # made on first use: each client costs an SSL context
            client = self._clients[shard] = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=8),
                headers=_HEADERS,
            )
        return client

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
                response = await self._http().request(method, url, content=content)
        except (TimeoutError, httpx.TimeoutException):
            raise AgentError(f"{where}: no answer within {self.timeout:g} s (timed out)") from None
        except httpx.ConnectError as err:
            raise AgentError(f"{where}: cannot connect to the agent ({_connect_reason(err)})") from None
        except httpx.RemoteProtocolError as err:
            raise AgentError(f"{where}: the agent closed the connection without answering ({err})") from None
        except (httpx.ReadError, httpx.WriteError) as err:
            raise AgentError(f"{where}: the connection to the agent broke ({err or type(err).__name__})") from None
        except httpx.HTTPError as err:
            raise AgentError(f"{where}: {type(err).__name__}: {err}") from None
        if not response.is_success:
            status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
            raise AgentError(f"{where}: the agent answered {status}: {excerpt(response.content)}")
        if not want_json:
            return None
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise AgentError(f"{where}: the answer is not JSON: {excerpt(response.content)}") from None

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.aclose()
