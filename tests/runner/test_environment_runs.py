"""`run` with an environment: each run its own state and faults, the calls it answered recorded as the run's events."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dialogcheck import run_scenarios
from dialogcheck.checks.base import Outcome
from tests import inprocess

from ..environment.conftest import SHOP, write_environment

#: Reads the order, then cancels it when asked; says what the environment answered. Reports no events itself.
AGENT = '''
import threading

CALLS = []
LOCK = threading.Lock()


def respond(conversation_id, text, environment=None):
    if text is None:
        return {"messages": [{"text": "Hello"}]}
    if "cancel" in text:
        answer = environment.call("cancel_order", {"order_id": "O1", "reason": "asked"})
        if answer["is_error"]:
            return {"messages": [{"text": "Sorry, that failed: " + str(answer["result"])}]}
        return {"messages": [{"text": "Your order is cancelled."}]}
    answer = environment.call("get_order", {"order_id": "O1"})
    with LOCK:
        CALLS.append(answer["result"]["status"] if not answer["is_error"] else "error")
    return {"messages": [{"text": "It is " + str(answer["result"])}]}
'''

SCENARIO = """\
scenario:
  name: {name}
  simulation_context: You want your order cancelled.
  script: [where is my order, please cancel it]
{extra}  goals:
    assertions:
      - tool_executed: {{tool_name: cancel_order, source: local}}
"""


def project(root: Path, *, agent: str = AGENT, scenarios: dict[str, str] | None = None, environment: str = SHOP, default: bool = True) -> Path:
    write_environment(root, environment)
    (root / "agent.py").write_text(textwrap.dedent(agent))
    config = "agent: {type: python, callable: agent:respond}\n" + ("environment: shop\n" if default else "")
    (root / "eval" / "conftest.yml").write_text(config)
    folder = root / "eval" / "scenarios"
    folder.mkdir(parents=True, exist_ok=True)
    for name, extra in (scenarios or {"cancel": ""}).items():
        (folder / f"{name}.yml").write_text(SCENARIO.format(name=name, extra=textwrap.indent(textwrap.dedent(extra), "  ")))
    return root


def events(folder: Path, slug: str, number: int = 1) -> list[dict]:
    return [json.loads(line) for line in (folder / slug / f"run_{number}.events.jsonl").read_text().splitlines()]


def run_file(folder: Path, slug: str, number: int = 1) -> dict:
    return json.loads((folder / slug / f"run_{number}.json").read_text())


def test_the_calls_a_python_agent_makes_are_the_runs_events_and_change_its_own_state(tmp_path):
    batch = run_scenarios(project(tmp_path), results=tmp_path / "out", no_judge=True)

    assert (batch.passed, batch.failed, batch.errored) == (1, 0, 0)
    recorded = events(tmp_path / "out", "cancel")
    assert [e["event"] for e in recorded] == ["bot", "user", "tool_executed", "bot", "user", "tool_executed", "bot"]
    cancel = recorded[5]
    assert cancel["tool_name"] == "cancel_order" and cancel["metadata"] == {"environment": True} and cancel["is_error"] is False
    environment = run_file(tmp_path / "out", "cancel")["environment"]
    assert environment["name"] == "shop" and environment["calls"] == 2 and environment["faults"] == []
    assert environment["initial_state"]["orders"]["O1"]["status"] == "placed"
    assert environment["final_state"]["orders"]["O1"]["status"] == "cancelled"
    run = batch.runs[0]
    assert run.record.world is not None and run.record.world.final["refunds"][0]["order_id"] == "O1"


def test_a_run_without_its_cancel_call_fails_the_assertion_the_environment_records(tmp_path):
    quiet = AGENT.replace('answer = environment.call("cancel_order", {"order_id": "O1", "reason": "asked"})', 'answer = {"is_error": False}')
    batch = run_scenarios(project(tmp_path, agent=quiet), results=tmp_path / "out", no_judge=True)

    assert batch.failed == 1
    assert run_file(tmp_path / "out", "cancel")["environment"]["final_state"]["orders"]["O1"]["status"] == "placed"


def test_parallel_runs_that_write_the_same_record_never_see_each_others_writes(tmp_path):
    batch = run_scenarios(project(tmp_path), runs=8, parallel=8, results=tmp_path / "out", no_judge=True)

    assert batch.passed == 8
    for number in range(1, 9):
        reads = [e for e in events(tmp_path / "out", "cancel", number) if e.get("tool_name") == "get_order"]
        assert reads[0]["result"]["status"] == "placed"  # every run reads its own fresh copy, before its own cancel
        final = run_file(tmp_path / "out", "cancel", number)["environment"]["final_state"]
        assert len(final["refunds"]) == 1


def test_a_scenario_gives_its_own_state_and_faults_over_the_environments(tmp_path):
    own = {
        "cancel": "",
        "shipped": "environment:\n  name: shop\n  state:\n    orders: {O1: {id: O1, status: shipped, total: 5, paid: true}}\n    refunds: []\n",
        "timeout": "environment:\n  name: shop\n  faults:\n    - {tool: cancel_order, kind: timeout}\n",
    }
    run_scenarios(project(tmp_path, scenarios=own), results=tmp_path / "out", no_judge=True)

    assert run_file(tmp_path / "out", "shipped")["environment"]["initial_state"]["orders"]["O1"]["status"] == "shipped"
    timed_out = run_file(tmp_path / "out", "timeout")
    assert timed_out["environment"]["faults"] == [{"kind": "timeout", "tool": "cancel_order", "index": 1, "event": 5}]
    assert timed_out["environment"]["final_state"]["orders"]["O1"]["status"] == "placed"
    carried = events(tmp_path / "out", "timeout")[5]
    assert carried["is_error"] is True and carried["metadata"]["fault"]["kind"] == "timeout"
    assert run_file(tmp_path / "out", "cancel")["environment"]["faults"] == []


RATED = SHOP + """\
  faults:
    - {tool: get_order, kind: error, status: 503, message: busy, rate: 0.5}
