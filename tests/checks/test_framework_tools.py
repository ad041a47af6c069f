"""`framework_tools`: which tool names are never counted runs, a setting of eval/conftest.yml and of SOP files.

An agent that is not Mantle may own a tool named `cancel` or `complete`. The list reaches the checks
through their definitions (the loaded scenario or SOP, then each check it builds), not a global: two
definitions with different lists judge the same conversation each by its own.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck import load_scenario, load_sop
from dialogcheck._cli.main import cli
from dialogcheck.checks.base import Outcome
from dialogcheck.config import load_config
from dialogcheck.errors import LoadError
from dialogcheck.events.model import FRAMEWORK_TOOLS
from dialogcheck.judging import evaluate, evaluate_sop
from tests.conftest import bot, conv, tool, user

#: A shop agent whose own tools are named `cancel` (an order) and `complete` (a checkout).
SHOP = conv(
    user("Cancel order 7 please"),
    bot("Shall I cancel order 7?"),
    user("yes"),
    tool("lookup_order", {"order": 7}),
    tool("cancel", {"order": 7}),
    tool("activate", {"skill": "x"}),  # a framework tool under both lists below
    bot("Order 7 is cancelled."),
)

GOALS = """\
  goals:
    assertions:
      - tools_within_one_turn:
          allow_extra_calls: false
          calls:
            - tool_executed: {tool_name: lookup_order, source: local}
            - tool_executed: {tool_name: cancel, source: local}
    sop:
      - {type: tool_called, toolSlug: cancel}
      - {type: tool_sequence, sequence: [lookup_order, cancel], contiguous: true}
      - {type: tool_input_contains, toolSlug: cancel, assertions: {order: {op: equals, value: 7}}}
      - {type: tool_output_contains, toolSlug: cancel, assertions: {$: {op: exists}}}
      - {type: confirmation_requested, beforeToolSlug: cancel, pattern: "(?i)shall I cancel"}
      - {type: no_tool_called, toolSlugs: [complete]}
