"""`dialogcheck environment serve FILE`: the installed command as a real subprocess, called over HTTP and MCP."""

from __future__ import annotations

import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.environment.conftest import SHOP, with_faults, write_environment

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
HANG = 60.0  # a bound on a hang (a start, an answer, an exit), never a wait


class Served:
    """A running `environment serve`: its process and the lines it printed on stdout, read as they come."""

    def __init__(self, project: Path, *args: str):
        self.process = subprocess.Popen([str(DIALOGCHECK), "environment", "serve", *args], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")

    def line(self, pattern: str) -> re.Match:
        """The first line still to come that matches `pattern` (lines before it are passed over)."""
        seen = []
        while True:
            try:
                line = self.lines.get(timeout=HANG)
            except queue.Empty:
                raise AssertionError(f"no line like {pattern!r} within {HANG} s; seen {seen}") from None
            if line == "" and self.process.poll() is not None:
                raise AssertionError(f"it exited ({self.process.returncode}) before a line like {pattern!r}; seen {seen}, stderr {self.process.stderr.read()}")
            found = re.fullmatch(pattern, line)
            if found:
                return found
            seen.append(line)

    def stop(self, sig: int = signal.SIGINT) -> tuple[int, str, str]:
        """Send `sig`; its exit code, the last line of its stdout (its summary) and its stderr."""
        self.process.send_signal(sig)
        code = self.process.wait(timeout=HANG)
        rest = []
        while True:
            line = self.lines.get(timeout=HANG)
            if line == "" and self.process.poll() is not None and self.lines.empty():
                break
            rest.append(line)
        return code, rest[-1] if rest else "", self.process.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=HANG)


