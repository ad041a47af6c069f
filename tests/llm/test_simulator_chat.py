"""The simulated user as a chat, seeds and usage, and the persona matrix: `dialogcheck run` (in process, `tests/inprocess.py`) against a
real loopback OpenAI-compatible server that records every request it receives.

The server plays the customer by the persona trait its system prompt carries: the terse customer says `card`
(what the scenario's assertion wants), the others say something else, so each trait's statistics differ.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dialogcheck.scenario.traits import TRAITS
from tests import inprocess
from tests.cli.test_run import AGENT
from tests.llm.conftest import Answer, ScriptedServer, openai_body
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
SCENARIO = """
scenario:
  name: Card lookup
  simulation_context: You are Ana and you want to know about your card.
  persona: A retired teacher who types slowly.
  known_info: Your card number ends in 4821.
  goals:
    assertions:
      - tool_executed: {tool_name: lookup, source: local, arguments: {q: card}}
"""
SAYS = {"terse": "card", "verbose": "well, it is about my card, a long story", "confused": "the plastic thing? my card?"}  # each states the goal (the card), so the user review finds nothing


class CustomerServer(ScriptedServer):
    """Answers as the customer of the trait in the request's system prompt; one message, then done (or, with no
    trait, a two-turn conversation); usage 100 in, 10 out, $0.001 a call."""

    def next_answer(self) -> Answer:
        body = self.bodies[-1]  # the runs go one at a time (--parallel 1), so the last request is this one
        system = body["messages"][0]["content"]
        said = next((SAYS[name] for name in SAYS if TRAITS[name] in system), None)
        if said is None:
            turns = sum(m["role"] == "assistant" for m in body["messages"])
            said, done = ("card", False) if turns == 0 else ("thanks, bye", True)
        else:
            done = True
        text = json.dumps({"message": said, "done": done})
        return Answer(body=openai_body(text, prompt_tokens=100, completion_tokens=10, cost=0.001))


@pytest.fixture
def server():
    customer = CustomerServer("/v1/chat/completions", openai_body())
    customer.thread.start()
    try:
        yield customer
    finally:
        customer.stop()


def make_project(root: Path, server: ScriptedServer, *, scenario: str = SCENARIO, simulation: str = "") -> Path:
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text(
        "agent: {type: python, callable: 'agent:respond'}\n"
        f"simulation:\n  llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: sim, temperature: 0.7}}\n{simulation}"
    )
    (root / "agent.py").write_text(AGENT)
    (root / "eval" / "scenarios" / "lookup.yml").write_text(scenario)
    return root


def dialogcheck(*args) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], text=True, env=clean_env(), timeout=120)


def test_the_simulator_plays_the_user_in_a_chat_with_the_agent_as_the_other_side(tmp_path, server):
    root = make_project(tmp_path / "p", server)
    done = dialogcheck("run", root, "--no-judge", "--no-cache", "--parallel", "1", "--results", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    first, second = server.bodies
    assert first["messages"][0]["role"] == "system"
    system = first["messages"][0]["content"]
    assert "You are Ana and you want to know about your card." in system
    assert "A retired teacher who types slowly." in system and "Your card number ends in 4821." in system
    assert "AGENT:" not in system and "Hi, how can I help?" not in system  # the conversation is not written into the prompt
    assert first["messages"][1:] == [{"role": "user", "content": "Hi, how can I help?"}]
    assert second["messages"][0] == first["messages"][0]  # one system prompt for the whole run
    assert second["messages"][1:] == [
        {"role": "user", "content": "Hi, how can I help?"},
        {"role": "assistant", "content": '{"message":"card","done":false}'},
        {"role": "user", "content": "Looked it up: card"},
    ]
    assert "seed" not in first  # none given: none sent
    run = json.loads((tmp_path / "r" / "lookup" / "run_1.json").read_text())
    assert "persona" not in run
    assert run["simulator"] == {
        "model": "sim",
        "temperature": 0.7,
        "seed": None,
        "prompt_sha256": run["simulator"]["prompt_sha256"],
        "usage": {"input_tokens": 200, "output_tokens": 20, "cost": 0.002},
    }
    assert re.fullmatch(r"[0-9a-f]{64}", run["simulator"]["prompt_sha256"])
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["usage"] == {"simulator": {"input_tokens": 200, "output_tokens": 20, "cost": 0.002}, "judge": {"input_tokens": 0, "output_tokens": 0, "cost": None}}
    assert "personas" not in summary
    text = (tmp_path / "r" / "lookup" / "run_1.txt").read_text()
    assert "simulated user: sim, 200 in / 20 out tokens, $0.0020\n" in text


def test_a_seed_reaches_the_server_one_per_repeat_and_is_recorded(tmp_path, server):
    root = make_project(tmp_path / "p", server, simulation="  seed: 40\n")
    done = dialogcheck("run", root, "--no-judge", "--no-cache", "--parallel", "1", "--runs", "2", "--results", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert [body["seed"] for body in server.bodies] == [40, 40, 41, 41]  # two calls a run, repeat 2 samples with seed + 1
    runs = [json.loads((tmp_path / "r" / "lookup" / f"run_{n}.json").read_text()) for n in (1, 2)]
    assert [run["simulator"]["seed"] for run in runs] == [40, 41]
    assert runs[0]["simulator"]["prompt_sha256"] == runs[1]["simulator"]["prompt_sha256"]

    # --seed wins over simulation.seed, and the plan keeps it for a resume.
    server.bodies.clear()
    done = dialogcheck("run", root, "--no-judge", "--no-cache", "--parallel", "1", "--seed", "7", "--results", tmp_path / "r2")
    assert done.returncode == 0, done.stderr
    assert {body["seed"] for body in server.bodies} == {7}
    assert json.loads((tmp_path / "r2" / "plan.json").read_text())["scenarios"][0]["seed"] == 7


def test_repeats_are_asked_apart_without_a_seed_and_a_rerun_replays_each(tmp_path, server):
    """The same request twice would be answered from the cache: repeat 2 would be repeat 1 again, and pass^k
    would measure nothing. Each repeat is its own cache entry; a rerun with --replay sends nothing."""
    root = make_project(tmp_path / "p", server)
    cache = tmp_path / "cache"
    done = dialogcheck("run", root, "--no-judge", "--parallel", "1", "--runs", "3", "--cache-dir", cache, "--results", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert len(server.bodies) == 6  # two turns a run, every repeat asked
    assert all("seed" not in body and "repeat" not in body for body in server.bodies)  # nothing new on the wire
    replayed = dialogcheck("run", root, "--no-judge", "--parallel", "1", "--runs", "3", "--cache-dir", cache, "--replay", "--results", tmp_path / "again")
    assert replayed.returncode == 0, replayed.stderr
    assert len(server.bodies) == 6
    for n in (1, 2, 3):
        first, again = (json.loads((tmp_path / folder / "lookup" / f"run_{n}.json").read_text()) for folder in ("r", "again"))
        assert again["transcript"] == first["transcript"]


def test_three_traits_run_as_a_matrix_labelled_with_statistics_per_trait(tmp_path, server):
    root = make_project(tmp_path / "p", server)
    results = tmp_path / "r"
    done = dialogcheck(
        "run", root, "--no-judge", "--no-cache", "--parallel", "1", "--runs", "2", "--results", results,
        "--persona", "terse", "--persona", "verbose", "--persona", "confused",
    )
    assert done.returncode == 1, done.stderr  # verbose and confused never say `card`
    runs = [json.loads((results / "lookup" / f"run_{n}.json").read_text()) for n in range(1, 7)]
    assert [(run["run"], run["persona"], run["verdict"]) for run in runs] == [
        (1, "terse", "pass"), (2, "verbose", "fail"), (3, "confused", "fail"),
        (4, "terse", "pass"), (5, "verbose", "fail"), (6, "confused", "fail"),
    ]
    assert not (results / "lookup" / "run_7.json").exists()
    for name, said in SAYS.items():  # each trait's text reached the simulator, and the customer spoke by it
        assert any(TRAITS[name] in body["messages"][0]["content"] for body in server.bodies)
        assert all(run["transcript"][1]["text"] == said for run in runs if run["persona"] == name)

    summary = json.loads((results / "summary.json").read_text())
    assert summary["planned_runs"] == summary["completed_runs"] == 6
    assert [(p["persona"], p["runs"], p["passed"], p["failed"], p["pass_rate"]) for p in summary["personas"]] == [
        ("terse", 2, 2, 0, 1.0), ("verbose", 2, 0, 2, 0.0), ("confused", 2, 0, 2, 0.0),
    ]
    by_trait = {p["persona"]: p["checks"] for p in summary["personas"]}
    assert [(c["pass"], c["fail"], c["failure_rate"]) for c in by_trait["terse"]] == [(2, 0, 0.0)]
    assert [(c["pass"], c["fail"], c["failure_rate"], c["examples"]) for c in by_trait["verbose"]] == [(0, 2, 1.0, ["lookup run 2", "lookup run 5"])]
    assert [(c["pass"], c["fail"]) for c in summary["checks"]] == [(2, 4)]  # the whole batch, as without personas
    assert [(r["run"], r["persona"]) for r in summary["failed_runs"]] == [(2, "verbose"), (3, "confused"), (5, "verbose"), (6, "confused")]

    assert "persona terse                    2/2 passed, 0 failed, 0 errored  pass rate 100%\n" in done.stdout
    assert "persona verbose                  0/2 passed, 2 failed, 0 errored  pass rate 0%\n" in done.stdout
    assert "persona: verbose\n" in (results / "lookup" / "run_2.txt").read_text()
    junit = (results / "junit.xml").read_text()
    assert re.search(r'<testcase name="run_2" classname="lookup"[^>]*>\s*<properties>\s*<property name="persona" value="verbose" />', junit)
    html = (results / "report.html").read_text()
    assert "Pass rate per persona" in html and "persona verbose" in html

    # `report` reads the folder back: the same labels and the same summary.
    again = dialogcheck("report", results, "--format", "json")
    assert json.loads(again.stdout)["personas"] == summary["personas"]

    # The plan keeps the batch's --persona traits, which the scenario's file does not declare: a resume takes them.
    assert json.loads((results / "plan.json").read_text())["personas"] == ["terse", "verbose", "confused"]
    (results / "lookup" / "run_5.json").unlink()
    resumed = dialogcheck("run", "--resume", results, "--no-cache")
    assert resumed.returncode == 1, resumed.stderr
    assert json.loads((results / "lookup" / "run_5.json").read_text())["persona"] == "verbose"


def test_a_scenario_s_own_personas_make_the_matrix_and_a_resumed_matrix_keeps_each_run_s_trait(tmp_path, server):
    scenario = SCENARIO.replace("  goals:", "  personas: [verbose, terse]\n  goals:")
    root = make_project(tmp_path / "p", server, scenario=scenario)
    results = tmp_path / "r"
    done = dialogcheck("run", root, "--no-judge", "--no-cache", "--parallel", "1", "--runs", "2", "--results", results)
    assert done.returncode == 1, done.stderr
    plan = json.loads((results / "plan.json").read_text())
    assert plan["scenarios"][0]["personas"] == ["verbose", "terse"] and plan["total_runs"] == 4
    for n in (2, 3):  # what a killed batch leaves: these two unfinished
        (results / "lookup" / f"run_{n}.json").unlink()
    server.bodies.clear()
    resumed = dialogcheck("run", "--resume", results, "--no-cache")
    assert resumed.returncode == 1, resumed.stderr
    assert len(server.bodies) == 2  # only the two unfinished runs were run again
    runs = [json.loads((results / "lookup" / f"run_{n}.json").read_text()) for n in range(1, 5)]
    assert [(run["persona"], run["verdict"]) for run in runs] == [("verbose", "fail"), ("terse", "pass"), ("verbose", "fail"), ("terse", "pass")]


def test_an_unknown_trait_is_bad_input_before_anything_runs(tmp_path, server):
    root = make_project(tmp_path / "p", server)
    done = dialogcheck("run", root, "--persona", "impatiant", "--results", tmp_path / "r")
    assert done.returncode == 2
    assert "Invalid value for '--persona': unknown persona trait 'impatiant' (did you mean `impatient`?)" in done.stderr
    scenario_file = root / "eval" / "scenarios" / "lookup.yml"
    scenario_file.write_text(SCENARIO.replace("  goals:", "  personas: [terse, skeptic]\n  goals:"))
    done = dialogcheck("run", root, "--results", tmp_path / "r")
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"{scenario_file}:7:21: unknown persona trait 'skeptic' (did you mean `skeptical`?); known: {', '.join(TRAITS)} (in `personas` of `scenario`)\n"
    )
    assert not (tmp_path / "r").exists() and server.count == 0


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_html_report_of_a_matrix_shows_each_run_s_trait_and_the_pass_rate_per_trait(tmp_path, server):
    from tests.report.conftest import BROWSER_BOUND_MS, chromium

    root = make_project(tmp_path / "p", server)
    results = tmp_path / "r"
    args = ["--persona", "terse", "--persona", "verbose", "--persona", "confused"]
    done = dialogcheck("run", root, "--no-judge", "--no-cache", "--parallel", "1", "--results", results, *args)
    assert done.returncode == 1, done.stderr
    with chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(BROWSER_BOUND_MS)
        page.goto((results / "report.html").as_uri())
        rows = page.locator("#personas tbody tr")
        assert [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())] == [
            ["terse", "1", "1", "0", "0", "100%"],
            ["verbose", "1", "0", "1", "0", "0%"],
            ["confused", "1", "0", "1", "0", "0%"],
        ]
        titles = page.locator("section.run h3").all_inner_texts()
        assert sorted(titles) == ["lookup run 1 (terse)", "lookup run 2 (verbose)", "lookup run 3 (confused)"]
        verbose = page.locator("section.run", has=page.locator("h3", has_text="(verbose)"))
        assert "persona verbose" in verbose.locator("p.meta").inner_text()  # a failed run opens with its facts
        page.close()
