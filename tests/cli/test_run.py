"""`dialogcheck run`: the example project end to end, the results layout, exit codes, bad input, --resume."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
SCENARIOS = EXAMPLE / "eval" / "scenarios"

AGENT = '''
import os, pathlib, time

LOG = pathlib.Path(__file__).with_name("opened.log")


def respond(conversation_id, text, initial_slots=None):
    if text is None:
        with LOG.open("a") as log:
            log.write(conversation_id + "\\n")
        return {"messages": [{"text": "Hi, how can I help?"}], "events": []}
    time.sleep(float(os.environ.get("AGENT_DELAY", "0")))
    events = [{"event": "tool_executed", "tool_name": "lookup", "arguments": {"q": text}, "source": "local"}]
    return {"messages": [{"text": "Looked it up: " + text}], "events": events}
'''
#: The test agent, whose runs after the first are held at their first answer until the test writes `release` beside
#: it (for ten minutes at most, a bound on an orphan): a batch stopped once the first run is written has one run, on
#: any machine.
HELD_AFTER_FIRST = AGENT.replace(
    'time.sleep(float(os.environ.get("AGENT_DELAY", "0")))',
    'for _ in range(30_000):\n'
    '        if len(LOG.read_text().split()) < 2 or LOG.with_name("release").exists():\n'
    '            break\n'
    '        time.sleep(0.02)',
)
assert "release" in HELD_AFTER_FIRST


SCENARIO = """
scenario:
  name: {name}
  simulation_context: c
  script: [{message}]
  goals:
    assertions:
      - tool_executed: {{tool_name: lookup, source: local, arguments: {{q: {expected}}}}}
