"""A broken simulator against the bundled agent: the run is `suspect`, not the agent's failure, retried, and reported so.

The simulated user is a real loopback OpenAI-compatible server whose model
"echoes its prompt" (it answers with the prompt's own first line), the way a
small local model was seen to answer `Your next message.`. `dialogcheck run`
runs in process (`tests/inprocess.py`); the report is opened in Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests import inprocess
from tests.conftest import EXAMPLE
from tests.llm.conftest import Answer, ScriptedServer, openai_body
from tests.report.conftest import BROWSER_BOUND_MS, CHROMIUM, chromium

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
SCENARIO = "card_replace_damaged"
#: What a sound simulated customer of that scenario says: the brief's goal in its own words.
SOUND = '{"message": "Hi, my card is damaged and I need a replacement.", "done": true}'


class EchoServer(ScriptedServer):
    """A model that answers the simulated user's prompt with the prompt's first line, as a JSON answer; the
    requests numbered in `sound` (from 1) get a sound answer instead (a simulator that works on a later attempt)."""

    def __init__(self) -> None:
        super().__init__("/v1/chat/completions", openai_body())
        self.sound: dict[int, str] = {}

    def next_answer(self) -> Answer:
        with self.lock:  # requests come one at a time (--parallel 1): the last body is this request's
            number, prompt = len(self.bodies), self.bodies[-1]["messages"][0]["content"]  # the system prompt
        text = self.sound.get(number) or json.dumps({"message": prompt.splitlines()[0], "done": True})
        return Answer(body=openai_body(text))


@pytest.fixture
def echo_server(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = EchoServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.stop()


def project(tmp_path: Path, server) -> Path:
    """The bundled example with the LLM playing its customers."""
    root = tmp_path / "card_replace"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("results", "__pycache__", ".dialogcheck"))
    with (root / "eval" / "conftest.yml").open("a") as conftest:
        conftest.write(f"simulation:\n  llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: echo}}\n")
    return root


def run(root: Path, results: Path, *more: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": "sk-test"}
    scenario = root / "eval" / "scenarios" / f"{SCENARIO}.yml"
    command = [str(DIALOGCHECK), "run", str(scenario), "--simulate", "llm", "--no-judge", "--results", str(results), "--parallel", "1", *more]
    return inprocess.run(command, text=True, env=env, timeout=120)


def test_an_echoing_simulator_makes_the_run_suspect_not_failed_retried_and_reported(tmp_path, echo_server):
    results = tmp_path / "results"
    done = run(project(tmp_path, echo_server), results)

    assert done.returncode == 3, done.stdout + done.stderr  # as errored runs: the agent was not tested
    assert echo_server.count == 2  # the first attempt, then one retry asked afresh (never from the cache)
    document = json.loads((results / SCENARIO / "run_1.json").read_text())
    assert document["verdict"] == "suspect"
    assert document["suspect_attempts"] == 2
    review = document["user_review"]
    assert review["verdict"] == "suspect"
    rules = {reason["rule"] for reason in review["reasons"]}
    assert "prompt_wording" in rules
    assert review["reasons"][0]["turn"] == 1
    assert document["transcript"][1]["text"].startswith("You are playing a customer")

    summary = json.loads((results / "summary.json").read_text())
    assert (summary["passed"], summary["failed"], summary["errored"], summary["suspect"]) == (0, 0, 0, 1)
    assert summary["suspect_runs"][0]["run"] == 1 and summary["suspect_runs"][0]["attempts"] == 2
    assert summary["scenarios"][0]["suspect"] == 1 and summary["scenarios"][0]["pass_rate"] is None
    assert summary["checks"] == []  # a suspect run's checks say nothing of the agent

    text = (results / "summary.txt").read_text()
    assert "1 run: 0 passed, 0 failed, 0 errored, 1 suspect" in text
    assert f"suspect: {SCENARIO} run 1: turn 1 prompt_wording" in text and "(2 suspect attempts)" in text
    assert "FAIL" not in text
    assert "1 run: 0 passed, 0 failed, 0 errored, 1 suspect" in done.stdout
    run_text = (results / SCENARIO / "run_1.txt").read_text()
    assert "verdict: SUSPECT" in run_text and "simulated user: suspect (2 suspect attempts)" in run_text

    junit = ET.parse(results / "junit.xml").getroot()
    suite = junit.find("testsuite")
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "1")
    case = suite.find("testcase")
    assert case.find("failure") is None and case.find("error") is None
    assert "prompt_wording" in case.find("skipped").text
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["user_review.verdict"] == "suspect" and properties["user_review.suspect_attempts"] == "2"

    html = (results / "report.html").read_text()
    assert "Simulated user: suspect" in html and "1 suspect" in html

    again = inprocess.run([DIALOGCHECK, "report", results], text=True, timeout=300)
    assert again.returncode == 3, again.stderr  # read back, the batch is the same batch
    assert again.stdout == text


def test_a_retry_that_comes_out_sound_is_the_result_and_says_the_suspect_attempt(tmp_path, echo_server):
    echo_server.sound = {2: SOUND}  # the first attempt echoes; the retry is sound
    results = tmp_path / "results"
    done = run(project(tmp_path, echo_server), results)

    document = json.loads((results / SCENARIO / "run_1.json").read_text())
    assert document["verdict"] in ("pass", "fail"), done.stdout + done.stderr
    assert document["user_review"] == {"verdict": "ok", "reasons": []}
    assert document["suspect_attempts"] == 1
    assert document["transcript"][1]["text"] == json.loads(SOUND)["message"]
    summary = json.loads((results / "summary.json").read_text())
    assert summary["suspect"] == 0 and summary["retried_runs"] == [{"slug": SCENARIO, "run": 1, "suspect_attempts": 1, "verdict": document["verdict"]}]
    assert done.returncode == (0 if document["verdict"] == "pass" else 1)


def test_retry_suspect_zero_runs_a_suspect_run_once(tmp_path, echo_server):
    results = tmp_path / "results"
    done = run(project(tmp_path, echo_server), results, "--retry-suspect", "0")
    assert done.returncode == 3, done.stderr
    assert echo_server.count == 1
    document = json.loads((results / SCENARIO / "run_1.json").read_text())
    assert document["verdict"] == "suspect" and document["suspect_attempts"] == 1


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_report_shows_a_suspect_run_apart_in_a_browser(tmp_path, echo_server):
    results = tmp_path / "results"
    run(project(tmp_path, echo_server), results)
    with chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(BROWSER_BOUND_MS)
        problems = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto((results / "report.html").as_uri())
        assert page.locator('.run[data-verdict="suspect"]').count() == 1
        assert page.locator('.run[data-verdict="fail"]').count() == 0
        assert "Suspect" in page.locator("#banner").inner_text()
        review = page.locator('.run[data-verdict="suspect"] .user-review')  # a run not passed is drawn open
        assert "Simulated user: suspect" in review.inner_text() and "prompt_wording" in review.inner_text()
        assert page.locator('.run[data-verdict="suspect"] .badge.suspect').first.inner_text() == "SUSPECT"
        page.select_option("#f-verdict", "suspect")
        assert page.locator(".run").count() == 1
        page.select_option("#f-verdict", "fail")
        assert page.locator(".run").count() == 0
        assert problems == []


def test_a_retry_is_another_sample_with_its_own_seed_and_cache_entry_so_a_rerun_replays_it(tmp_path, echo_server):
    """The same seed and cache entry would ask for the same fault: the retry samples with seed + 1 under its own
    key; a rerun of the unchanged batch with --replay sends nothing and gives the same verdicts."""
    root = project(tmp_path, echo_server)
    done = run(root, tmp_path / "results", "--seed", "5")
    assert done.returncode == 3, done.stdout + done.stderr
    assert [body.get("seed") for body in echo_server.bodies] == [5, 6]
    document = json.loads((tmp_path / "results" / SCENARIO / "run_1.json").read_text())
    assert (document["simulator"]["seed"], document["suspect_attempts"]) == (6, 2)  # the kept attempt says what it was sampled with
    replayed = run(root, tmp_path / "again", "--seed", "5", "--replay")
    assert replayed.returncode == 3, replayed.stdout + replayed.stderr
    assert echo_server.count == 2  # nothing more was sent
    again = json.loads((tmp_path / "again" / SCENARIO / "run_1.json").read_text())
    assert (again["verdict"], again["suspect_attempts"], again["user_review"]) == ("suspect", 2, document["user_review"])
