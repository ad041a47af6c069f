"""The environment served over HTTP on loopback: a real server on a real port, asked by a real HTTP client."""

from __future__ import annotations

import threading

import httpx
import pytest

from dialogcheck.environment.serve import HTTP_VARIABLE, MCP_VARIABLE, RUN_HEADER, EnvironmentServer

from .conftest import HANG, RUN_A, RUN_B, Sleeps, with_faults, write_environment


@pytest.fixture
def client():
    with httpx.Client(timeout=HANG) as http:
        yield http


def test_the_addresses_name_the_run_on_the_port_it_listens_on(server, shop):
    port = server.port
    assert port > 0
    assert server.attach(RUN_A, shop.start(seed=0)) == {
        "http": f"http://127.0.0.1:{port}/runs/{RUN_A}",
        "mcp": f"http://127.0.0.1:{port}/runs/{RUN_A}/mcp",
    }
    assert server.root_addresses == {"http": f"http://127.0.0.1:{port}", "mcp": f"http://127.0.0.1:{port}/mcp"}
    assert (HTTP_VARIABLE, MCP_VARIABLE) == ("DIALOGCHECK_ENVIRONMENT_HTTP", "DIALOGCHECK_ENVIRONMENT_MCP")


def test_the_tool_list_is_what_the_agent_is_shown(server, shop, client):
    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    listed = client.get(f"{http}/tools")
    assert listed.status_code == 200
    assert listed.headers["content-type"].startswith("application/json")
    assert listed.json() == {"tools": run.tools}


def test_a_write_is_seen_by_the_next_read_and_both_are_recorded(server, shop, client):
    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    assert client.post(f"{http}/tools/get_order", json={"order_id": "O1"}).json() == {
        "result": {"id": "O1", "status": "placed", "total": 30, "paid": True}, "is_error": False,
    }
    cancelled = client.post(f"{http}/tools/cancel_order", json={"order_id": "O1", "reason": "late"})
    assert cancelled.status_code == 200
    assert cancelled.json() == {"result": {"order_id": "O1", "status": "cancelled"}, "is_error": False}
    assert client.post(f"{http}/tools/get_order", json={"order_id": "O1"}).json()["result"]["status"] == "cancelled"
    assert [(e["tool_name"], e["arguments"]) for e in run.events] == [
        ("get_order", {"order_id": "O1"}), ("cancel_order", {"order_id": "O1", "reason": "late"}), ("get_order", {"order_id": "O1"}),
    ]
    assert run.state["refunds"] == [{"order_id": "O1", "note": "refund: late"}]
    assert all(e["source"] == "local" and "mcp_server" not in e for e in run.events)


