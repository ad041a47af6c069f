"""`dialogcheck run` with an LLM playing the user, served by a real loopback OpenAI-compatible server."""

import json

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.cli.test_run import AGENT
from tests.llm.conftest import Answer, openai_body

SCENARIO = """
scenario:
  name: Card lookup
  simulation_context: You are Ana and you want to know about your card.
  script: [balance]
  goals:
    assertions:
      - tool_executed: {tool_name: lookup, source: local, arguments: {q: my card please}}
"""


def make_project(tmp_path, server):
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(
        "agent: {type: python, callable: 'agent:respond'}\n"
        f"simulation:\n  llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: sim}}\n"
    )
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "eval" / "scenarios" / "lookup.yml").write_text(SCENARIO)
    return tmp_path


def test_the_llm_user_replaces_the_script_and_a_rerun_is_served_from_the_cache(tmp_path, openai_server):
    openai_server.answer(
        Answer(body=openai_body('{"message": "my card please", "done": false}')),
        Answer(body=openai_body('{"message": "thanks, bye", "done": true}')),
    )
    root = make_project(tmp_path / "p", openai_server)
    first = CliRunner().invoke(cli, ["run", str(root), "--simulate", "llm", "--results", str(tmp_path / "r1")])
    assert first.exit_code == 0, first.output
    run = json.loads((tmp_path / "r1" / "lookup" / "run_1.json").read_text())
    assert [t["text"] for t in run["transcript"] if t["role"] == "user"] == ["my card please", "thanks, bye"]
    assert run["ended_because"] == "the user said done"
    prompt = openai_server.bodies[0]["messages"][0]["content"]
    assert "You are Ana and you want to know about your card." in prompt
    assert openai_server.bodies[0]["messages"][1:] == [{"role": "user", "content": "Hi, how can I help?"}]  # the agent, across the chat
    assert openai_server.count == 2

    # The agent is deterministic and the conversation id is not in the prompt, so a rerun asks nothing.
    second = CliRunner().invoke(cli, ["run", str(root), "--simulate", "llm", "--results", str(tmp_path / "r2")])
    assert second.exit_code == 0 and openai_server.count == 2


def test_scripted_scenarios_keep_their_script_by_default(tmp_path, openai_server):
    root = make_project(tmp_path / "p", openai_server)
    result = CliRunner().invoke(cli, ["run", str(root), "--results", str(tmp_path / "r")])
    assert result.exit_code == 1  # the script says "balance", the goal wants "my card please"
    assert openai_server.count == 0
