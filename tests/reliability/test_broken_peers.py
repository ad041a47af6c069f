"""Whole batches through `dialogcheck run` (a real subprocess) against broken peers on loopback.

One fault server plays the HTTP agent, another the OpenAI-compatible endpoint of the
simulated user and of the judge (reached through the real openai SDK). Each peer
breaks only for the runs that ask it to (the fault is named in the user's message,
the simulation context or the criterion), so healthy and broken runs share one batch.
Every broken run must end `errored` within its bound with the cause named in
run_N.json and in the summary; the healthy runs must pass; no run may be lost.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.llm.conftest import judge_text, openai_body
from tests.reliability.figures import record
from tests.reliability.peers import (
    GARBAGE,
    HANG,
    RESET,
    FaultServer,
    Seen,
    clean_env,
    drip,
    ok,
    status,
)

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
#: Per-attempt timeouts and retries in the project under test. A fault that must time out never answers (it hangs, or
#: drips for minutes), so only the healthy answers race the timeout: it is far past the half second one takes here
#: on a loaded machine, and holds at ten times the load. A hang costs the batch this long, once, in parallel.
PEER_TIMEOUT = 10.0
LLM_RETRIES = 1
#: Far past any faulty run, so that the peers' timeouts, not this, end them.
RUN_TIME_LIMIT = 120.0
#: A broken run must end within this: a hang costs at most two timeouts and one backoff of under 2 s, after the
#: healthy exchanges before it, with a margin for a loaded machine.
FAULTY_RUN_BOUND = 3 * PEER_TIMEOUT + 10
#: The whole batch: its runs side by side, none waiting for the run time limit (one after another, its 24 faulty
#: runs would take minutes).
BATCH_WALL_BOUND = RUN_TIME_LIMIT + 60

GREETING = {"messages": [{"text": "Hi, how can I help?"}], "events": []}


def agent_reply(text: str) -> dict:
    events = [{"event": "tool_executed", "tool_name": "lookup", "arguments": {"q": text}, "source": "local"}]
    return {"messages": [{"text": f"Looked it up: {text}"}], "events": events}


#: Agent faults, keyed by the user message that triggers them, with what the run must say.
AGENT_FAULTS = {
    "hang": (HANG, (f"no answer within {PEER_TIMEOUT:g} s (timed out)",)),
    "drip": (drip(agent_reply("drip")), (f"no answer within {PEER_TIMEOUT:g} s (timed out)",)),
    "reset": (RESET, ("the connection to the agent broke", "the agent closed the connection without answering")),
    "http500": (status(500), ("the agent answered HTTP 500",)),
    "notjson": (GARBAGE, ("the answer is not JSON",)),
    "http429": (status(429, headers={"Retry-After": "1"}), ("the agent answered HTTP 429",)),
}

USER_JSON = '{"message": "balance", "done": true}'

#: LLM faults, keyed by the `FAULT:name` marker in the prompt, with what the run must say.
LLM_FAULTS = {
    "hang": (HANG, (f"timed out after {PEER_TIMEOUT:g} s",)),
    "drip": (drip(openai_body(USER_JSON)), (f"timed out after {PEER_TIMEOUT:g} s",)),
    "reset": (RESET, ("Connection error",)),
    "http429-retry-after": (status(429, headers={"Retry-After": "1"}), ("HTTP 429",)),
    "http429": (status(429), ("HTTP 429",)),
    "http500": (status(500), ("HTTP 500",)),
    "notjson": (GARBAGE, ("the server's answer is not JSON",)),
    "prose": (ok(openai_body("I would say the agent did fine.")), ("no valid answer after 3 attempts",)),
    "wrongshape": (ok({"id": "x", "choices": [{"index": 0, "message": None}]}), ("answered JSON that is not a chat completion",)),
}
_MARKER = re.compile(r"FAULT:([\w-]+)")


def agent_answer(request: Seen):
    text = request.body.get("text")
    if text is None:
        return ok(GREETING)
    fault = AGENT_FAULTS.get(text)
    return fault[0] if fault else ok(agent_reply(text))


def llm_answer(request: Seen):
    body = request.body
    prompt = body["messages"][0]["content"]
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    healthy = USER_JSON if "message" in schema.get("properties", {}) else judge_text(body, rationale="The agent looked it up.")
    marker = _MARKER.search(prompt)
    if marker is None:
        return ok(openai_body(healthy))
    answer = LLM_FAULTS[marker.group(1)][0]
    if answer.kind == "drip":
        return drip(openai_body(healthy))
    return answer


SCRIPTED = """\
scenario:
  name: {name}
  simulation_context: A customer asking about a card.
  script: [{message}]
  goals:
    assertions:
      - tool_executed: {{tool_name: lookup, source: local, arguments: {{q: {message}}}}}