def test_a_tool_error_is_an_answer_with_status_200_and_recorded(server, shop, client):
    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    missing = client.post(f"{http}/tools/get_order", json={"order_id": "O9"})
    invalid = client.post(f"{http}/tools/get_order", json={"order_id": 5})
    unknown = client.post(f"{http}/tools/get_ordr", json={"order_id": "O1"})
    assert [r.status_code for r in (missing, invalid, unknown)] == [200, 200, 200]
    assert missing.json() == {"result": "not found: orders.O9", "is_error": True}
    assert invalid.json() == {"result": "invalid arguments at `order_id`: 5 is not of type 'string'", "is_error": True}
    assert unknown.json()["result"].startswith("unknown tool `get_ordr` (did you mean `get_order`?)")
    assert [(e["tool_name"], e["is_error"], e["error_message"]) for e in run.events] == [
        ("get_order", True, "not found: orders.O9"),
        ("get_order", True, "invalid arguments at `order_id`: 5 is not of type 'string'"),
        ("get_ordr", True, unknown.json()["result"]),
    ]


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b'{"order_id": "O1"', b"nan"])
def test_a_body_that_is_not_json_is_answered_as_invalid_arguments_and_recorded(server, shop, client, body):
    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    answer = client.post(f"{http}/tools/get_order", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 200
    assert answer.json() == {"result": "invalid arguments: they must be a JSON object, got a value that is not JSON", "is_error": True}
    assert [(e["tool_name"], e["arguments"], e["is_error"]) for e in run.events] == [("get_order", {}, True)]


def test_json_that_is_not_an_object_is_answered_as_the_environment_answers_it(server, shop, client):
    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    assert client.post(f"{http}/tools/get_order", json=["O1"]).json() == {
        "result": "invalid arguments: they must be a JSON object, got a list", "is_error": True,
    }
    assert client.post(f"{http}/tools/get_order", content=b"null").json()["result"] == "invalid arguments: they must be a JSON object, got null"
    assert len(run.events) == 2


def test_an_empty_body_is_a_call_with_no_arguments(server, shop, client):
    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    assert client.post(f"{http}/tools/get_order").json() == {"result": "invalid arguments: 'order_id' is a required property", "is_error": True}
    assert run.events[0]["arguments"] == {}


def test_a_body_past_its_bound_is_refused_before_the_environment(server, shop, client):
    from dialogcheck.environment.serve import MAX_BODY_BYTES

    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    refused = client.post(f"{http}/tools/get_order", content=b'{"order_id": "' + b"O" * MAX_BODY_BYTES + b'"}')
    assert refused.status_code == 413
    assert refused.json() == {"error": f"the request's body takes more than {MAX_BODY_BYTES:,} bytes: a tool's arguments may take 1,048,576 bytes as JSON"}
    assert run.events == []
    assert client.post(f"{http}/tools/get_order", json={"order_id": "O1"}).json()["is_error"] is False  # still serving


def test_a_fault_is_answered_and_recorded_on_its_call(server, tmp_path, client):
    from dialogcheck.environment import load_environment

    sleeps = Sleeps()
    environment = load_environment(write_environment(tmp_path, with_faults("- {tool: cancel_order, kind: timeout, delay: 5, on_call: 1}\n")))
    run = environment.start(seed=0, sleep=sleeps)
    http = server.attach(RUN_A, run)["http"]
    timed_out = client.post(f"{http}/tools/cancel_order", json={"order_id": "O1", "reason": "late"})
    assert timed_out.status_code == 200
    assert timed_out.json() == {"result": "timeout: `cancel_order` gave no answer within 5 s", "is_error": True}
    assert sleeps.delays == [5.0]
    assert run.events[0]["metadata"] == {"environment": True, "fault": {"kind": "timeout", "index": 1, "delay": 5.0}}
    assert run.state["orders"]["O1"]["status"] == "placed"
    assert client.post(f"{http}/tools/cancel_order", json={"order_id": "O1", "reason": "late"}).json()["is_error"] is False


def test_a_slow_call_does_not_hold_up_another_run(server, tmp_path, shop, client):
    from dialogcheck.environment import load_environment

    release, entered = threading.Event(), threading.Event()

    def held(seconds: float) -> None:
        entered.set()
        release.wait(HANG)

    slow = load_environment(write_environment(tmp_path, with_faults("- {tool: get_order, kind: latency, delay: 1}\n"))).start(seed=0, sleep=held)
    slow_http = server.attach(RUN_A, slow)["http"]
    fast_http = server.attach(RUN_B, shop.start(seed=0))["http"]
    answers: list[dict] = []
    waiting = threading.Thread(target=lambda: answers.append(client.post(f"{slow_http}/tools/get_order", json={"order_id": "O1"}).json()))
    waiting.start()
    try:
        assert entered.wait(HANG)
        assert client.post(f"{fast_http}/tools/get_order", json={"order_id": "O2"}).json()["result"]["id"] == "O2"  # while the other sleeps
    finally:
        release.set()
        waiting.join(HANG)
    assert answers == [{"result": {"id": "O1", "status": "placed", "total": 30, "paid": True}, "is_error": False}]


def test_two_runs_attached_at_once_never_see_each_others_writes(server, shop, client):
    first, second = shop.start(seed=0), shop.start(seed=0)
    a = server.attach(RUN_A, first)["http"]
    b = server.attach(RUN_B, second)["http"]
    client.post(f"{a}/tools/cancel_order", json={"order_id": "O1", "reason": "late"})
    assert client.post(f"{b}/tools/get_order", json={"order_id": "O1"}).json()["result"]["status"] == "placed"
    client.post(f"{b}/tools/cancel_order", json={"order_id": "O2", "reason": "wrong size"})
    assert client.post(f"{a}/tools/get_order", json={"order_id": "O2"}).json()["result"]["status"] == "shipped"
    assert [e["arguments"]["order_id"] for e in first.events] == ["O1", "O2"]
    assert [e["arguments"]["order_id"] for e in second.events] == ["O1", "O2"]
    assert first.state["refunds"] == [{"order_id": "O1", "note": "refund: late"}]
    assert second.state["refunds"] == [{"order_id": "O2", "note": "refund: wrong size"}]


def test_the_root_serves_the_one_run_in_flight(server, shop, client):
    run = shop.start(seed=0)
    server.attach(RUN_A, run)
    root = server.root_addresses["http"]
    assert client.get(f"{root}/tools").json() == {"tools": run.tools}
    assert client.post(f"{root}/tools/get_order", json={"order_id": "O2"}).json()["result"]["id"] == "O2"
    assert len(run.events) == 1


def test_the_root_with_several_runs_needs_the_header_naming_one(server, shop, client):
    first, second = shop.start(seed=0), shop.start(seed=0)
    server.attach(RUN_A, first)
    server.attach(RUN_B, second)
    root = server.root_addresses["http"]
    ambiguous = client.post(f"{root}/tools/get_order", json={"order_id": "O1"})
    assert ambiguous.status_code == 409
    assert ambiguous.json() == {"error": (
        f"2 runs are in flight, so the root address names none of them: send the header `{RUN_HEADER}: RUN_ID`, "
        "or use the run's own address (/runs/RUN_ID)"
    )}
    picked = client.post(f"{root}/tools/cancel_order", json={"order_id": "O1", "reason": "late"}, headers={RUN_HEADER: RUN_B})
    assert picked.json()["is_error"] is False
    assert (len(first.events), len(second.events)) == (0, 1)
    unknown = client.get(f"{root}/tools", headers={RUN_HEADER: "sim-nope"})
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "no run `sim-nope` is in flight here"}


