"""junit.xml: one suite per scenario, one case per run, failures and errors with their explanations, valid per the Jenkins XSD."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import xmlschema
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.report.junit import render_junit
from dialogcheck.results.codec import decode_run
from dialogcheck.results.model import BatchResult
from tests.conftest import EXAMPLE, REPO
from tests.report.conftest import load

XSD = REPO / "tests" / "data" / "junit" / "junit-10.xsd"


@pytest.fixture(scope="module")
def schema():
    return xmlschema.XMLSchema(XSD)


def test_junit_of_real_batches_validates_against_the_xsd(example_batch, hostile_batch, schema):
    schema.validate(example_batch / "junit.xml")
    schema.validate(hostile_batch / "junit.xml")


def test_one_suite_per_scenario_and_one_case_per_run(example_batch):
    root = ET.parse(example_batch / "junit.xml").getroot()
    summary = load(example_batch / "summary.json")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [row["slug"] for row in summary["scenarios"]]
    for suite, row in zip(suites, summary["scenarios"]):
        assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (str(row["runs"]), str(row["failed"]), str(row["errored"]))
        cases = suite.findall("testcase")
        assert [(c.get("name"), c.get("classname")) for c in cases] == [(f"run_{n}", row["slug"]) for n in range(1, row["runs"] + 1)]
        for n, case in enumerate(cases, 1):
            assert float(case.get("time")) == pytest.approx(load(example_batch / row["slug"] / f"run_{n}.json")["duration_s"], abs=0.001)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == (str(summary["completed_runs"]), str(summary["failed"]), "0")


def test_each_failing_check_is_a_failure_with_its_explanation(example_batch):
    root = ET.parse(example_batch / "junit.xml").getroot()
    case = root.find("testsuite[@name='run_stolen_card']/testcase[@name='run_1']")
    (failed_run,) = [r for r in load(example_batch / "summary.json")["failed_runs"] if (r["slug"], r["run"]) == ("run_stolen_card", 1)]
    failures = case.findall("failure")
    assert [f.get("type") for f in failures] == ["sequencing", "sop_step"]
    sequencing, sop = failed_run["failed_checks"]
    assert failures[0].text == f"{sequencing['check']}\n{sequencing['detail']}"
    assert failures[0].get("message").startswith(f"{sequencing['check']}: step 1 of 2") and len(failures[0].get("message")) <= 200
    assert failures[1].text.startswith("SOP confirm_before_ordering Ask the customer to confirm before ordering\n")
    assert failures[1].text.endswith(sop["detail"])
    assert "USER: My card was stolen yesterday, I need a replacement." in case.find("system-out").text
    assert root.find("testsuite[@name='run_cancel']/testcase[@name='run_1']/failure") is None


def test_properties_carry_the_scenario_type_and_tags(example_batch):
    suite = ET.parse(example_batch / "junit.xml").getroot().find("testsuite[@name='run_stolen_card']")
    props = [(p.get("name"), p.get("value")) for p in suite.find("properties")]
    assert ("scenario.type", "edge_case") in props
    assert ("scenario.tags", "bundled_agent,card_replace,policy,expected_failure") in props
    assert [v for k, v in props if k == "tag"] == ["bundled_agent", "card_replace", "policy", "expected_failure"]


def test_errored_runs_are_errors_and_hostile_text_survives_as_text(hostile_batch):
    root = ET.parse(hostile_batch / "junit.xml").getroot()
    gamma = root.find("testsuite[@name='gamma']")
    assert (gamma.get("errors"), gamma.get("failures")) == ("2", "0")
    error = gamma.find("testcase[@name='run_1']/error")
    assert error.get("type") == "harness"
    assert error.get("message") == "run errored: agent: agent `agent:respond` raised LookupError: no such card </script><b>bold</b>"
    assert root.find("testsuite[@name='delta']").get("failures") == "1"
    assert root.find("testsuite[@name='alpha']/testcase[@name='run_1']/system-out").text.startswith(
        'AGENT: Hi! <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    )


def test_control_characters_cannot_break_the_xml(schema):
    run = {
        "scenario": {"slug": "s", "name": "S", "type": None, "tags": []},
        "run": 1, "verdict": "fail", "error": None, "duration_s": 0.5,
        "transcript": [{"role": "agent", "text": "colour \x1b[31mred\x00"}],
        "assertions": [{"key": "bot_uttered", "label": "bot_uttered x", "outcome": "fail", "detail": "said \x07", "evidence": []}],
    }
    text = render_junit(BatchResult((decode_run(run, "run_1.json"),)))
    schema.validate(text)
    case = ET.fromstring(text).find("testsuite/testcase")
    assert case.find("system-out").text == "AGENT: colour \\x1b[31mred\\x00"
    assert case.find("failure").text == "bot_uttered x\nsaid \\x07"


def _check(*args):
    return CliRunner().invoke(cli, ["check", "--no-judge", *map(str, args)])


def test_check_writes_junit_one_suite_one_case_per_conversation(tmp_path, schema):
    out = tmp_path / "check.xml"
    conversations = sorted((EXAMPLE / "conversations").glob("damaged_card_*.jsonl"))
    result = _check("--scenario", EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml", *conversations, "--junit", out)
    assert result.exit_code == 1, result.output
    schema.validate(out)
    (suite,) = ET.parse(out).getroot().findall("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("card_replace_damaged", "4", "2", "0")
    assert [c.get("name") for c in suite.findall("testcase")] == [str(p) for p in conversations]
    express = suite.find(f"testcase[@name='{conversations[1]}']/failure")
    assert express.get("type") == "tool_executed" and "arguments.shipping was 'express', expected 'standard'" in express.text
    assert ("scenario.type", "happy_path") in [(p.get("name"), p.get("value")) for p in suite.find("properties")]


def test_check_with_an_sop_names_the_suite_after_the_sop(tmp_path, schema):
    out = tmp_path / "sop.xml"
    conversations = sorted((EXAMPLE / "conversations").glob("sop_*.jsonl"))
    result = _check("--sop", EXAMPLE / "sops" / "replace_card.yml", *conversations, "--junit", out)
    assert result.exit_code == 1, result.output
    schema.validate(out)
    (suite,) = ET.parse(out).getroot().findall("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    assert suite.find("properties/property").get("name") == "sop.name"
    assert all(f.get("type") == "sop_step" for f in suite.iter("failure"))


def test_an_optional_step_that_failed_is_said_in_the_output_not_a_failure_of_a_passing_case(tmp_path, schema):
    sop = tmp_path / "opt.yml"
    steps = [("must", "get_order", True), ("nice", "lookup", False)]
    sop.write_text("sop:\n  id: opt\n  name: opt\n  steps:\n" + "".join(
        f"    - id: {step}\n      required: {str(required).lower()}\n      evaluator: {{type: tool_called, toolSlug: {tool}}}\n"
        for step, tool, required in steps
    ))
    conversation = tmp_path / "c.jsonl"
    conversation.write_text('{"event": "user", "text": "hi"}\n{"event": "tool_executed", "tool_name": "get_order", "source": "local"}\n')
    out = tmp_path / "opt.xml"
    result = _check("--sop", sop, conversation, "--junit", out)
    assert result.exit_code == 0, result.output
    schema.validate(out)
    (case,) = ET.parse(out).getroot().iter("testcase")
    assert case.find("failure") is None and case.find("error") is None
    assert case.find("system-out").text.startswith("optional step failed (the verdict ignores it): SOP nice tool_called: `lookup` was never called")
    sop.write_text(sop.read_text().replace("toolSlug: get_order", "toolSlug: refund"))  # now a required step fails too
    assert _check("--sop", sop, conversation, "--junit", out).exit_code == 1
    (case,) = ET.parse(out).getroot().iter("testcase")
    assert [f.text.split("\n")[0] for f in case.findall("failure")] == ["SOP must tool_called"]
    assert case.find("system-out").text.count("\n") == 0 and "SOP nice" in case.find("system-out").text
