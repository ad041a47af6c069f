"""A verdict the answer cache gave is marked in every output, and under --safe-env the project's cache decides nothing.

A cache folder is input: a branch can commit answers that pass every criterion.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.cli.test_run import AGENT
from tests.llm.conftest import Answer, judge_says
from tests.llm.test_check_with_judge import PASS, project

MARK = "[answered from the cache]"
FAIL = judge_says("FAIL", "it ordered without asking", turns=[1])


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_check_marks_cached_verdicts_in_json_text_and_junit(tmp_path, openai_server):
    openai_server.answer(Answer(body=PASS))
    scenario, conversation = project(tmp_path, openai_server)
    first = invoke("check", "--format", "json", "--scenario", scenario, conversation, "--junit", str(tmp_path / "first.xml"))
    assert first.exit_code == 0 and '"cached"' not in first.stdout and MARK not in first.stdout
    assert "answered from the cache" not in (tmp_path / "first.xml").read_text()
    again = json.loads(invoke("check", "--format", "json", "--scenario", scenario, conversation, "--junit", str(tmp_path / "again.xml")).stdout)
    assert [(c["outcome"], c.get("cached")) for c in again["criteria"] + again["sop"]] == [("pass", True), ("pass", True)]
    assert MARK not in again["criteria"][0]["detail"]  # JSON says it in its field
    text = invoke("check", "--scenario", scenario, conversation).output
    assert f"PASS  criterion 'The agent confirms before ordering': it asked first {MARK}" in text and text.count(MARK) == 2
    junit = (tmp_path / "again.xml").read_text()
    assert "answered from the cache: criterion 'The agent confirms before ordering': pass" in junit
    assert openai_server.count == 2


def test_run_marks_cached_verdicts_in_run_json_html_text_and_junit(tmp_path, openai_server):
    openai_server.answer(Answer(body=PASS))
    project(tmp_path, openai_server, "agent: {type: python, callable: 'agent:respond'}\n")
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "eval" / "scenarios" / "judged.yml").write_text(
        "scenario:\n  name: Judged\n  simulation_context: You want a new card.\n  script: [hello]\n  goals:\n    criteria: [The agent greets]\n"
    )
    assert invoke("run", str(tmp_path), "--results", str(tmp_path / "r1")).exit_code == 0
    first = json.loads((tmp_path / "r1" / "judged" / "run_1.json").read_text())
    assert "cached" not in first["criteria"][0]
    result = invoke("run", str(tmp_path), "--results", str(tmp_path / "r2"))
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "r2" / "judged" / "run_1.json").read_text())
    assert run["criteria"][0]["cached"] is True
    assert MARK in (tmp_path / "r2" / "judged" / "run_1.txt").read_text()
    assert MARK in (tmp_path / "r2" / "report.html").read_text()
    assert "answered from the cache: criterion 'The agent greets': pass" in (tmp_path / "r2" / "junit.xml").read_text()
    assert openai_server.count == 1


def test_under_safe_env_the_project_s_cache_decides_nothing(tmp_path, openai_server):
    openai_server.answer(Answer(body=PASS))
    scenario, conversation = project(tmp_path, openai_server)
    assert invoke("check", "--scenario", scenario, conversation).exit_code == 0  # the project's cache now answers PASS
    openai_server.answer(Answer(body=FAIL))  # what the model says today
    safe = invoke("check", "--safe-env", "--format", "json", "--scenario", scenario, conversation)
    assert safe.exit_code == 1, safe.output
    assert [(c["outcome"], "cached" in c) for c in json.loads(safe.stdout)["criteria"]] == [("fail", False)]
    assert openai_server.count == 4  # asked again, both judged checks
    assert invoke("check", "--safe-env", "--scenario", scenario, conversation).exit_code == 1 and openai_server.count == 6  # nor written

    replay = invoke("check", "--safe-env", "--replay", "--format", "json", "--scenario", scenario, conversation)
    assert replay.exit_code == 2
    assert json.loads(replay.stdout)["error"]["message"].startswith("--replay under --safe-env needs --cache-dir DIR: the project's answer cache is not read")

    named = invoke("check", "--safe-env", "--cache-dir", str(tmp_path / ".dialogcheck" / "cache"), "--format", "json", "--scenario", scenario, conversation)
    assert named.exit_code == 0, named.output  # a folder named on the command line is the user's choice, and marked
    assert json.loads(named.stdout)["criteria"][0]["cached"] is True and openai_server.count == 6
