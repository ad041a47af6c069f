"""Broken peers on loopback: a raw-socket HTTP/1.1 server that answers each request well or with a fault.

`choose(request)` picks the answer from the request itself, so one server
can keep most runs of a batch healthy and break a chosen few. The faults are
the ones a CI pipeline meets: a peer that hangs, drips its answer a byte at a
time, resets the connection, answers 429 forever (with or without
Retry-After), answers 500, or answers something that is not JSON.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.conftest import FORCING_OUTPUT
from tests.llm.conftest import ENV_THAT_REDIRECTS

#: Seconds between two bytes of a dripped answer (it would take minutes to finish).
DRIP_INTERVAL = 0.25


@dataclass(frozen=True)
class Answer:
    """What to do with one request: `kind` is ok, status, hang, drip, reset or garbage."""

    kind: str = "ok"
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


OK = "ok"


def ok(body: Any) -> Answer:
    return Answer("ok", 200, body)


def status(code: int, body: Any = None, headers: dict[str, str] | None = None) -> Answer:
    return Answer("status", code, body if body is not None else {"error": {"message": f"status {code}", "type": "server_error"}}, headers or {})


def drip(body: Any) -> Answer:
    """A good answer, sent one byte every `DRIP_INTERVAL` seconds."""
    return Answer("drip", 200, body)


HANG, RESET = Answer("hang"), Answer("reset")
#: A 200 whose body is not JSON (a proxy's error page, say).
GARBAGE = Answer("garbage", 200, b"<html>502 Bad Gateway</html> {not json")


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


class FaultServer:
    def __init__(self, choose: Callable[[Seen], Answer]):
        self.choose = choose
        self.seen: list[Seen] = []
        self.faults: list[str] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.sock.settimeout(0.05)
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        buffer = b""
        try:
            while not self.stopping.is_set():
                request, buffer = self._read_request(conn, buffer)
                if request is None:
                    return
                answer = self.choose(request)
                with self.lock:
                    self.seen.append(request)
                    if answer.kind != OK:
                        self.faults.append(answer.kind)
                if not self._answer(conn, answer):
                    return
        except OSError:
            pass  # the client gave up: that is what the faults are for
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _read_request(self, conn: socket.socket, buffer: bytes) -> tuple[Seen | None, bytes]:
        while b"\r\n\r\n" not in buffer:
            chunk = self._recv(conn)
            if not chunk:
                return None, b""
            buffer += chunk
        head, buffer = buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
        length = int(headers.get("content-length") or 0)
        while len(buffer) < length:
            chunk = self._recv(conn)
            if not chunk:
                return None, b""
            buffer += chunk
        raw, buffer = buffer[:length], buffer[length:]
        body = json.loads(raw) if raw else None
        return Seen(path, headers, body, head + b"\r\n\r\n" + raw), buffer

    def _recv(self, conn: socket.socket) -> bytes:
        while not self.stopping.is_set():
            try:
                return conn.recv(65536)
            except (TimeoutError, socket.timeout):
                continue
        return b""

    def _answer(self, conn: socket.socket, answer: Answer) -> bool:
        """Send the answer; False when the connection is done with."""
        if answer.kind == "hang":
            self.stopping.wait()
            return False
        if answer.kind == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends RST
            return False
        body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
        head = [f"HTTP/1.1 {answer.status} {'OK' if answer.status == 200 else 'Error'}", "Content-Type: application/json", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in answer.headers.items()]
        data = ("\r\n".join(head) + "\r\n\r\n").encode() + body
        if answer.kind == "drip":
            for i in range(len(data)):
                if self.stopping.wait(DRIP_INTERVAL):
                    return False
                conn.sendall(data[i : i + 1])
            return False
        conn.sendall(data)
        return answer.kind == OK


#: Environment variables that would send the SDKs or the connectors somewhere else than loopback, or colour the output.
REDIRECTING_ENV = (*ENV_THAT_REDIRECTS, *FORCING_OUTPUT)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a `dialogcheck` subprocess: nothing from the developer's shell redirects it."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in REDIRECTING_ENV}
    return env | {"NO_PROXY": "127.0.0.1,localhost", **extra}