def _queues(port: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(local port, remote port) -> (bytes not yet acknowledged by the peer, bytes not yet read) of every loopback
    TCP connection, from the kernel's table (Linux)."""
    queues = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, tx_rx = fields[1], fields[2], fields[4]
        tx, rx = (int(part, 16) for part in tx_rx.split(":"))
        queues[(int(local.split(":")[1], 16), int(remote.split(":")[1], 16))] = (tx, rx)
    return queues


def wait_until_read(port: int, client_port: int) -> None:
    """Until what the client sent on its connection to `port` was received and read by the server (bounded by HANG)."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        queues = _queues(port)
        client, server = queues.get((client_port, port)), queues.get((port, client_port))
        if client is not None and server is not None and client[0] == 0 and server[1] == 0:
            return
        time.sleep(0.01)
    raise AssertionError(f"the server did not read the request within {HANG} s")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_environment(tmp_path, with_faults("- {tool: get_order, kind: error, status: 503, message: try again later, on_call: 1}\n"))
    return tmp_path


def test_serve_prints_its_addresses_answers_calls_and_sums_up_at_ctrl_c(project):
    served = Served(project, "eval/environments/shop.yml")
    try:
        assert served.line(r"serving environment `shop` \(eval/environments/shop\.yml\), seed 0, faults on")
        http = served.line(r"http: (http://127\.0\.0\.1:\d+)").group(1)
        mcp = served.line(r"mcp: (http://127\.0\.0\.1:\d+/mcp)").group(1)
        assert served.line(rf"export DIALOGCHECK_ENVIRONMENT_HTTP={re.escape(http)}")
        assert served.line(rf"export DIALOGCHECK_ENVIRONMENT_MCP={re.escape(mcp)}")
        assert [tool["name"] for tool in httpx.get(f"{http}/tools", timeout=HANG).json()["tools"]] == ["get_order", "cancel_order"]
        assert httpx.post(f"{http}/tools/cancel_order", json={"order_id": "O1", "reason": "late"}, timeout=HANG).json()["is_error"] is False
        assert httpx.post(f"{http}/tools/get_order", json={"order_id": "O1"}, timeout=HANG).json() == {"result": "try again later", "is_error": True}

        async def over_mcp():
            async with Client(streamable_http_client(mcp), read_timeout_seconds=HANG) as client:
                return await client.call_tool("get_order", {"order_id": "O1"})

        assert anyio.run(over_mcp).structured_content["status"] == "cancelled"  # the write made over HTTP
        code, rest, stderr = served.stop(signal.SIGINT)
    finally:
        served.kill()
    assert code == 0, stderr
    assert rest == "stopped: answered 3 calls (1 error); 1 fault fired: error 1"
    assert "Traceback" not in stderr


def test_sigterm_stops_it_as_ctrl_c_does_and_faults_off_fires_none(project):
    served = Served(project, "eval/environments/shop.yml", "--faults", "off", "--seed", "7")
    try:
        assert served.line(r"serving environment `shop` .*, seed 7, faults off")
        http = served.line(r"http: (http://127\.0\.0\.1:\d+)").group(1)
        answers = [httpx.post(f"{http}/tools/get_order", json={"order_id": "O1"}, timeout=HANG).json()["is_error"] for _ in range(3)]
        code, rest, stderr = served.stop(signal.SIGTERM)
    finally:
        served.kill()
    assert answers == [False, False, False]
    assert (code, rest) == (0, "stopped: answered 3 calls (0 errors); 0 faults fired"), stderr


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the kernel's TCP table to know the call arrived (Linux)")
def test_a_stop_during_a_faults_delay_ends_it(tmp_path):
    write_environment(tmp_path, with_faults("- {tool: get_order, kind: latency, delay: 300}\n"))
    served = Served(tmp_path, "eval/environments/shop.yml")
    try:
        http = served.line(r"http: (http://127\.0\.0\.1:\d+)").group(1)
        port = int(http.rsplit(":", 1)[1])
        body = b'{"order_id": "O1"}'
        caller = socket.create_connection(("127.0.0.1", port), timeout=HANG)
        caller.sendall(b"POST /tools/get_order HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        wait_until_read(port, caller.getsockname()[1])  # the server has the call: it is in its 300 s delay, or about to be
        code, summary, stderr = served.stop(signal.SIGINT)
        answer = caller.recv(65536)
        caller.close()
    finally:
        served.kill()
    assert code == 0, stderr
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert summary == "stopped: answered 1 call (0 errors); 1 fault fired: latency 1"


def test_a_bad_file_is_exit_2_with_its_line_and_column_before_anything_is_served(tmp_path):
    path = write_environment(tmp_path, SHOP.replace("read: {path: \"orders.{order_id}\"}", "read: {path: \"orders.{order}\"}"))
    done = subprocess.run([str(DIALOGCHECK), "environment", "serve", str(path)], capture_output=True, text=True, timeout=HANG, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"{path}:14:20: `{{order}}` in `path` in `read` of tool `get_order` names no parameter of the tool (did you mean `order_id`?)\n"
    assert "Traceback" not in done.stderr


def test_a_missing_file_is_exit_2(tmp_path):
    done = subprocess.run([str(DIALOGCHECK), "environment", "serve", str(tmp_path / "none.yml")], capture_output=True, text=True, timeout=HANG, check=False)
    assert done.returncode == 2
    assert f"{tmp_path / 'none.yml'}:1:1: cannot read file" in done.stderr


def test_a_python_tool_under_safe_env_is_refused_before_anything_is_served(tmp_path):
    text = SHOP.replace("      read: {path: \"orders.{order_id}\"}", "      python: \"shop_tools:get_order\"")
    path = write_environment(tmp_path, text)
    ran = tmp_path / "ran"
    (tmp_path / "shop_tools.py").write_text(f"open({str(ran)!r}, 'w').write('imported')\ndef get_order(state, arguments):\n    return 1\n")
    done = subprocess.run([str(DIALOGCHECK), "environment", "serve", "--safe-env", str(path)], capture_output=True, text=True, timeout=HANG, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    line = next(n for n, text_line in enumerate(text.splitlines(), 1) if "python:" in text_line)
    assert re.search(rf"{re.escape(str(path))}:{line}:\d+: .*--safe-env", done.stderr), done.stderr
    assert not ran.exists()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com"])
def test_a_host_that_is_not_loopback_is_exit_2(project, host):
    done = subprocess.run([str(DIALOGCHECK), "environment", "serve", "--host", host, "eval/environments/shop.yml"], cwd=project, capture_output=True, text=True, timeout=HANG, check=False)
    assert done.returncode == 2
    assert "the environment serves only loopback" in done.stderr
    assert done.stdout == ""


def test_a_port_in_use_is_exit_2_saying_so(project):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([str(DIALOGCHECK), "environment", "serve", "--port", str(port), "eval/environments/shop.yml"], cwd=project, capture_output=True, text=True, timeout=HANG, check=False)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_the_sdk_it_serves_http_and_says_how_to_get_mcp(project):
    code = "import sys; sys.modules['mcp'] = None; from dialogcheck._cli.main import main; main(['environment', 'serve', 'eval/environments/shop.yml'])"
    process = subprocess.Popen([sys.executable, "-c", code], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        http = process.stdout.readline()
        assert first.startswith("serving environment `shop`")
        address = re.fullmatch(r"http: (\S+)\n", http).group(1)
        rest = []
        for line in process.stdout:
            rest.append(line)
            if line.startswith("Ctrl-C"):
                break
        assert not any(line.startswith(("mcp:", "export DIALOGCHECK_ENVIRONMENT_MCP")) for line in rest), rest
        assert httpx.get(f"{address}/tools", timeout=HANG).status_code == 200
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=HANG)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=HANG)
    assert process.returncode == 0
    assert "mcp: not served: serving the environment over MCP needs the MCP SDK: pip install 'dialogcheck[mcp]'" in err
