"""`dialogcheck check --scenario S.yml CONVERSATION...`: verdicts, output formats and exit codes (SPEC section 9)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests import inprocess
from tests.conftest import EXAMPLE, plain_env
from tests.stats_helpers import per_check_stats, verdict_counts

SCENARIOS = EXAMPLE / "eval" / "scenarios"
CONVERSATIONS = EXAMPLE / "conversations"
DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

#: The example conversations each scenario was written for (the others are told apart in the matrix below).
EXAMPLE_CONVERSATIONS = (
    "damaged_card_digression.jsonl",
    "damaged_card_express.jsonl",
    "damaged_card_no_confirmation.jsonl",
    "damaged_card_ok.jsonl",
    "lost_card_cancelled.jsonl",
    "transfer_tracker.json",
)

#: Which example conversations pass each example scenario (criteria skipped with --no-judge); the rest fail.
PASSING = {
    "card_replace_cancel": {"lost_card_cancelled.jsonl"},
    "card_replace_confirms_first": {"damaged_card_digression.jsonl", "damaged_card_express.jsonl", "damaged_card_ok.jsonl"},
    "card_replace_damaged": {"damaged_card_no_confirmation.jsonl", "damaged_card_ok.jsonl"},
    "card_replace_digression": {"damaged_card_digression.jsonl"},
    "card_replace_one_turn": {"damaged_card_no_confirmation.jsonl"},
    "transfer_daily_limit": {"transfer_tracker.json"},
}

NO_GOALS = "scenario:\n  name: Nothing to check\n  simulation_context: c\n"
CRITERIA_ONLY = "scenario:\n  name: Judged only\n  simulation_context: c\n  goals:\n    criteria: [The agent is polite]\n"
BAD_TYPE = "scenario:\n  name: Bad\n  simulation_context: c\n  type: happy\n"


pytestmark = pytest.mark.usefixtures("plain_output")


def check(*args: str | Path):
    return CliRunner().invoke(cli, ["check", *map(str, args)])


def scenario(name: str) -> Path:
    return SCENARIOS / f"{name}.yml"


def conversation(name: str) -> Path:
    return CONVERSATIONS / name


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def as_json(result) -> dict:
    return json.loads(result.stdout)


# --- the example project ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PASSING))
def test_example_verdicts(tmp_path, name):
    """Every example conversation against every example scenario, given as one folder."""
    folder = tmp_path / "conversations"
    folder.mkdir()
    for file in EXAMPLE_CONVERSATIONS:
        shutil.copy(conversation(file), folder / file)
    result = check("--no-judge", "--format", "json", "--scenario", scenario(name), folder)
    document = as_json(result)
    verdicts = {Path(c["source"]).name: c["verdict"] for c in document["conversations"]}
    assert verdicts == {file: "pass" if file in PASSING[name] else "fail" for file in EXAMPLE_CONVERSATIONS}
    assert result.exit_code == 1  # every scenario has a conversation that fails it
    summary = document["summary"]
    assert {k: summary[k] for k in ("conversations", "passed", "failed", "errored")} == {
        "conversations": 6, "passed": len(PASSING[name]), "failed": 6 - len(PASSING[name]), "errored": 0}
    assert summary["checks"] == per_check_stats(document["conversations"])


def test_passing_example_text():
    result = check("--scenario", scenario("card_replace_cancel"), conversation("lost_card_cancelled.jsonl"))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"{conversation('lost_card_cancelled.jsonl')}  Customer cancels the replacement at confirmation"
    assert len(lines) == 8  # the heading, one line per assertion, the verdict
    assert all(line.startswith("  PASS  ") for line in lines[1:7])
    assert lines[7] == "  verdict: PASS (6 passed, 0 failed)"
    assert "\x1b[" not in result.stdout
    assert result.stderr == ""


def test_failing_example_explains_the_closest_miss():
    result = check("--no-judge", "--scenario", scenario("card_replace_damaged"), conversation("damaged_card_express.jsonl"))
    assert result.exit_code == 1
    fail_lines = [line for line in result.stdout.splitlines() if line.startswith("  FAIL  ")]
    assert len(fail_lines) == 1
    assert fail_lines[0].startswith("  FAIL  tool_executed order_replacement (local) with arguments: ")
    assert "arguments.shipping was 'express', expected 'standard'" in fail_lines[0]
    assert "in turn 2" in fail_lines[0] or "(turn 2)" in fail_lines[0]
    assert result.stdout.endswith(
        "  verdict: FAIL (10 passed, 1 failed, 1 skipped)\n1 LLM-judged check per conversation skipped (--no-judge)\n"
    )


def test_batch_of_conversations_text_summary():
    result = check("--no-judge", "--scenario", scenario("card_replace_confirms_first"), conversation("damaged_card_ok.jsonl"), conversation("damaged_card_no_confirmation.jsonl"))
    assert result.exit_code == 1
    assert result.stdout.endswith("\n2 conversations: 1 passed, 1 failed, 0 errored\nwhose fault: 1 agent\n")


# --- exit codes -------------------------------------------------------------


def test_exit_0_when_everything_passed():
    assert check("--scenario", scenario("card_replace_digression"), conversation("damaged_card_digression.jsonl")).exit_code == 0


def test_exit_1_when_a_check_failed():
    assert check("--scenario", scenario("card_replace_confirms_first"), conversation("damaged_card_no_confirmation.jsonl")).exit_code == 1


def test_exit_3_when_criteria_have_no_judge_and_nothing_failed():
    result = check("--scenario", scenario("transfer_daily_limit"), conversation("transfer_tracker.json"))
    assert result.exit_code == 3
    assert (
        "  ERROR criterion 'The agent tells the customer why the transfer failed': no judge configured"
        in result.stdout
    )
    assert result.stdout.endswith(
        "  verdict: ERROR (6 passed, 0 failed, 1 errored)\n"
        "1 LLM-judged check per conversation not judged: no judge configured (evaluation.llm in eval/conftest.yml)\n"
    )


def test_no_judge_skips_criteria():
    result = check("--no-judge", "--scenario", scenario("transfer_daily_limit"), conversation("transfer_tracker.json"))
    assert result.exit_code == 0
    assert "  SKIP  criterion 'The agent tells the customer why the transfer failed': not judged: --no-judge skips LLM-judged checks\n" in result.stdout
    assert result.stdout.endswith(
        "  verdict: PASS (6 passed, 0 failed, 1 skipped)\n1 LLM-judged check per conversation skipped (--no-judge)\n"
    )


def test_a_failure_outranks_an_error():
    result = check("--scenario", scenario("card_replace_damaged"), conversation("damaged_card_express.jsonl"))
    assert result.exit_code == 1
    assert "  ERROR criterion" in result.stdout


def test_criteria_alone_without_a_judge(tmp_path):
    path = write(tmp_path, "judged.yml", CRITERIA_ONLY)
    assert check("--scenario", path, conversation("damaged_card_ok.jsonl")).exit_code == 3
    assert check("--no-judge", "--scenario", path, conversation("damaged_card_ok.jsonl")).exit_code == 0


def test_exit_2_before_anything_runs(tmp_path):
    broken = write(tmp_path, "broken.jsonl", '{"event": "user", "text": "hi"}\n{"event": "bot", "text": 5}\n')
    result = check("--scenario", scenario("card_replace_confirms_first"), conversation("damaged_card_no_confirmation.jsonl"), broken)
    assert result.exit_code == 2
    assert result.stdout == ""  # nothing judged, nothing printed
    assert result.stderr == f"{broken}:2:18: event 1: field `text` must be a string or null, got a number\n"


def test_bad_scenario(tmp_path):
    path = write(tmp_path, "bad.yml", BAD_TYPE)
    result = check("--scenario", path, conversation("damaged_card_ok.jsonl"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{path}:4:9: `type` in `scenario` must be one of ")
    assert result.stdout == ""


def test_missing_conversation(tmp_path):
    missing = tmp_path / "nope.jsonl"
    result = check("--scenario", scenario("card_replace_cancel"), missing)
    assert result.exit_code == 2
    assert result.stderr == f"{missing}:1:1: no such file or folder\n"


def test_folder_without_conversations(tmp_path):
    result = check("--scenario", scenario("card_replace_cancel"), tmp_path)
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path}:1:1: no conversation files found (.json, .jsonl)\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give exactly one of --scenario or --sop"),
        (("--scenario", "a.yml", "--sop", "b.yml"), "give exactly one of --scenario or --sop"),
        (("--format", "xml", "--scenario", "a.yml"), "Invalid value for '--format'"),
    ],
)
def test_usage_errors(args, message):
    result = check(*args, conversation("damaged_card_ok.jsonl"))
    assert result.exit_code == 2
    assert message in result.stderr


def test_conversation_argument_is_required():
    result = check("--scenario", scenario("card_replace_cancel"))
    assert result.exit_code == 2
    assert "Missing argument 'CONVERSATIONS...'" in result.stderr


# --- goals absent -------------------------------------------------------------


def test_goals_absent_passes_with_zero_checks_and_says_so(tmp_path):
    path = write(tmp_path, "empty.yml", NO_GOALS)
    result = check("--scenario", path, conversation("damaged_card_no_confirmation.jsonl"))
    assert result.exit_code == 0
    assert result.stdout == (
        f"{conversation('damaged_card_no_confirmation.jsonl')}  Nothing to check\n"
        "  the scenario has no goals: it passes with zero checks\n"
        "  verdict: PASS (0 passed, 0 failed)\n"
    )


def test_goals_absent_in_json(tmp_path):
    path = write(tmp_path, "empty.yml", NO_GOALS + "  goals: {}\n")
    document = as_json(check("--format", "json", "--scenario", path, conversation("damaged_card_ok.jsonl")))
    assert (document["verdict"], document["assertions"], document["sop"], document["criteria"]) == ("pass", [], [], [])
    assert document["notes"] == ["the scenario has no goals: it passes with zero checks"]


# --- --format json --------------------------------------------------------------


def test_json_one_conversation():
    result = check("--format", "json", "--scenario", scenario("card_replace_confirms_first"), conversation("damaged_card_no_confirmation.jsonl"))
    assert result.exit_code == 1
    document = as_json(result)
    assert {"verdict", "assertions", "sop", "criteria"} <= document.keys()
    assert "conversations" not in document
    assert document["source"] == str(conversation("damaged_card_no_confirmation.jsonl"))
    assert document["verdict"] == "fail"
    assert [(a["index"], a["key"], a["passed"]) for a in document["assertions"]] == [
        (1, "bot_uttered", False),
        (2, "tool_executed", True),
        (3, "sequencing", False),
    ]
    for item in document["assertions"]:
        assert {"index", "key", "passed", "detail"} <= item.keys()
        assert isinstance(item["detail"], str) and item["detail"]
    assert document["sop"] == [] and document["criteria"] == []


def test_json_several_conversations():
    result = check(
        "--format", "json", "--no-judge",
        "--scenario", scenario("transfer_daily_limit"),
        conversation("transfer_tracker.json"), conversation("damaged_card_ok.jsonl"),
    )  # fmt: skip
    assert result.exit_code == 1
    document = as_json(result)
    assert [(c["source"], c["verdict"]) for c in document["conversations"]] == [
        (str(conversation("transfer_tracker.json")), "pass"),
        (str(conversation("damaged_card_ok.jsonl")), "fail"),
    ]
    first = document["conversations"][0]
    assert {"source", "verdict", "assertions", "sop", "criteria"} <= first.keys()
    assert first["conversation_id"] == "sim-3f0c9a"
    assert first["criteria"] == [
        {"criterion": "The agent tells the customer why the transfer failed", "outcome": "skip", "detail": "not judged: --no-judge skips LLM-judged checks",
         "evidence": []}
    ]


def test_json_criteria_without_a_judge_are_errors():
    result = check("--format", "json", "--scenario", scenario("transfer_daily_limit"), conversation("transfer_tracker.json"))
    assert result.exit_code == 3
    (criterion,) = as_json(result)["criteria"]
    assert criterion["outcome"] == "error"
    assert criterion["detail"].startswith("no judge configured")


def test_json_sop_steps_of_a_scenario(tmp_path):
    path = write(
        tmp_path,
        "sop.yml",
        "scenario:\n  name: With SOP\n  simulation_context: c\n  goals:\n    sop:\n"
        "      - id: looked_up\n        evaluator: {type: tool_called, toolSlug: lookup_card}\n"
        "      - evaluator: {type: no_tool_called, toolSlugs: [order_replacement]}\n",
    )
    result = check("--format", "json", "--scenario", path, conversation("damaged_card_ok.jsonl"))
    assert result.exit_code == 1
    sop = as_json(result)["sop"]
    assert [(s["id"], s["type"], s["outcome"]) for s in sop] == [("looked_up", "tool_called", "pass"), ("step-2", "no_tool_called", "fail")]
    assert all(isinstance(s["detail"], str) and s["detail"] for s in sop)


def test_json_bad_input(tmp_path):
    path = write(tmp_path, "bad.yml", BAD_TYPE)
    result = check("--format", "json", "--scenario", path, conversation("damaged_card_ok.jsonl"))
    assert result.exit_code == 2
    error = as_json(result)["error"]
    assert {key: error[key] for key in ("file", "line", "column")} == {"file": str(path), "line": 4, "column": 9}
    assert error["message"].startswith("`type` in `scenario` must be one of ")
    assert result.stderr == ""


def test_json_bad_conversation(tmp_path):
    broken = write(tmp_path, "broken.jsonl", '{"event": "user", "text": "hi"}\n{"event": "bot" "text": "x"}\n')
    result = check("--format", "json", "--scenario", scenario("card_replace_cancel"), broken)
    assert result.exit_code == 2
    error = as_json(result)["error"]
    assert {key: error[key] for key in ("message", "file", "line", "column")} == {
        "message": "invalid JSON: unexpected character, expected ',' or '}'",
        "file": str(broken),
        "line": 2,
        "column": 17,
    }


# --- inputs ---------------------------------------------------------------------


def test_batch_jsonl_of_conversations(tmp_path):
    events = [json.loads(line) for line in conversation("lost_card_cancelled.jsonl").read_text().splitlines() if line.strip()]
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        json.dumps({"sender_id": "first", "events": events}) + "\n"
        + json.dumps({"sender_id": "second", "events": events[:3]}) + "\n"
    )  # fmt: skip
    result = check("--format", "json", "--scenario", scenario("card_replace_cancel"), batch)
    assert result.exit_code == 1
    conversations = as_json(result)["conversations"]
    assert [(c["source"], c["conversation_id"], c["verdict"]) for c in conversations] == [
        (f"{batch}#first", "first", "pass"),
        (f"{batch}#second", "second", "fail"),
    ]


def test_tracker_dump_given_as_jsonl_extension(tmp_path):
    copy = tmp_path / "tracker.jsonl"
    shutil.copy(conversation("transfer_tracker.json"), copy)
    result = check("--no-judge", "--scenario", scenario("transfer_daily_limit"), copy)
    assert result.exit_code == 0


def test_conversation_text_is_never_read_as_markup(tmp_path):
    conv_path = write(tmp_path, "c.jsonl", json.dumps({"event": "bot", "text": "[bold red]Hi[/] :smile:"}) + "\n")
    scen = write(tmp_path, "s.yml", "scenario:\n  name: N\n  simulation_context: c\n  goals:\n    assertions:\n      - bot_uttered: {text_matches: bye}\n")
    result = check("--scenario", scen, conv_path)
    assert result.exit_code == 1
    assert "[bold red]Hi[/] :smile:" in result.stdout


# --- the installed entry point and colour ------------------------------------------


def _env(**extra: str) -> dict[str, str]:
    return plain_env("NO_COLOR", **extra)


def run_installed(*args: str | Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DIALOGCHECK), *map(str, args)], capture_output=True, text=True, env=_env(**env), check=False)


def test_installed_command_exit_codes_and_no_traceback(tmp_path):
    broken = write(tmp_path, "broken.jsonl", '{"event": "user", "text": "hi"}\n{"event": "bot", "text": "x",\n')
    cases = [
        (("--scenario", scenario("card_replace_cancel"), conversation("lost_card_cancelled.jsonl")), 0),
        (("--scenario", scenario("card_replace_cancel"), conversation("damaged_card_ok.jsonl")), 1),
        (("--scenario", scenario("card_replace_cancel"), broken), 2),
        (("--scenario", scenario("transfer_daily_limit"), conversation("transfer_tracker.json")), 3),
    ]
    for args, code in cases:
        done = run_installed("check", *args)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stdout + done.stderr
        assert "\x1b[" not in done.stdout + done.stderr  # piped: plain text
        if code == 2:
            assert done.stderr == f"{broken}:2:30: invalid JSON: unexpected end of data\n"


def test_colour_on_a_terminal():
    """FORCE_COLOR stands in for a terminal: PASS and FAIL come out coloured."""
    damaged = scenario("card_replace_damaged")
    done = inprocess.run([DIALOGCHECK, "check", "--no-judge", "--scenario", damaged, conversation("damaged_card_express.jsonl")], text=True,
                         env=_env(FORCE_COLOR="1"))
    assert done.returncode == 1
    assert "\x1b[1;32mPASS" in done.stdout  # bold green
    assert "\x1b[1;31mFAIL" in done.stdout  # bold red


def test_usage_error_is_exit_2_and_json_when_asked():
    conversation_file = str(conversation("damaged_card_ok.jsonl"))
    done = inprocess.run([DIALOGCHECK, "check", "--format", "json", conversation_file], text=True)
    assert done.returncode == 2
    assert json.loads(done.stdout) == {
        "error": {"message": "give exactly one of --scenario or --sop", "file": None, "line": None, "column": None}
    }
    done = inprocess.run([DIALOGCHECK, "check", "--bogus", conversation_file], text=True)
    assert done.returncode == 2
    assert "No such option '--bogus'" in done.stderr and "Traceback" not in done.stderr


def _batch_line(i: int, bot_text) -> str:
    return json.dumps({"sender_id": f"c{i}", "events": [{"event": "user", "text": "hi"}, {"event": "bot", "text": bot_text}]})


def test_stream_judges_as_it_reads_and_stops_at_a_bad_record(tmp_path):
    lines = [_batch_line(i, "Shall I order a replacement?") for i in range(3)] + [_batch_line(3, 7)]
    batch = write(tmp_path, "batch.jsonl", "\n".join(lines) + "\n")
    result = check("--stream", "--scenario", scenario("card_replace_confirms_first"), batch)
    assert result.exit_code == 2
    assert result.stdout.count("  verdict: FAIL") == 3  # judged before the bad line was read
    assert result.stderr == f"{batch}:4:82: event 1: field `text` must be a string or null, got a number\n"


def test_stream_json_is_one_document(tmp_path):
    batch = write(tmp_path, "batch.jsonl", "\n".join(_batch_line(i, "hello") for i in range(3)) + "\n")
    result = check("--stream", "--format", "json", "--scenario", scenario("card_replace_confirms_first"), batch)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert [c["source"] for c in document["conversations"]] == [f"{batch}#c{i}" for i in range(3)]
    assert verdict_counts(document["summary"]) == {"conversations": 3, "passed": 0, "failed": 3, "errored": 0}