"""


def fault_log(folder: Path, runs: int) -> list:
    return [[e.get("metadata", {}).get("fault") for e in events(folder, "cancel", n) if e["event"] == "tool_executed"] for n in range(1, runs + 1)]


def verdicts(folder: Path, runs: int) -> list[str]:
    return [run_file(folder, "cancel", n)["verdict"] for n in range(1, runs + 1)]


def test_the_same_seed_gives_the_same_faults_and_verdicts_and_another_seed_another_schedule(tmp_path):
    root = project(tmp_path, environment=RATED)
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        run_scenarios(root, runs=12, seed=seed, results=tmp_path / name, no_judge=True)

    assert fault_log(tmp_path / "a", 12) == fault_log(tmp_path / "b", 12)
    assert verdicts(tmp_path / "a", 12) == verdicts(tmp_path / "b", 12)
    assert fault_log(tmp_path / "a", 12) != fault_log(tmp_path / "c", 12)
    fired = [log[0] for log in fault_log(tmp_path / "a", 12)]
    assert 0 < sum(f is not None for f in fired) < 12  # the repeats meet different faults


def test_faults_off_runs_the_same_scenarios_without_the_schedule_and_the_plan_keeps_it(tmp_path):
    root = project(tmp_path, environment=SHOP + "  faults:\n    - {tool: cancel_order, kind: timeout}\n")
    faulted = run_scenarios(root, results=tmp_path / "on", no_judge=True)
    baseline = run_scenarios(root, results=tmp_path / "off", no_judge=True, faults=False)

    assert faulted.failed == 0 and faulted.passed == 1  # the call is made, and answered with a timeout
    assert run_file(tmp_path / "on", "cancel")["environment"]["faults"][0]["kind"] == "timeout"
    off = run_file(tmp_path / "off", "cancel")["environment"]
    assert off["faults_on"] is False and off["faults"] == [] and off["final_state"]["orders"]["O1"]["status"] == "cancelled"
    assert baseline.passed == 1
    assert json.loads((tmp_path / "off" / "plan.json").read_text())["faults"] is False
    assert "faults" not in json.loads((tmp_path / "on" / "plan.json").read_text())


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return inprocess.run([Path(sys.executable).parent / "dialogcheck", *args], cwd=cwd, text=True, timeout=300)


def test_faults_off_on_the_command_line_and_never_with_resume(tmp_path):
    root = project(tmp_path, environment=SHOP + "  faults:\n    - {tool: cancel_order, kind: timeout}\n")
    done = cli("run", ".", "--faults", "off", "--results", "out", "--no-judge", cwd=root)
    assert done.returncode == 0, done.stderr
    assert run_file(root / "out", "cancel")["environment"]["faults_on"] is False

    resumed = cli("run", "--resume", "out", "--faults", "on", cwd=root)
    assert resumed.returncode == 2 and "--faults cannot be given with it" in resumed.stderr
    bad = cli("run", ".", "--faults", "maybe", cwd=root)
    assert bad.returncode == 2 and "'maybe' is not one of 'on', 'off'" in bad.stderr


def test_a_python_agent_that_takes_no_environment_errors_its_run_saying_so(tmp_path):
    plain = "def respond(conversation_id, text):\n    return {'messages': [{'text': 'hi'}]}\n"
    batch = run_scenarios(project(tmp_path, agent=plain), results=tmp_path / "out", no_judge=True)

    assert batch.errored == 1 and batch.runs[0].verdict is Outcome.ERROR
    assert "takes no `environment` keyword" in batch.runs[0].error


REPORTING = '''
def respond(conversation_id, text, environment=None):
    if text is None:
        return {"messages": [{"text": "Hello"}]}
    environment.call("get_order", {"order_id": "O1"})
    environment.call("get_order", {"order_id": "O2"})
    reported = [
        {"event": "tool_executed", "tool_name": "get_order", "arguments": {"order_id": "O1"}, "source": "local", "result": "made up"},
        {"event": "tool_executed", "tool_name": "cancel_order", "arguments": {"order_id": "O1", "reason": "x"}, "source": "local"},
    ]
    return {"messages": [{"text": "Done"}], "events": reported}
'''


def test_calls_the_agent_reports_are_paired_with_those_answered_and_the_rest_named(tmp_path):
    root = project(tmp_path, agent=REPORTING, scenarios={"cancel": "script: [check my orders]\n"})
    (root / "eval/scenarios/cancel.yml").write_text(SCENARIO.format(name="cancel", extra="").replace("where is my order, please cancel it", "check my orders"))
    run_scenarios(root, results=tmp_path / "out", no_judge=True)

    recorded = events(tmp_path / "out", "cancel")
    kinds = [(e["event"], e.get("tool_name"), e.get("metadata", {}).get("environment")) for e in recorded]
    assert kinds == [
        ("bot", None, None),
        ("user", None, None),
        ("tool_executed", "get_order", True),  # the report, with what the environment really answered
        ("tool_executed", "get_order", True),  # answered, never reported: in the order the calls were answered
        ("tool_unanswered", "cancel_order", None),  # reported, never answered: no tool check counts it
        ("bot", None, None),
    ]
    assert recorded[2]["result"]["status"] == "placed" and recorded[2]["arguments"] == {"order_id": "O1"}
    environment = run_file(tmp_path / "out", "cancel")["environment"]
    assert environment["unanswered"] == [4] and environment["unreported"] == [3]
    assert run_file(tmp_path / "out", "cancel")["verdict"] == "fail"  # the cancel it claims was never made
    text = (tmp_path / "out" / "cancel" / "run_1.txt").read_text()
    assert "environment shop: 2 calls answered (faults on, seed " in text
    assert "1 call the agent reported, never answered by the environment: event 4" in text
    assert "1 call the environment answered, never reported by the agent: event 3" in text
    assert "1 call the agent reported, never answered by the environment: event 4" in (tmp_path / "out" / "report.html").read_text()
    summary = (tmp_path / "out" / "summary.txt").read_text()
    assert "unanswered: cancel run 1: the agent reported tool calls its environment never answered" in summary


def test_an_environment_file_with_a_problem_stops_run_before_anything_runs_naming_its_line(tmp_path):
    root = project(tmp_path, environment=SHOP.replace("read: {path: \"orders.{order_id}\"}", "read: {path: \"orders.{nope}\"}"))
    done = cli("run", ".", "--results", "out", "--no-judge", cwd=root)

    assert done.returncode == 2
    assert "eval/environments/shop.yml:" in done.stderr and "nope" in done.stderr
    assert "eval/conftest.yml:2:14: `environment` in the config names the environment `shop`, whose file has 1 problem" in done.stderr
    assert not (root / "out").exists()


PYTHON_TOOL = SHOP + """\
    - name: refund
      description: Refund an order.
      parameters: {type: object, properties: {order_id: {type: string}}}
      python: "tools:refund"
