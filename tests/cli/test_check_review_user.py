"""`check --review-user`: the `user` messages of recorded conversations reviewed against their scenario's brief.

On real simulated runs (tau2-bench and tau-bench imports) nothing is flagged;
a copy of one with a planted simulator fault is `suspect`: counted apart,
exit 3, its `user_review` in the JSON. Every run is the installed command
in a real subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogcheck import check_conversations, load_scenario
from tests.cli.test_check_scenarios import TAU_DATA, check, run
from tests.conftest import EXAMPLE

TAU2 = TAU_DATA / "tau2_airline_sample.json"
SCENARIO = """\
scenario:
  name: tau2 task {task}
  simulation_context: {context}
  goals:
    assertions:
      - bot_did_not_utter: {{text_matches: "(?i)traceback"}}
"""
SOP = next((EXAMPLE / "sops").glob("*.yml"))
#: What a broken simulator sends: its prompt's own words.
PLANTED = "Write your next message. Answer with one JSON object and nothing else"


@pytest.fixture
def tau2(tmp_path) -> Path:
    """The tau2 sample imported, each conversation naming its task's scenario, with a scenario per task whose brief
    is the task's `reason_for_call`; and one more conversation, a copy whose first user message is planted."""
    source = json.loads(TAU2.read_text())
    imported = run("import", "--from", "tau2", TAU2, "-o", "runs.jsonl", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    (tmp_path / "scenarios").mkdir()
    for task in source["tasks"]:
        context = json.dumps(task["user_scenario"]["instructions"]["reason_for_call"])
        (tmp_path / "scenarios" / f"tau2-task-{task['id']}.yml").write_text(SCENARIO.format(task=task["id"], context=context))
    task_of = {f"task-{simulation['task_id']}-trial-{simulation['trial']}": simulation["task_id"] for simulation in source["simulations"]}
    lines = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    for line in lines:
        line["scenario"] = f"tau2-task-{task_of[line['sender_id']]}"
    planted = json.loads(json.dumps(lines[0]))
    planted["sender_id"] = "planted"
    first_user = next(event for event in planted["events"] if event["event"] == "user")
    first_user["text"] = PLANTED
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in [*lines, planted]))
    return tmp_path


def test_real_tau2_runs_are_ok_and_a_planted_fault_is_suspect_apart(tau2):
    done = check("--format", "json", "--review-user", "--scenario", "scenarios", "runs.jsonl", cwd=tau2)
    assert done.returncode == 3, done.stderr  # nothing failed, one conversation's user is suspect
    document = json.loads(done.stdout)
    reviews = {c["conversation_id"]: c["user_review"] for c in document["conversations"]}
    verdicts = {c["conversation_id"]: c["verdict"] for c in document["conversations"]}
    assert len(reviews) == 4
    assert {cid: r["verdict"] for cid, r in reviews.items() if cid != "planted"} == {cid: "ok" for cid in reviews if cid != "planted"}
    assert verdicts["planted"] == "suspect" and reviews["planted"]["verdict"] == "suspect"
    assert [(r["turn"], r["rule"]) for r in reviews["planted"]["reasons"]] == [(1, "prompt_wording")]
    summary = document["summary"]
    assert (summary["passed"], summary["failed"], summary["errored"], summary["suspect"]) == (3, 0, 0, 1)
    assert {row["pass"] for row in summary["checks"]} == {1}  # the suspect conversation's checks are not counted

    text = check("--review-user", "--scenario", "scenarios", "runs.jsonl", cwd=tau2)
    assert text.returncode == 3
    out = text.stdout.decode()
    assert "verdict: SUSPECT" in out and "turn 1 prompt_wording: repeats the prompt's own words" in out
    assert "4 conversations: 3 passed, 0 failed, 0 errored, 1 suspect" in out


def test_without_the_flag_nothing_is_reviewed(tau2):
    done = check("--format", "json", "--scenario", "scenarios", "runs.jsonl", cwd=tau2)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert all("user_review" not in c for c in document["conversations"])
    assert "suspect" not in document["summary"]


