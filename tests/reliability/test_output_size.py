"""One huge message cannot blow up the reports: each message, error and detail is cut, and the events file keeps it whole.

A Python agent answers with a real 10 MB message (10,485,760 characters), and raises an
exception whose message is 10 MB long on another run. The `dialogcheck run` of that batch
(run in process, `tests/inprocess.py`, with `--junit` and `--html` copies) and a `dialogcheck check` of the
recorded events with `--junit` and `--html` must keep every file but `run_N.events.jsonl`
small, say where a text was cut, and keep the whole reply in the events file.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests import inprocess
from tests.reliability.figures import record
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
HUGE = 10 * 2**20
#: What any report file may weigh here: a page of checks and a few cut messages.
SMALL = 100_000
AGENT = f'''
def respond(conversation_id, text, initial_slots=None):
    if text == "explode":
        raise ValueError("e" * {HUGE})
    if text is None:
        return {{"messages": [{{"text": "Hello"}}], "events": []}}
    return {{"messages": [{{"text": "x" * {HUGE}}}], "events": [{{"event": "tool_executed", "tool_name": "dump", "source": "local", "arguments": {{}}, "result": "r" * {HUGE}}}]}}
'''
#: The failing check asks for a bot message by its utter name, not by a pattern: every search of a pattern shares a
#: check's one second of wall clock, which a loaded machine's 10 MB copies can use up (the check then errors), and
#: size, not searching, is what this test is about.
SCENARIO = "scenario:\n  name: {name}\n  simulation_context: x\n  script: [{message}]\n  goals:\n    assertions:\n      - bot_uttered: {{utter_name: utter_nope}}\n"
NOTICE = "… [cut from 10,485,760 characters, whole text in run_1.events.jsonl]"


def test_a_10_mb_reply_and_a_10_mb_error_leave_every_report_small(tmp_path):
    root = tmp_path / "project"
    (root / "eval" / "scenarios").mkdir(parents=True)
    # The agent's and the run's time limits far past what moving 10 MB takes, even on a loaded machine: size is the
    # point here, not time.
    (root / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond', timeout: 3600}\n")
    (root / "agent.py").write_text(AGENT)
    (root / "eval" / "scenarios" / "huge_reply.yml").write_text(SCENARIO.format(name="Huge reply", message="hello"))
    (root / "eval" / "scenarios" / "huge_error.yml").write_text(SCENARIO.format(name="Huge error", message="explode"))
    results = tmp_path / "results"
    done = inprocess.run(
        [DIALOGCHECK, "run", str(root), "--results", str(results), "--junit", str(tmp_path / "extra.xml"), "--html", str(tmp_path / "extra.html"),
         "--timeout", "3600"],
        env=clean_env(), timeout=900,
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]

    events = results / "huge_reply" / "run_1.events.jsonl"
    recorded = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["text"] for e in recorded if e["event"] == "bot"] == ["Hello", "x" * HUGE]  # whole in the events file
    assert [e["result"] for e in recorded if e["event"] == "tool_executed"] == ["r" * HUGE]

    run = json.loads((results / "huge_reply" / "run_1.json").read_text())
    assert run["transcript"][-1]["text"].endswith(NOTICE) and len(run["transcript"][-1]["text"]) == 10_000
    errored = json.loads((results / "huge_error" / "run_1.json").read_text())
    assert errored["verdict"] == "error" and len(errored["error"]) == 10_000  # the error's wording, then the cut notice
    assert re.search(r"e… \[cut from 10,485,[0-9]{3} characters\]\Z", errored["error"]), errored["error"][-100:]
    assert NOTICE in (results / "huge_reply" / "run_1.txt").read_text()
    for report in ("junit.xml", "report.html"):
        assert NOTICE in (results / report).read_text()

    check = inprocess.run(
        [DIALOGCHECK, "check", "--scenario", str(root / "eval" / "scenarios" / "huge_reply.yml"), str(events),
         "--junit", str(tmp_path / "check.xml"), "--html", str(tmp_path / "check.html")],
        env=clean_env(), timeout=900,
    )
    assert check.returncode == 1, check.stderr[-2000:]

    sizes = {str(path.relative_to(tmp_path)): path.stat().st_size for path in tmp_path.rglob("*") if path.is_file() and path.suffix != ".py"}
    sizes |= {"run stdout": len(done.stdout), "run stderr": len(done.stderr), "check stdout": len(check.stdout), "check stderr": len(check.stderr)}
    big = {name: size for name, size in sizes.items() if not name.endswith(".events.jsonl") and size > SMALL}
    record("output size", {"reply characters": HUGE, "largest report file": max(s for n, s in sizes.items() if not n.endswith(".events.jsonl")),
                           "results folder": sum(s for n, s in sizes.items() if n.startswith("results/"))})
    assert big == {}
    assert sizes["results/huge_reply/run_1.events.jsonl"] > 2 * HUGE