def test_the_root_with_no_run_says_so(server, shop, client):
    root = server.root_addresses["http"]
    idle = client.get(f"{root}/tools")
    assert idle.status_code == 503
    assert idle.json() == {"error": "no run is in flight: the root address serves a run while one is attached"}
    server.attach(RUN_A, shop.start(seed=0))
    server.detach(RUN_A)
    assert client.get(f"{root}/tools").status_code == 503


def test_an_unknown_or_detached_run_is_404(server, shop, client):
    http = server.attach(RUN_A, shop.start(seed=0))["http"]
    base = server.root_addresses["http"]
    missing = client.get(f"{base}/runs/{RUN_B}/tools")
    assert missing.status_code == 404
    assert missing.json() == {"error": f"no run `{RUN_B}` is in flight here"}
    server.detach(RUN_A)
    assert client.post(f"{http}/tools/get_order", json={"order_id": "O1"}).status_code == 404


def test_anything_else_is_a_json_error(server, shop, client):
    http = server.attach(RUN_A, shop.start(seed=0))["http"]
    wrong_method = client.get(f"{http}/tools/get_order")
    assert wrong_method.status_code == 405
    assert wrong_method.json() == {"error": f"GET is not answered at /runs/{RUN_A}/tools/get_order: use POST"}
    nowhere = client.get(f"{server.root_addresses['http']}/elsewhere")
    assert nowhere.status_code == 404
    assert nowhere.json() == {"error": (
        "nothing is served at /elsewhere: the endpoints are GET /tools and POST /tools/NAME (and /mcp with the MCP SDK),"
        " under /runs/RUN_ID or at the root"
    )}


@pytest.mark.parametrize("run_id", ["", "..", "../x", "a/b", "sim x", "sim-%2e", "a" * 200, "é"])
def test_a_run_id_that_is_not_one_path_step_is_refused(server, shop, run_id):
    with pytest.raises(ValueError, match="a run id is 1 to 128 letters, digits"):
        server.attach(run_id, shop.start(seed=0))


def test_a_run_attached_twice_is_refused(server, shop):
    server.attach(RUN_A, shop.start(seed=0))
    with pytest.raises(ValueError, match=f"run `{RUN_A}` is attached already"):
        server.attach(RUN_A, shop.start(seed=0))


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_only_loopback_is_served(host):
    with pytest.raises(ValueError, match="serves only loopback"):
        EnvironmentServer(host=host)