"""
JUDGED = """\
scenario:
  name: {name}
  simulation_context: A customer asking about a card.
  script: [balance]
  goals:
    criteria: ["{criterion}"]
"""
SIMULATED = """\
scenario:
  name: {name}
  simulation_context: "{context}"
  max_turns: 2
  goals:
    assertions:
      - tool_executed: {{tool_name: lookup, source: local, arguments: {{q: balance}}}}
"""


def write_config(root: Path, agent: FaultServer, llm: FaultServer, timeout: float) -> None:
    llm_settings = f"{{provider: openai_compatible, base_url: '{llm.url}/v1', model: MODEL, timeout: {timeout:g}, max_retries: {LLM_RETRIES}}}"
    (root / "eval").mkdir(parents=True, exist_ok=True)
    (root / "eval" / "conftest.yml").write_text(
        f"agent: {{type: http, url: '{agent.url}', timeout: {timeout:g}}}\n"
        f"simulation:\n  llm: {llm_settings.replace('MODEL', 'sim')}\n"
        f"evaluation:\n  llm: {llm_settings.replace('MODEL', 'judge')}\n"
        "cache: {dir: .cache}\n"
    )


def make_project(root: Path, agent: FaultServer, llm: FaultServer) -> dict[str, tuple[str, ...] | None]:
    """The project, and for each slug the phrases its error must hold (None: it must pass)."""
    scenarios = root / "eval" / "scenarios"
    scenarios.mkdir(parents=True)
    write_config(root, agent, llm, PEER_TIMEOUT)
    expected: dict[str, tuple[str, ...] | None] = {}

    def write(slug: str, text: str, phrases: tuple[str, ...] | None) -> None:
        (scenarios / f"{slug}.yml").write_text(text)
        expected[slug] = phrases

    write("healthy_scripted", SCRIPTED.format(name="Healthy scripted", message="balance"), None)
    write("healthy_judged", JUDGED.format(name="Healthy judged", criterion="The agent looks the card up."), None)
    write("healthy_simulated", SIMULATED.format(name="Healthy simulated", context="You want your balance."), None)
    for fault, (_, phrases) in AGENT_FAULTS.items():
        write(f"agent_{fault}", SCRIPTED.format(name=f"Agent {fault}", message=fault), ("agent: ", *phrases))
    for fault, (_, phrases) in LLM_FAULTS.items():
        write(f"user_{fault}", SIMULATED.format(name=f"User {fault}", context=f"You want your balance. FAULT:{fault}"), ("simulated user: ", *phrases))
        write(f"judge_{fault}", JUDGED.format(name=f"Judge {fault}", criterion=f"The agent is polite. FAULT:{fault}"), ("judge error: ", *phrases))
    return expected


def cause(run: dict) -> str:
    """Why a run errored: the harness error, else the errored checks' details."""
    details = [c["detail"] for c in run.get("criteria", []) if c["outcome"] == "error"]
    return run["error"] or "; ".join(details)


@pytest.fixture
def peers():
    agent, llm = FaultServer(agent_answer), FaultServer(llm_answer)
    yield agent, llm
    agent.stop()
    llm.stop()


def run_batch(project: Path, results: Path, parallel: int, time_limit: float) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(
        [str(DIALOGCHECK), "run", str(project), "--results", str(results), "--parallel", str(parallel),
         "--timeout", f"{time_limit:g}", "--format", "json"],
        capture_output=True, text=True, env=clean_env(), timeout=600, check=False,
    )
    return done, time.monotonic() - started


