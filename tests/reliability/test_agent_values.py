"""An agent's answer holding a value JSON cannot hold errors that run, where the answer is read; the batch goes on.

Such a value (bytes, a set, integer keys, integers past 64 bits, cyclic data,
lone surrogates, nesting deeper than JSON is written) once reached the results
writer and ended the whole batch with exit 2, losing that run's files. Now the
run is errored with the path of the value and what it is, every run's files
are written, and the summary counts them all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.connectors import AgentError, HttpConnector, PythonConnector
from dialogcheck.connectors.json_values import MAX_DEPTH, json_copy
from dialogcheck.results.files import ResultsFolder
from dialogcheck.results.model import RunResult, ScenarioInfo, TranscriptLine
from dialogcheck.results.plan import Plan, PlannedScenario
from dialogcheck.results.writer import BatchWriter
from tests import inprocess
from tests.connectors.conftest import LoopbackServer, Reply, talk
from tests.reliability.figures import record
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
WHERE = "the answer of `agent:respond`"

#: scenario -> (the Python expression the agent puts in its answer's event, what the run's error must end with).
HOSTILE = {
    "bytes": ("b'\\x00raw'", "`events[0].value` is of type `bytes`, which JSON cannot hold"),
    "set": ("{1, 2}", "`events[0].value` is of type `set`, which JSON cannot hold"),
    "int_key": ("{1: 'one'}", "`events[0].value` has the key 1 of type `int`, but JSON keys are strings"),
    "big_int": ("2 ** 64", "`events[0].value` is an integer beyond 64 bits (18446744073709551616), which dialogcheck's JSON cannot hold"),
    "negative_big_int": ("-(2 ** 63) - 1", "`events[0].value` is an integer beyond 64 bits (-9223372036854775809), which dialogcheck's JSON cannot hold"),
    "cyclic": ("CYCLE", "`events[0].value.self` contains itself (cyclic data), which JSON cannot hold"),
    "surrogate": ("'ok \\ud800'", "`events[0].value` holds a lone surrogate '\\ud800' at character 3, which JSON text (UTF-8) cannot hold"),
    "surrogate_key": ("{'\\udc00': 1}", "`events[0].value` has a key that holds a lone surrogate '\\udc00' at character 0, which JSON text (UTF-8) cannot hold"),
    "deep": ("DEEP", "nested more than 254 levels deep, past what dialogcheck writes as JSON"),
    "object": ("object()", "`events[0].value` is of type `object`, which JSON cannot hold"),
}
AGENT = """
CYCLE = {{}}
CYCLE["self"] = CYCLE
DEEP = 1
for _ in range(300):
    DEEP = [DEEP]
VALUES = {{{values}}}


def respond(conversation_id, text, initial_slots=None):
    if text is None:
        return {{"messages": [{{"text": "Hi"}}], "events": []}}
    events = [{{"event": "memory_set", "key": "k", "value": VALUES.get(text, text)}}]
    return {{"messages": [{{"text": "saved " + text}}], "events": events}}
"""
SCENARIO = """\
scenario:
  name: {slug}
  simulation_context: c
  script: [{slug}]
  goals:
    assertions:
      - memory_was_set: [{{name: k}}]