def test_requests_from_a_web_page_are_refused(server, shop, client):
    """Loopback is reachable from a browser: a page elsewhere (its Origin) or a rebound name (its Host) is refused."""
    run = shop.start(seed=0)
    http = server.attach(RUN_A, run)["http"]
    from_page = client.post(f"{http}/tools/get_order", json={"order_id": "O1"}, headers={"Origin": "https://evil.example"})
    rebound = client.post(f"{http}/tools/get_order", json={"order_id": "O1"}, headers={"Host": f"evil.example:{server.port}"})
    assert (from_page.status_code, rebound.status_code) == (403, 403)
    assert run.events == []
    local_page = client.get(f"{http}/tools", headers={"Origin": f"http://localhost:{server.port}"})
    assert local_page.status_code == 200


def test_stop_ends_serving_and_a_server_is_a_context_manager(shop):
    with EnvironmentServer() as serving:
        http = serving.attach(RUN_A, shop.start(seed=0))["http"]
        assert httpx.get(f"{http}/tools", timeout=HANG).status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{http}/tools", timeout=HANG)
    serving.stop()  # twice is fine


def test_the_reference_says_what_the_server_does():
    from dialogcheck.environment.serve import MAX_BODY_BYTES
    from tests.conftest import REPO

    serving = (REPO / "docs" / "environment-reference.md").read_text(encoding="utf-8").split("\n## Serving\n", 1)[1]
    assert f"`{HTTP_VARIABLE}`" in serving and f"`{MCP_VARIABLE}`" in serving
    assert f"`{RUN_HEADER}: RUN_ID`" in serving
    assert MAX_BODY_BYTES == 2 * 2**20 and "more than 2 MiB is refused with 413" in " ".join(serving.split())


@pytest.mark.parametrize(("host", "shown"), [("::1", "[::1]"), ("localhost", "localhost"), ("127.0.0.2", "127.0.0.2")])
def test_every_loopback_address_is_served(shop, client, host, shown):
    try:
        serving = EnvironmentServer(host=host)
        serving.start()
    except OSError as err:  # a machine without IPv6 on loopback
        pytest.skip(f"cannot listen on {host}: {err}")
    try:
        http = serving.attach(RUN_A, shop.start(seed=0))["http"]
        assert http == f"http://{shown}:{serving.port}/runs/{RUN_A}"
        assert client.post(f"{http}/tools/get_order", json={"order_id": "O1"}).json()["is_error"] is False
    finally:
        serving.stop()


def test_a_request_without_a_host_header_is_served(server, shop):
    """HTTP/1.0 may leave Host out; no browser does, so the page check lets it through."""
    import socket

    server.attach(RUN_A, shop.start(seed=0))
    with socket.create_connection(("127.0.0.1", server.port), timeout=HANG) as raw:
        raw.sendall(b"GET /tools HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.0 200") or answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert b'"get_order"' in answer


def test_runs_writing_the_same_record_at_once_each_keep_their_own(server, shop):
    runs = {f"sim-{n}": shop.start(seed=0) for n in range(8)}
    addresses = {run_id: server.attach(run_id, run)["http"] for run_id, run in runs.items()}
    start = threading.Barrier(len(runs))
    seen: dict[str, list] = {}

    def agent(run_id: str) -> None:
        with httpx.Client(timeout=HANG) as http:
            start.wait(HANG)
            for n in range(5):
                http.post(f"{addresses[run_id]}/tools/cancel_order", json={"order_id": "O1", "reason": f"{run_id}/{n}"})
            seen[run_id] = http.post(f"{addresses[run_id]}/tools/get_order", json={"order_id": "O1"}).json()["result"]

    threads = [threading.Thread(target=agent, args=(run_id,)) for run_id in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG)
    assert set(seen) == set(runs)
    for run_id, run in runs.items():
        assert seen[run_id]["status"] == "cancelled"
        assert run.state["refunds"] == [{"order_id": "O1", "note": f"refund: {run_id}/{n}"} for n in range(5)]
        assert len(run.events) == 6