def test_junit_and_html_show_the_suspect_conversation_apart(tau2):
    done = check("--review-user", "--scenario", "scenarios", "runs.jsonl", "--junit", "out.xml", "--html", "out.html", cwd=tau2)
    assert done.returncode == 3
    junit = (tau2 / "out.xml").read_text()
    assert 'skipped="1"' in junit and "<failure" not in junit and 'name="user_review.verdict" value="suspect"' in junit
    assert '"u"' in (tau2 / "out.html").read_text()  # the page's record of a suspect conversation


def test_tau_bench_runs_with_their_derived_scenarios_are_not_flagged(tmp_path):
    imported = run("import", "--from", "tau-bench", TAU_DATA / "tau_bench_airline_sample.json", "-o", "runs.jsonl", "--derive-scenarios", "scenarios", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    done = check("--format", "json", "--review-user", "--scenario", "scenarios", "--pair", r"task-(\d+)", "runs.jsonl", cwd=tmp_path)
    document = json.loads(done.stdout)
    assert [c["user_review"]["verdict"] for c in document["conversations"]] == ["ok"] * 4
    assert done.returncode == 1  # the agent's own failures stay failures


def test_review_user_needs_a_scenario(tau2):
    done = check("--review-user", "--sop", SOP, "runs.jsonl", cwd=tau2)
    assert done.returncode == 2
    assert "--review-user" in done.stderr.decode()


def test_the_library_reviews_when_asked(tau2):
    scenario = load_scenario(tau2 / "scenarios" / "tau2-task-13.yml")
    lines = [json.loads(line) for line in (tau2 / "runs.jsonl").read_text().splitlines()]
    events = [line["events"] for line in lines if line["scenario"] == "tau2-task-13"]
    reviewed = list(check_conversations(scenario, events, no_judge=True, review_user=True))
    assert [r.verdict.value for r in reviewed] == ["pass", "suspect"]
    assert reviewed[1].user_review.rules() == ("prompt_wording",)
    assert [r.user_review for r in check_conversations(scenario, events, no_judge=True)] == [None, None]
    with pytest.raises(ValueError, match="not an SOP"):
        from dialogcheck import load_sop

        list(check_conversations(load_sop(SOP), events, review_user=True))


def test_the_html_page_shows_why_a_conversation_is_suspect(tau2):
    """The page of `check --review-user` shows the review of the suspect conversation in its detail, each reason
    with its turn and rule, in a real browser; a conversation whose user was fine says so."""
    from playwright.sync_api import expect

    from tests.report.conftest import chromium, watched_tab

    done = check("--review-user", "--scenario", "scenarios", "runs.jsonl", "--html", "out.html", cwd=tau2)
    assert done.returncode == 3
    with chromium() as browser:
        page, problems = watched_tab(browser)
        page.goto((tau2 / "out.html").as_uri())
        page.fill("#f-text", "planted")
        section = page.locator("#entries section")
        expect(section).to_have_count(1, timeout=60_000)  # once the page has applied the filter, however slowly
        review = section.locator(".user-review.suspect")  # a suspect entry is drawn open
        assert review.count() == 1
        text = review.inner_text()
        assert "Simulated user: suspect" in text and "prompt_wording" in text and "turn " in text
        assert section.locator(".run-checks li.check").count() >= 1  # the checks are still drawn
        assert section.locator("p.meta").count() == 1 and "tau2 task" in section.locator("p.meta").inner_text()
        page.fill("#f-text", "")
        expect(page.locator("#entries section").filter(has_not_text="planted")).not_to_have_count(0, timeout=60_000)
        ok = page.locator("#entries section").filter(has_not_text="planted").first
        ok.locator("summary").first.click()
        assert ok.locator(".user-review.ok").inner_text().startswith("Simulated user: ok")
        assert problems == []