"""


def make_project(tmp_path: Path) -> Path:
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (tmp_path / "agent.py").write_text(AGENT)
    for slug, message, expected in (("alpha", "card", "card"), ("beta", "balance", "card")):
        (tmp_path / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(name=slug.title(), message=message, expected=expected))
    return tmp_path


def run(*args):
    return CliRunner().invoke(cli, ["run", *map(str, args)])


def test_the_example_project_runs_with_passes_and_an_instructive_failure(tmp_path):
    result = run("--no-judge", EXAMPLE, "--results", tmp_path / "r")
    assert result.exit_code == 1, result.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["completed_runs"] == summary["planned_runs"] == len(list(SCENARIOS.glob("*.yml")))
    assert summary["failed"] == 2 and summary["errored"] == 0
    timed_out, failed = summary["failed_runs"]
    assert (timed_out["slug"], failed["slug"]) == ("run_order_timeout", "run_stolen_card")
    assert [c["check"] for c in failed["failed_checks"]] == [
        "sequencing bot_uttered utter_confirm_replacement → tool_executed order_replacement (local)",
        "SOP confirm_before_ordering",
    ]
    assert "FAIL  run_stolen_card run 1: SOP confirm_before_ordering: order_replacement at event" in result.stdout


def test_results_layout_and_run_files(tmp_path):
    project = make_project(tmp_path / "p")
    result = run(project, "--runs", "2", "--results", tmp_path / "r")
    assert result.exit_code == 1  # beta looks up 'balance', not 'card'
    root = tmp_path / "r"
    assert sorted(p.name for p in root.iterdir()) == [".dialogcheck.lock", "alpha", "beta", "junit.xml", "plan.json", "report.html", "summary.json", "summary.txt"]
    assert sorted(p.name for p in (root / "alpha").iterdir()) == [
        "run_1.events.jsonl", "run_1.json", "run_1.txt", "run_2.events.jsonl", "run_2.json", "run_2.txt",
    ]
    document = json.loads((root / "alpha" / "run_1.json").read_text())
    assert document["verdict"] == "pass" and document["ended_because"] == "the user said done"
    assert document["transcript"] == [
        {"role": "agent", "text": "Hi, how can I help?"},
        {"role": "user", "text": "card"},
        {"role": "agent", "text": "Looked it up: card"},
    ]
    assert len(document["latency_s"]) == 1
    events = [json.loads(line) for line in (root / "alpha" / "run_1.events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["bot", "user", "tool_executed", "bot"]
    summary = json.loads((root / "summary.json").read_text())
    assert [(s["slug"], s["passed"], s["failed"], s["pass_hat_k"]) for s in summary["scenarios"]] == [
        ("alpha", 2, 0, {"1": 1.0, "2": 1.0}),
        ("beta", 0, 2, {"1": 0.0, "2": 0.0}),
    ]
    assert "beta                             0/2 passed, 2 failed" in (root / "summary.txt").read_text()


def test_default_results_folder_is_under_eval_results(tmp_path):
    project = make_project(tmp_path)
    (project / "eval" / "scenarios" / "beta.yml").unlink()
    result = run(project)
    assert result.exit_code == 0, result.output
    (batch,) = (project / "eval" / "results").iterdir()
    assert (batch / "alpha" / "run_1.json").is_file()


def test_an_agent_that_breaks_errors_the_run_exit_3(tmp_path):
    project = make_project(tmp_path)
    (project / "eval" / "scenarios" / "beta.yml").unlink()
    (project / "agent.py").write_text("def respond(conversation_id, text, initial_slots=None):\n    raise LookupError('no such card')\n")
    result = run(project, "--results", tmp_path / "r")
    assert result.exit_code == 3
    document = json.loads((tmp_path / "r" / "alpha" / "run_1.json").read_text())
    assert document["verdict"] == "error"
    assert document["error"] == "agent: agent `agent:respond` raised LookupError: no such card"
    assert "errored: alpha run 1: agent: agent `agent:respond` raised LookupError: no such card" in result.stdout


def test_bad_input_is_exit_2_before_anything_runs(tmp_path):
    project = make_project(tmp_path)
    (project / "eval" / "scenarios" / "gamma.yml").write_text("scenario:\n  name: G\n")
    result = run(project, "--results", tmp_path / "r")
    assert result.exit_code == 2
    assert "gamma.yml:2:3: `scenario` is missing required field `simulation_context`" in result.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("flag", ["--junit", "--html", "--otlp-out", "--openinference-out"])
def test_a_report_path_that_cannot_be_written_is_bad_input_before_any_run(tmp_path, flag):
    """Found after the batch, it would cost every run and hide the verdict behind exit 2."""
    project = make_project(tmp_path)
    (tmp_path / "a-file").write_text("not a folder")
    result = run(project, "--results", tmp_path / "r", flag, tmp_path / "a-file" / "report")
    assert result.exit_code == 2, result.output
    what = "report" if flag in ("--junit", "--html") else "telemetry file"
    assert result.stderr == f"{tmp_path / 'a-file'}:1:1: cannot write the {what}: expected a folder here, to hold {tmp_path / 'a-file' / 'report'}\n"
    assert not (tmp_path / "r").exists() and not (project / "opened.log").exists()  # no run, no results folder
    assert run(project, "--results", tmp_path / "r", flag, tmp_path / "reports" / "report").exit_code == 1  # a new folder is made for it
    assert (tmp_path / "reports" / "report").is_file() and [p.name for p in (tmp_path / "reports").iterdir()] == ["report"]


def test_no_agent_and_unscripted_scenarios_are_bad_input(tmp_path):
    project = make_project(tmp_path)
    (project / "eval" / "conftest.yml").write_text("")
    result = run(project)
    assert result.exit_code == 2
    assert "no agent to talk to: set `agent` in eval/conftest.yml or pass --agent" in result.output
    (project / "eval" / "scenarios" / "beta.yml").write_text("scenario:\n  name: B\n  simulation_context: c\n")
    result = run(project, "--agent", "python:agent:respond")
    assert result.exit_code == 2
    assert "beta.yml:1:1: this scenario has no `script`, and no simulation model is configured" in result.output


def test_agent_flag_wins_and_a_wrong_callable_is_bad_input(tmp_path):
    project = make_project(tmp_path)
    result = run(project, "--agent", "python:agent:nope")
    assert result.exit_code == 2
    assert "cannot set up the agent: agent module `agent`" in result.output and "has no `nope`" in result.output


def test_resume_finishes_a_killed_batch_without_repeating_or_losing_a_run(tmp_path):
    project = make_project(tmp_path / "p")
    (project / "agent.py").write_text(HELD_AFTER_FIRST)
    results = tmp_path / "r"
    process = subprocess.Popen(
        [str(DIALOGCHECK), "run", str(project), "--runs", "3", "--parallel", "1", "--results", str(results)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    first = results / "alpha" / "run_1.json"
    deadline = time.monotonic() + 300  # a bound on a hang: the loop ends once the run is written
    while not first.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert first.exists()
    assert [p.relative_to(results) for p in results.rglob("run_*.json")] == [first.relative_to(results)]  # the second is held
    kept = {p: p.read_bytes() for p in results.rglob("run_*.json")}
    opened_before = (project / "opened.log").read_text().split()

    (project / "release").write_text("")
    done = subprocess.run([str(DIALOGCHECK), "run", "--resume", str(results)], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr  # beta fails on purpose
    opened_after = (project / "opened.log").read_text().split()[len(opened_before):]
    assert len(opened_after) == 6 - len(kept)  # only the missing runs ran
    assert all(p.read_bytes() == data for p, data in kept.items())  # finished runs untouched
    summary = json.loads((results / "summary.json").read_text())
    assert summary["completed_runs"] == summary["planned_runs"] == 6
    assert sorted(str(p.relative_to(results)) for p in results.rglob("run_*.json")) == [
        f"{slug}/run_{n}.json" for slug in ("alpha", "beta") for n in (1, 2, 3)
    ]


def test_sigint_and_sigterm_keep_finished_runs_and_say_the_batch_was_interrupted(tmp_path):
    for number, sig in enumerate((signal.SIGINT, signal.SIGTERM)):
        project = make_project(tmp_path / f"p{number}")
        (project / "agent.py").write_text(HELD_AFTER_FIRST)
        results = tmp_path / f"r{number}"
        process = subprocess.Popen(
            [str(DIALOGCHECK), "run", str(project), "--runs", "3", "--parallel", "1", "--results", str(results)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        first = results / "alpha" / "run_1.json"
        deadline = time.monotonic() + 300  # a bound on a hang: the loop ends once the run is written
        while not first.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(sig)
        out, err = process.communicate(timeout=120)
        assert process.returncode == 130, (sig, err)
        summary = json.loads((results / "summary.json").read_text())
        assert summary["interrupted"] is True
        assert summary["completed_runs"] == 1  # the second run is held until the signal
        assert f"finish with: dialogcheck run --resume {results}" in err
        assert "Traceback" not in err
        assert all(json.loads(p.read_text())["verdict"] in ("pass", "fail") for p in results.rglob("run_*.json"))
        (project / "release").write_text("")
        done = subprocess.run([str(DIALOGCHECK), "run", "--resume", str(results)], capture_output=True, text=True)
        assert done.returncode == 1
        summary = json.loads((results / "summary.json").read_text())
        assert (summary["completed_runs"], summary["interrupted"]) == (6, False)


def test_a_run_that_cannot_be_written_is_reported_not_a_traceback(tmp_path):
    project = make_project(tmp_path / "p")
    results = tmp_path / "r"
    # The agent puts a file where the scenario's folder of runs goes, once the batch has the (empty) folder.
    blocking = f"pathlib.Path({str(results / 'alpha')!r}).write_text('in the way')\n"
    (project / "agent.py").write_text(AGENT.replace("    if text is None:\n", "    if text is None:\n        " + blocking, 1))
    result = run(project, "--results", results)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"{results}:1:1: cannot write the results: [Errno 17] File exists" in result.output
    assert "Traceback" not in result.output


def test_an_agent_value_json_cannot_hold_errors_its_run_and_the_batch_goes_on(tmp_path):
    project = make_project(tmp_path / "p")
    (project / "agent.py").write_text(AGENT.replace('"arguments": {"q": text}', '"arguments": {"q": {1, 2} if text == "card" else text}'))
    result = run(project, "--results", tmp_path / "r")
    assert result.exit_code == 1, result.output  # beta still ran, and failed as it always does
    alpha = json.loads((tmp_path / "r" / "alpha" / "run_1.json").read_text())
    assert alpha["verdict"] == "error"
    assert alpha["error"] == "agent: the answer of `agent:respond`: `events[0].arguments.q` is of type `set`, which JSON cannot hold"
    assert (tmp_path / "r" / "alpha" / "run_1.events.jsonl").is_file() and (tmp_path / "r" / "alpha" / "run_1.txt").is_file()
    assert json.loads((tmp_path / "r" / "beta" / "run_1.json").read_text())["verdict"] == "fail"
    assert "Traceback" not in result.output