"""
SHOP_TOOLS = "framework_tools: [activate, listen, hangup]\n"


def project(tmp_path: Path, config: str) -> Path:
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(config)
    scenario = tmp_path / "eval" / "scenarios" / "cancel_order.yml"
    scenario.write_text("scenario:\n  name: Cancel an order\n  simulation_context: c\n" + GOALS)
    return scenario


def test_the_default_is_specs_list():
    assert FRAMEWORK_TOOLS == {
        "activate", "complete", "cancel", "complete_skill", "cancel_skill", "set_fields", "correct",
        "resolve_tool_confirmation", "listen", "hangup",
    }


def test_a_projects_setting_lets_its_scenarios_count_the_agents_own_cancel(tmp_path):
    scenario_path = project(tmp_path, SHOP_TOOLS)
    config = load_config(tmp_path / "eval" / "conftest.yml")
    assert config.framework_tools == {"activate", "listen", "hangup"}
    scenario = load_scenario(scenario_path, environ={}, framework_tools=config.framework_tools)
    assert scenario.framework_tools == config.framework_tools
    result = evaluate(scenario, SHOP)
    assert [r.outcome for r in result.assertions] == [Outcome.PASS], result.assertions[0].detail
    assert [s.outcome for s in result.sop.results] == [Outcome.PASS] * 6, [s.detail for s in result.sop.results]
    # `activate` is still a framework tool there: it is no extra call in the turn, and no call in the log.
    assert "activate" not in result.sop.results[0].detail


def test_under_specs_list_naming_cancel_is_a_load_error_at_its_place(tmp_path):
    scenario_path = project(tmp_path, "")
    with pytest.raises(LoadError) as info:
        load_scenario(scenario_path, environ={})
    lines = str(info.value).replace(str(scenario_path), "s.yml").splitlines()
    assert lines[0] == (
        "s.yml:10:42: `cancel` is a framework tool: it is never counted, so `tools_within_one_turn` could never match it"
        " (an agent that owns a tool of this name sets `framework_tools` in eval/conftest.yml)"
    )
    assert lines[1] == (
        "s.yml:12:39: `toolSlug` in `tool_called` in step 1 of `goals.sop` names the framework tool `cancel`: the tool log"
        " leaves framework tools out, so it could never match (an agent that owns a tool of this name sets `framework_tools`)"
    )
    assert len(lines) == 7  # the assertion and every evaluator naming `cancel` or `complete`, each at its own place


def test_an_empty_list_counts_every_tool(tmp_path):
    scenario = load_scenario(project(tmp_path, "framework_tools: []\n"), environ={}, framework_tools=frozenset())
    result = evaluate(scenario, SHOP)
    # `activate` now counts too: an extra call in the turn, which `allow_extra_calls: false` refuses.
    assert result.assertions[0].outcome is Outcome.FAIL
    assert "activate" in result.assertions[0].detail
    assert result.sop.results[2].outcome is Outcome.PASS  # lookup_order, cancel are still consecutive


def test_the_setting_names_a_new_framework_tool_too(tmp_path):
    """An agent whose own lifecycle tool is `wrap_up`: never counted, and naming it is a load error."""
    config = "framework_tools: [wrap_up]\n"
    scenario_path = project(tmp_path, config)
    scenario_path.write_text(scenario_path.read_text().replace("toolSlugs: [complete]", "toolSlugs: [wrap_up]"))
    with pytest.raises(LoadError) as info:
        load_scenario(scenario_path, environ={}, framework_tools=frozenset({"wrap_up"}))
    assert "names the framework tool `wrap_up`" in str(info.value)


def test_an_sop_file_carries_its_own_setting_to_its_evaluators(tmp_path):
    path = tmp_path / "cancel.yml"
    steps = textwrap.indent(GOALS.split("sop:\n", 1)[1], "  ")
    path.write_text(f"sop:\n  id: cancel\n  name: Cancel an order\n  framework_tools: [activate]\n  steps:\n{steps}")
    sop = load_sop(path, environ={})
    assert sop.framework_tools == {"activate"}
    assert all(step.evaluator.framework_tools == {"activate"} for step in sop.steps.steps)
    assert evaluate_sop(sop, SHOP).sop.outcome is Outcome.PASS
    path.write_text(path.read_text().replace("  framework_tools: [activate]\n", ""))
    with pytest.raises(LoadError):
        load_sop(path, environ={})  # SPEC's list again: `cancel` and `complete` are framework tools


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("cancel", "`framework_tools` in {what} must be a list, got a string"),
        ("[cancel, 3]", "item 2 of `framework_tools` in {what} must be a non-empty string, got an integer"),
        ("null", "`framework_tools` in {what} must be a list, got null"),
    ],
)
def test_a_malformed_setting_is_a_load_error(tmp_path, value, message):
    config = tmp_path / "eval" / "conftest.yml"
    config.parent.mkdir(parents=True)
    config.write_text(f"framework_tools: {value}\n")
    with pytest.raises(LoadError) as info:
        load_config(config)
    assert str(info.value).startswith(f"{config}:1:")
    assert str(info.value).endswith(message.format(what="the config"))
    sop = tmp_path / "s.yml"
    sop.write_text(f"sop:\n  id: s\n  name: S\n  framework_tools: {value}\n  steps: [{{type: tool_called, toolSlug: x}}]\n")
    with pytest.raises(LoadError) as info:
        load_sop(sop, environ={})
    assert message.format(what="`sop`") in str(info.value)


def test_two_definitions_judge_one_conversation_each_by_its_own_list(tmp_path):
    """The record is decoded once; each list gets its own tool log, built once per conversation."""
    shop = load_scenario(project(tmp_path, SHOP_TOOLS), environ={}, framework_tools=frozenset({"activate"}))
    other = tmp_path / "other.yml"
    other.write_text("scenario:\n  name: O\n  simulation_context: c\n  goals:\n    sop:\n      - {type: tool_called, toolSlug: lookup_order}\n")
    mantle = load_scenario(other, environ={})
    assert evaluate(shop, SHOP).verdict is Outcome.PASS
    assert evaluate(mantle, SHOP).verdict is Outcome.PASS
    assert [run.tool_name for run in SHOP.tool_log(frozenset({"activate"}))] == ["lookup_order", "cancel"]
    assert [run.tool_name for run in SHOP.tool_log()] == ["lookup_order"]
    assert SHOP.tool_log(frozenset({"activate"})) is SHOP.tool_log(frozenset({"activate"}))  # built once


# --- the commands pick the project's setting up ------------------------------------------------


def _shop_events(folder: Path) -> Path:
    path = folder / "shop.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in SHOP.raw_events))
    return path


def test_check_judges_a_scenario_with_its_projects_setting(tmp_path):
    scenario = project(tmp_path, SHOP_TOOLS)
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--scenario", str(scenario), str(_shop_events(tmp_path))])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verdict"] == "pass"


def test_validate_checks_a_scenario_with_its_projects_setting(tmp_path):
    scenario = project(tmp_path, SHOP_TOOLS)
    assert CliRunner().invoke(cli, ["validate", str(scenario)]).exit_code == 0
    assert CliRunner().invoke(cli, ["validate", str(tmp_path)]).exit_code == 0
    (tmp_path / "eval" / "conftest.yml").write_text("")
    result = CliRunner().invoke(cli, ["validate", str(scenario)])
    assert result.exit_code == 2 and "`cancel` is a framework tool" in result.stdout


AGENT = '''
def respond(conversation_id, text, initial_slots=None):
    if text is None:
        return {"messages": [{"text": "Shall I cancel order 7?"}], "events": []}
    events = [{"event": "tool_executed", "tool_name": name, "arguments": {"order": 7}, "source": "local"}
              for name in ("lookup_order", "cancel", "activate")]
    return {"messages": [{"text": "Order 7 is cancelled."}], "events": events}
'''


def test_run_judges_a_projects_scenarios_with_its_setting(tmp_path):
    scenario = project(tmp_path, SHOP_TOOLS + "agent: {type: python, callable: 'agent:respond'}\n")
    scenario.write_text(scenario.read_text().replace("  goals:", "  script: [Cancel order 7]\n  goals:"))
    (tmp_path / "agent.py").write_text(AGENT)
    result = CliRunner().invoke(cli, ["run", str(tmp_path), "--results", str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    assert summary["passed"] == 1