"""


def test_each_value_json_cannot_hold_errors_its_own_run_and_every_run_is_written(tmp_path):
    root = tmp_path / "p"
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    values = ", ".join(f"{slug!r}: {expression}" for slug, (expression, _) in HOSTILE.items())
    (root / "agent.py").write_text(AGENT.format(values=values))
    for slug in [*HOSTILE, "fine"]:
        (root / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(slug=slug))
    results = tmp_path / "r"
    done = inprocess.run([DIALOGCHECK, "run", root, "--parallel", "4", "--results", results], text=True, env=clean_env(), timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr  # errored runs, none failed
    assert "Traceback" not in done.stderr
    summary = json.loads((results / "summary.json").read_text())
    assert (summary["completed_runs"], summary["planned_runs"], summary["passed"], summary["errored"]) == (len(HOSTILE) + 1, len(HOSTILE) + 1, 1, len(HOSTILE))
    for slug, (_, reason) in HOSTILE.items():
        run = json.loads((results / slug / "run_1.json").read_text())
        assert run["verdict"] == "error"
        assert run["error"].startswith(f"agent: {WHERE}: ") and run["error"].endswith(reason), run["error"]
        assert (results / slug / "run_1.txt").is_file() and (results / slug / "run_1.events.jsonl").is_file()
    assert json.loads((results / "fine" / "run_1.json").read_text())["verdict"] == "pass"
    assert (results / "junit.xml").is_file() and (results / "report.html").is_file()
    record("agent values JSON cannot hold, each in a run of one batch", {"tried": len(HOSTILE), "errored with the reason": len(HOSTILE)})


def nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_an_http_agent_nesting_deeper_than_results_are_written_errors_its_run():
    """orjson reads JSON 1,024 levels deep but writes 254: such an answer is refused where it is read."""
    body = {"messages": [{"text": "deep"}], "events": [{"event": "memory_set", "key": "k", "value": nested(300)}]}
    server = LoopbackServer(lambda request: Reply(body=body))
    try:
        with pytest.raises(AgentError) as info:
            talk(HttpConnector(server.url + "/agent", 30.0), lambda c: c.send("c1", "hi"))
    finally:
        server.stop()
    assert str(info.value).endswith(f"`events[0].value[0][0][0][0][0]…` is nested more than {MAX_DEPTH} levels deep, past what dialogcheck writes as JSON")


def test_the_deepest_value_written_is_accepted_and_one_more_level_is_not():
    assert json_copy(nested(MAX_DEPTH), "x") == nested(MAX_DEPTH)
    with pytest.raises(AgentError):
        json_copy(nested(MAX_DEPTH + 1), "x")


def test_what_is_judged_is_a_copy_the_agent_cannot_change_after_answering(tmp_path):
    (tmp_path / "mutating_agent.py").write_text(
        "ANSWER = {'messages': [{'text': 'hi'}], 'events': [{'event': 'memory_set', 'key': 'k', 'value': [1]}]}\n"
        "def respond(cid, text):\n    return ANSWER\n"
    )
    try:
        turn = talk(PythonConnector("mutating_agent:respond", tmp_path), lambda c: c.send("c1", "hi"))
        sys.modules["mutating_agent"].ANSWER["events"][0]["value"].append({1, 2})
    finally:
        sys.modules.pop("mutating_agent", None)
    assert turn.recorded == ({"event": "memory_set", "key": "k", "value": [1]},) and turn.events[0].value == [1]


def test_a_run_that_still_cannot_be_written_is_written_as_errored_and_the_others_as_they_are(tmp_path):
    """The net under the agent's seam: a value that came in another way errors one run, not the batch."""
    folder = ResultsFolder(tmp_path / "r")
    folder.claim().release()
    bad = RunResult(
        ScenarioInfo("bad", "Bad", "bad.yml"), 1, Outcome.PASS,
        events=[{"event": "memory_set", "key": "k", "value": {1, 2}}], transcript=(TranscriptLine("user", "hi"),),
    )
    good = RunResult(ScenarioInfo("good", "Good", "good.yml"), 1, Outcome.PASS, events=[{"event": "user", "text": "hi"}])
    plan = Plan(scenarios=[PlannedScenario(slug="bad", path="bad.yml", runs=1), PlannedScenario(slug="good", path="good.yml", runs=1)], total_runs=2)
    writer = BatchWriter(folder, plan, [], lambda run: run.verdict.value, lambda batch: "summary")
    writer.add(bad)
    writer.add(good)
    writer.close()
    written = json.loads((tmp_path / "r" / "bad" / "run_1.json").read_text())
    assert written["verdict"] == "error" and written["transcript"] == []
    assert written["error"] == (
        "the run's record cannot be written as JSON (Type is not JSON serializable: set); its events, transcript and checks are left out"
    )
    assert (tmp_path / "r" / "bad" / "run_1.events.jsonl").read_bytes() == b""
    assert json.loads((tmp_path / "r" / "good" / "run_1.json").read_text())["verdict"] == "pass"