"""


def test_a_python_tool_under_safe_env_is_refused_before_anything_runs(tmp_path):
    root = project(tmp_path, environment=PYTHON_TOOL)
    (root / "tools.py").write_text("raise SystemExit('imported')\n")
    done = cli("run", ".", "--safe-env", "--results", "out", "--no-judge", cwd=root)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "eval/environments/shop.yml" in done.stderr and "--safe-env" in done.stderr
    assert not (root / "out").exists()


def test_a_scenario_naming_a_path_for_its_environment_is_refused(tmp_path):
    root = project(tmp_path, scenarios={"cancel": "environment: ../../etc/passwd\n"})
    done = cli("validate", ".", cwd=root)

    assert done.returncode == 2
    assert "eval/scenarios/cancel.yml:5:16: `environment` names the environment '../../etc/passwd': a name is the stem" in done.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("environment: nope\n", "`environment` names the environment `nope`: there is no file eval/environments/nope.yml (the environments are shop)"),
        ("environment: {name: shop, colour: red}\n", "unknown field `colour` in `environment`"),
        ("environment: [shop]\n", "`environment` in `scenario` must be an environment's name or a mapping {name, state, faults}, got a list"),
        ("environment: {name: shop, faults: [{tool: refund, kind: timeout}]}\n", "`tool` in fault 1 of `environment.faults` names `refund`"),
        ("environment: {name: shop, state: [1]}\n", "`state` in `environment` must be a mapping of tables"),
    ],
)
def test_a_bad_environment_key_in_a_scenario_is_bad_input_at_its_line(tmp_path, extra, message):
    root = project(tmp_path, scenarios={"cancel": extra})
    done = cli("validate", ".", cwd=root)

    assert done.returncode == 2
    assert "eval/scenarios/cancel.yml:5:" in done.stdout and message in done.stdout, done.stdout


def test_a_resume_refuses_an_environment_changed_since_the_batch_started_and_finishes_one_that_did_not(tmp_path):
    root = project(tmp_path)
    done = cli("run", ".", "--results", "out", "--no-judge", "--runs", "2", cwd=root)
    assert done.returncode == 0, done.stderr
    plan = json.loads((root / "out" / "plan.json").read_text())
    assert list(plan["environments"]) == ["cancel"] and len(plan["environments"]["cancel"]) == 64
    (root / "out" / "cancel" / "run_2.json").unlink()  # as if the batch had been stopped before run 2 was written
    shop = root / "eval" / "environments" / "shop.yml"
    original = shop.read_text()
    shop.write_text(original.replace("total: 30", "total: 31"))

    refused = cli("run", "--resume", "out", "--no-judge", cwd=root)
    assert refused.returncode == 2
    assert "eval/environments/shop.yml:1:1: environment `shop` of scenario `cancel` changed since the batch started" in refused.stderr

    shop.write_text(original)
    resumed = cli("run", "--resume", "out", "--no-judge", cwd=root)
    assert resumed.returncode == 0, resumed.stderr
    assert run_file(root / "out", "cancel", 2)["environment"]["name"] == "shop"


ASYNC_AGENT = '''
async def respond(conversation_id, text, environment=None):
    if text is None:
        return {"messages": [{"text": "Hello"}]}
    if "cancel" in text:
        answer = await environment.acall("cancel_order", {"order_id": "O1", "reason": "asked"})
        return {"messages": [{"text": "failed" if answer["is_error"] else "Your order is cancelled."}]}
    answer = await environment.acall("get_order", {"order_id": "O1"})
    return {"messages": [{"text": "It is " + answer["result"]["status"]}]}
'''


def test_an_async_agent_awaits_its_calls_and_they_are_recorded_as_a_sync_ones_are(tmp_path):
    root = project(tmp_path, agent=ASYNC_AGENT, environment=SHOP + "  faults:\n    - {tool: get_order, kind: latency, delay: 0}\n")
    batch = run_scenarios(root, runs=2, parallel=2, results=tmp_path / "out", no_judge=True)

    assert batch.passed == 2
    recorded = events(tmp_path / "out", "cancel")
    assert [e.get("tool_name") for e in recorded if e["event"] == "tool_executed"] == ["get_order", "cancel_order"]
    assert recorded[2]["metadata"]["fault"]["kind"] == "latency" and recorded[3]["text"] == "It is placed"


STATE_SCENARIO = SCENARIO.replace(
    "      - tool_executed: {{tool_name: cancel_order, source: local}}\n",
    "      - state_equals: {{path: orders.O1.status, value: cancelled}}\n"
    "      - state_matches_replay: {{calls: [{{tool: cancel_order, arguments: {{order_id: O1, reason: asked}}}}]}}\n",
)


def test_check_of_a_run_folder_judges_state_checks_on_the_states_the_runs_recorded(tmp_path):
    root = project(tmp_path, environment=SHOP + "  faults:\n    - {tool: cancel_order, kind: timeout}\n")
    (root / "eval" / "scenarios" / "cancel.yml").write_text(STATE_SCENARIO.format(name="cancel", extra=""))
    assert cli("run", ".", "--results", "on", "--no-judge", cwd=root).returncode == 1
    assert cli("run", ".", "--results", "off", "--faults", "off", "--no-judge", cwd=root).returncode == 0

    def checked(folder: str) -> tuple[int, list]:
        done = cli("check", "--no-judge", "--scenario", "eval/scenarios/cancel.yml", folder, "--format", "json", cwd=root)
        document = json.loads(done.stdout)
        [conversation] = document.get("conversations", [document])  # one conversation is printed as it is
        return done.returncode, [(a["key"], a["outcome"]) for a in conversation["assertions"]]

    assert checked("off") == (0, [("state_equals", "pass"), ("state_matches_replay", "pass")])
    assert checked("on") == (1, [("state_equals", "fail"), ("state_matches_replay", "fail")])
    document = run_file(root / "on", "cancel")
    del document["environment"]
    (root / "on" / "cancel" / "run_1.json").write_text(json.dumps(document))
    code, outcomes = checked("on")
    assert code == 3 and outcomes == [("state_equals", "error"), ("state_matches_replay", "error")]  # no state: never a pass


def test_a_resume_refuses_a_starting_state_a_scenario_gives_that_changed_since_the_batch_started(tmp_path):
    root = project(tmp_path, scenarios={"cancel": "environment: {name: shop, state: data/start.json}\n"})
    (root / "data").mkdir()
    start = {"orders": {"O1": {"id": "O1", "status": "placed", "total": 30, "paid": True}}, "refunds": []}
    (root / "data" / "start.json").write_text(json.dumps(start))
    assert cli("run", ".", "--results", "out", "--no-judge", "--runs", "2", cwd=root).returncode == 0
    (root / "out" / "cancel" / "run_2.json").unlink()
    start["orders"]["O1"]["status"] = "cancelled"
    (root / "data" / "start.json").write_text(json.dumps(start))

    refused = cli("run", "--resume", "out", "--no-judge", cwd=root)
    assert refused.returncode == 2 and "environment `shop` of scenario `cancel` changed since the batch started" in refused.stderr


def test_validate_of_a_scenario_alone_lists_the_problems_of_the_environment_it_names_and_of_the_project_once(tmp_path):
    root = project(tmp_path, environment=SHOP.replace("      read: {path: \"orders.{order_id}\"}", "      read: {path: \"orders.{order_id}\"}\n      colour: red"))
    alone = cli("validate", "eval/scenarios/cancel.yml", cwd=root)
    whole = cli("validate", ".", cwd=root)

    line = "eval/environments/shop.yml:15:7: unknown field `colour` in tool 1 of `environment.tools`"
    assert alone.returncode == whole.returncode == 2
    assert alone.stdout.count(line) == 1 and whole.stdout.count(line) == 1, (alone.stdout, whole.stdout)
    assert "`environment` in the config names the environment `shop`, whose file has 1 problem" in whole.stdout


def test_an_empty_environment_file_and_a_delay_of_nan_are_said_as_what_they_are(tmp_path):
    root = project(tmp_path, environment=SHOP + "  faults:\n    - {tool: get_order, kind: latency, delay: .nan}\n")
    (root / "eval" / "environments" / "empty.yml").write_text("")
    done = cli("validate", "eval/environments", cwd=root)

    assert done.returncode == 2
    assert "eval/environments/empty.yml:1:1: an environment file must be a mapping, got nothing" in done.stdout
    assert "must be a number, got .nan (not a number)" in done.stdout


def test_a_replay_of_a_run_folder_is_made_only_by_the_environment_that_made_its_states(tmp_path):
    root = project(tmp_path)
    (root / "eval" / "scenarios" / "cancel.yml").write_text(STATE_SCENARIO.format(name="cancel", extra=""))
    assert cli("run", ".", "--results", "out", "--no-judge", cwd=root).returncode == 0
    assert len(run_file(root / "out", "cancel")["environment"]["digest"]) == 64
    shop = root / "eval" / "environments" / "shop.yml"
    shop.write_text(shop.read_text().replace("total: 30", "total: 31"))  # another environment of the same name

    done = cli("check", "--no-judge", "--scenario", "eval/scenarios/cancel.yml", "out", "--format", "json", cwd=root)
    document = json.loads(done.stdout)
    [conversation] = document.get("conversations", [document])
    outcomes = {a["key"]: (a["outcome"], a["detail"]) for a in conversation["assertions"]}
    assert done.returncode == 3 and outcomes["state_equals"][0] == "pass"  # the recorded states are judged as they are
    assert outcomes["state_matches_replay"] == ("error", "the environment is not at hand to replay the calls (only its starting and final states were recorded)")