def test_a_batch_with_broken_agents_users_and_judges_loses_no_run(tmp_path, peers):
    agent, llm = peers
    expected = make_project(tmp_path / "project", agent, llm)
    results = tmp_path / "results"
    done, wall = run_batch(tmp_path / "project", results, len(expected), RUN_TIME_LIMIT)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 3, done.stdout + done.stderr
    assert wall < BATCH_WALL_BOUND

    printed = json.loads(done.stdout)
    summary = json.loads((results / "summary.json").read_text())
    assert printed["planned_runs"] == printed["completed_runs"] == summary["completed_runs"] == len(expected)
    assert {row["slug"] for row in summary["scenarios"]} == set(expected)
    healthy = [slug for slug, phrases in expected.items() if phrases is None]
    assert summary["passed"] == len(healthy) and summary["failed"] == 0
    assert summary["errored"] == len(expected) - len(healthy)

    errored = {row["slug"]: row["error"] for row in summary["errored_runs"]}
    for slug, phrases in expected.items():
        run = json.loads((results / slug / "run_1.json").read_text())
        if phrases is None:
            assert run["verdict"] == "pass", (slug, run)
            continue
        assert run["verdict"] == "error", (slug, run)
        why = cause(run)
        prefix, *choices = phrases
        assert prefix in why and any(p in why for p in choices), (slug, why)
        assert run["duration_s"] < FAULTY_RUN_BOUND, (slug, run["duration_s"])
        assert any(p in errored[slug] for p in choices), (slug, errored[slug])
    # Every fault was really served, and the whole report got written.
    assert set(agent.faults) >= {"hang", "drip", "reset", "status", "garbage"}
    assert set(llm.faults) >= {"hang", "drip", "reset", "status", "garbage"}
    assert (results / "junit.xml").is_file() and (results / "report.html").is_file()
    durations = [json.loads((results / slug / "run_1.json").read_text())["duration_s"] for slug, p in expected.items() if p is not None]
    record("broken-peer batch", {
        "runs": len(expected), "healthy": len(healthy), "faulty": len(expected) - len(healthy),
        "faults served": {"agent": len(agent.faults), "llm": len(llm.faults)},
        "fault kinds": {"agent": len(AGENT_FAULTS), "simulated user": len(LLM_FAULTS), "judge": len(LLM_FAULTS)},
        "runs lost": printed["planned_runs"] - summary["completed_runs"],
        "slowest faulty run_s": max(durations), "bound_s": FAULTY_RUN_BOUND, "batch wall_s": round(wall, 2),
    })


def test_peers_slower_than_the_run_time_limit_are_cut_off_by_it(tmp_path, peers):
    """Peers whose own timeouts are generous: only the per-run time limit can end the run, and it does.

    The limit is far past what the healthy run takes on a loaded machine (a third of a second here), and the peers'
    timeouts far past the limit, so the faulty runs end at the limit whatever the load."""
    agent, llm = peers
    root = tmp_path / "project"
    scenarios = root / "eval" / "scenarios"
    scenarios.mkdir(parents=True)
    write_config(root, agent, llm, timeout=600)
    (scenarios / "healthy.yml").write_text(SCRIPTED.format(name="Healthy", message="balance"))
    (scenarios / "agent_hang.yml").write_text(SCRIPTED.format(name="Agent hang", message="hang"))
    (scenarios / "agent_drip.yml").write_text(SCRIPTED.format(name="Agent drip", message="drip"))
    (scenarios / "user_hang.yml").write_text(SIMULATED.format(name="User hang", context="FAULT:hang"))
    (scenarios / "judge_drip.yml").write_text(JUDGED.format(name="Judge drip", criterion="FAULT:drip"))
    limit = 10.0
    done, wall = run_batch(root, tmp_path / "results", 5, limit)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 3, done.stdout + done.stderr
    assert wall < BATCH_WALL_BOUND
    summary = json.loads(done.stdout)
    assert (summary["completed_runs"], summary["passed"], summary["errored"]) == (5, 1, 4)
    for row in summary["errored_runs"]:
        assert row["error"] == f"time limit of {limit:g} s reached", row
        run = json.loads((tmp_path / "results" / row["slug"] / "run_1.json").read_text())
        assert run["verdict"] == "error" and limit <= run["duration_s"] < limit + 60, run  # long before the peers' 600 s
    record("time-limit batch", {
        "runs": summary["planned_runs"], "cut off by the time limit": summary["errored"],
        "runs lost": summary["planned_runs"] - summary["completed_runs"], "limit_s": limit, "batch wall_s": round(wall, 2),
    })
