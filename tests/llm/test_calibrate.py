"""`dialogcheck calibrate` against a judge that answers by rule on loopback, so the confusion matrix is known,
and `--require-calibration` on `check` and `run`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess
from tests.llm.conftest import Answer, asked_criterion, openai_body

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
CRITERION = "The agent asks before ordering"
SCENARIO = f"""
scenario:
  name: Asks first
  simulation_context: You want a new card.
  goals:
    criteria: [{CRITERION}, The agent is polite]
"""
#: conversation name -> (what the agent says, the human label); the judge passes exactly those that ask.
LABELLED = {
    "asks_1": ("Shall I order it?", "pass"),
    "asks_2": ("Shall I order a new one?", "pass"),
    "asks_3": ("Shall I order it now?", "fail"),  # the human saw something the judge did not
    "tells_1": ("Ordered.", "fail"),
    "tells_2": ("Done, ordered.", "fail"),
    "tells_3": ("It is ordered.", "pass"),
    "vague": ("Hmm.", "pass"),  # the judge finds it inconclusive
}


def by_rule(request: dict) -> dict:
    prompt = request["messages"][0]["content"]
    verdict = "INCONCLUSIVE" if "AGENT: Hmm." in prompt else "PASS" if "Shall I order" in prompt else "FAIL"
    answer = {"criterion": asked_criterion(request), "verdict": verdict, "rationale": f"the agent's turn 1 says so ({verdict})", "evidence": {"turns": [1]}}
    return openai_body(json.dumps(answer))


def dialogcheck(*args, cwd: Path) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], text=True, cwd=cwd, timeout=300)


@pytest.fixture
def labelled(tmp_path, openai_server):
    openai_server.answer(Answer(body=by_rule))
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(
        f"evaluation:\n  llm: {{provider: openai_compatible, base_url: '{openai_server.root}/v1', model: judge, max_retries: 0, timeout: 60}}\n"
    )
    (tmp_path / "eval" / "scenarios" / "asks.yml").write_text(SCENARIO)
    (tmp_path / "conversations").mkdir()
    lines = []
    for name, (said, label) in LABELLED.items():
        events = [{"event": "user", "text": "replace my card"}, {"event": "bot", "text": said}]
        (tmp_path / "conversations" / f"{name}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        lines.append(json.dumps({"source": f"conversations/{name}.jsonl", "criterion": CRITERION, "label": label}))
    (tmp_path / "labels.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def calibrate(root: Path, *extra):
    return dialogcheck("calibrate", "--scenario", "eval/scenarios/asks.yml", "--labels", "labels.jsonl", *extra, cwd=root)


def test_calibrate_gives_the_confusion_matrix_and_the_library_s_kappa(labelled):
    # Imported here, not at the top: it takes seconds, and every xdist worker collects this module.
    from sklearn.metrics import cohen_kappa_score

    result = calibrate(labelled, "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    confusion = {"judge_pass_human_pass": 2, "judge_pass_human_fail": 1, "judge_fail_human_pass": 1, "judge_fail_human_fail": 2}
    judge = ["pass", "pass", "pass", "fail", "fail", "fail"]
    human = ["pass", "pass", "fail", "fail", "fail", "pass"]
    assert (document["pairs"], document["decided"], document["confusion"]) == (7, 6, confusion)
    assert document["agreement"] == pytest.approx(4 / 6)
    assert document["kappa"] == pytest.approx(cohen_kappa_score(judge, human))
    assert document["base_rate"] == pytest.approx(4 / 7)
    assert document["criteria"][CRITERION]["confusion"] == confusion
    assert [p["source"] for p in document["undecided"]] == ["conversations/vague.jsonl"]
    assert {p["source"]: p["judge"] for p in document["disagreements"]} == {"conversations/asks_3.jsonl": "pass", "conversations/tells_3.jsonl": "fail"}
    assert document["disagreements"][0]["rationale"].startswith("the agent's turn 1 says so")
    written = json.loads(Path(document["calibration_file"]).read_text())
    assert written["binding"]["model"] == "judge" and len(written["binding"]["prompt_template_sha256"]) == 64
    text = calibrate(labelled).stdout
    assert "overall: 6/7 decided, agreement 67%, kappa 0.33" in text and "judge and human disagree:" in text


def test_require_calibration_decides_with_a_good_enough_judge_and_marks_the_rest_uncalibrated(labelled):
    conversation = "conversations/asks_1.jsonl"
    check = ("check", "--format", "json", "--scenario", "eval/scenarios/asks.yml", conversation)
    uncalibrated = dialogcheck(*check, "--require-calibration", "0.2", cwd=labelled)
    assert uncalibrated.returncode == 3, uncalibrated.stderr  # nothing decided the criterion: never exit 0
    none_yet = json.loads(uncalibrated.stdout)
    criterion = none_yet["criteria"][0]
    assert (none_yet["verdict"], criterion["outcome"], criterion["uncalibrated"]) == ("error", "error", True)
    assert criterion["detail"].startswith("uncalibrated (no calibration file of this judge")
    assert "the judge said pass: the agent's turn 1 says so (PASS)" in criterion["detail"]

    calibrate(labelled)
    good = dialogcheck(*check, "--require-calibration", "0.2", cwd=labelled)
    assert good.returncode == 0 and json.loads(good.stdout)["criteria"][0]["outcome"] == "pass"
    strict = json.loads(dialogcheck(*check, "--require-calibration", "0.5", cwd=labelled).stdout)["criteria"][0]
    assert strict["outcome"] == "error" and "kappa against human labels is 0.33, below the required 0.5" in strict["detail"]


def test_a_changed_prompt_template_no_longer_matches_the_calibration(labelled):
    calibrate(labelled)
    template = labelled / "eval" / "judge.j2"
    template.write_text((Path(__file__).parents[2] / "src/dialogcheck/judge/prompts/criteria_judge.j2").read_text() + "Be strict.\n")
    conftest = labelled / "eval" / "conftest.yml"
    conftest.write_text(conftest.read_text() + "  criteria_judge_prompt: eval/judge.j2\n")
    result = dialogcheck("check", "--format", "json", "--scenario", "eval/scenarios/asks.yml", "conversations/asks_1.jsonl", "--require-calibration", "0.2", cwd=labelled)
    assert json.loads(result.stdout)["criteria"][0]["detail"].startswith("uncalibrated (no calibration file of this judge"), result.stderr
    calibrate(labelled)  # calibrated anew, the changed template has its own file, and decides
    again = dialogcheck("check", "--format", "json", "--scenario", "eval/scenarios/asks.yml", "conversations/asks_1.jsonl", "--require-calibration", "0.2", cwd=labelled)
    assert json.loads(again.stdout)["criteria"][0]["outcome"] == "pass"
    assert len(list((labelled / "eval" / "calibration").glob("*.json"))) == 2


def test_bad_labels_are_bad_input_with_their_line(labelled):
    (labelled / "labels.jsonl").write_text(
        json.dumps({"source": "conversations/asks_1.jsonl", "criterion": CRITERION, "label": "yes"}) + "\n"
        + json.dumps({"source": "conversations/asks_1.jsonl", "criterion": "The agent asks before orderin", "label": "pass"}) + "\n"
    )
    result = calibrate(labelled)
    assert result.returncode == 2
    assert "labels.jsonl:1:1: `label` must be pass or fail, got 'yes'" in result.stderr
    assert f"labels.jsonl:2:1: 'The agent asks before orderin' is not a criterion of scenario 'Asks first' (did you mean `{CRITERION}`?)" in result.stderr


def test_a_link_out_of_the_calibration_folder_is_refused_before_the_judge_is_asked(labelled, openai_server, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (labelled / "eval" / "calibration").symlink_to(elsewhere)
    result = calibrate(labelled)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"{labelled / 'eval' / 'calibration'}:1:1: the calibration folder leads to {elsewhere} through a symbolic link,"
        f" outside the project folder {labelled}: it must stay inside the project (make it a folder of the project)"
    ]
    assert result.stdout == "" and list(elsewhere.iterdir()) == [] and openai_server.count == 0


def test_run_with_require_calibration_marks_criteria_uncalibrated(tmp_path, openai_server):
    from click.testing import CliRunner

    from dialogcheck._cli.main import cli
    from tests.cli.test_run import AGENT

    openai_server.answer(Answer(body=by_rule))
    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text(
        "agent: {type: python, callable: 'agent:respond'}\n"
        f"evaluation:\n  llm: {{provider: openai_compatible, base_url: '{openai_server.root}/v1', model: judge, max_retries: 0, timeout: 60}}\n"
    )
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "eval" / "scenarios" / "asks.yml").write_text(SCENARIO.replace("  goals:", "  script: [hello]\n  goals:"))
    result = CliRunner().invoke(cli, ["run", str(tmp_path), "--require-calibration", "0.5", "--runs", "2", "--results", str(tmp_path / "r")])
    run = json.loads((tmp_path / "r" / "asks" / "run_1.json").read_text())
    assert [(c["outcome"], c.get("uncalibrated")) for c in run["criteria"]] == [("error", True), ("error", True)]
    assert run["verdict"] == "error" and result.exit_code == 3, result.output  # nothing decided: never exit 0
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    rows = [(row["kind"], row["error"], row["skip"], row.get("uncalibrated")) for row in summary["checks"]]
    assert rows == [("criterion", 2, 0, 2), ("criterion", 2, 0, 2)]  # counted apart from other errors
    text = (tmp_path / "r" / "summary.txt").read_text()
    assert text.count("uncalibrated: asks: criterion ") == 2 and "left undecided 2 times\n" in text
    page = (tmp_path / "r" / "report.html").read_text()
    assert page.count('<td class="num errored" data-v="2">2 <span class="uncal"') == 2 and "(2 uncalibrated)" in page
    plain = CliRunner().invoke(cli, ["run", str(tmp_path), "--no-judge", "--runs", "2", "--results", str(tmp_path / "r2")])
    assert plain.exit_code == 0, plain.output
    skipped = json.loads((tmp_path / "r2" / "summary.json").read_text())["checks"]
    assert [(row["skip"], "uncalibrated" in row) for row in skipped] == [(2, False), (2, False)]  # --no-judge's skips are not


def test_a_judge_that_breaks_leaves_its_pairs_undecided_and_exits_3(labelled, openai_server):
    from tests.llm.conftest import error_body

    openai_server.answer(Answer(400, error_body("no such model")))
    result = calibrate(labelled, "--format", "json")
    assert result.returncode == 3, result.stderr
    document = json.loads(result.stdout)
    assert (document["pairs"], document["decided"], document["kappa"], document["agreement"]) == (7, 0, None, None)
    assert {p["judge"] for p in document["undecided"]} == {"error"} and "no such model" in document["undecided"][0]["rationale"]


def test_an_uncalibrated_judge_that_answers_fail_leaves_the_batch_errored_in_every_output(labelled):
    """The judge says FAIL, but may not decide: the criterion is an error (never a skip that lets the batch pass)."""
    from click.testing import CliRunner

    from dialogcheck._cli.main import cli

    check = ["check", "--scenario", str(labelled / "eval/scenarios/asks.yml"), str(labelled / "conversations/tells_1.jsonl"), "--require-calibration", "0.5"]
    for extra in ([], ["--format", "json"], ["--junit", str(labelled / "junit.xml")]):
        result = CliRunner().invoke(cli, [*check, *extra])
        assert result.exit_code == 3, (extra, result.output)
    document = json.loads(CliRunner().invoke(cli, [*check, "--format", "json"]).stdout)
    assert document["verdict"] == "error"
    assert [(c["outcome"], c["uncalibrated"]) for c in document["criteria"]] == [("error", True), ("error", True)]
    assert "the judge said fail" in document["criteria"][0]["detail"]
    text = CliRunner().invoke(cli, check).output
    assert "uncalibrated (no calibration file of this judge" in text and "the judge said fail" in text
    junit = (labelled / "junit.xml").read_text()
    assert "<error" in junit and "uncalibrated (no calibration file" in junit and "<failure" not in junit


def test_label_sources_outside_the_project_are_refused_at_their_place_and_nothing_is_sent(labelled, openai_server, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    secret = elsewhere / "secret.jsonl"
    secret.write_text('{"event": "user", "text": "the password is hunter2"}\n')
    (labelled / "conversations" / "linked.jsonl").symlink_to(secret)
    sources = [str(secret), f"../{elsewhere.name}/secret.jsonl", "conversations/linked.jsonl", "conversations/../../x"]
    for safe_env in ((), ("--safe-env",)):
        lines = [json.dumps({"source": "conversations/asks_1.jsonl", "criterion": CRITERION, "label": "pass"})]
        lines += [json.dumps({"criterion": CRITERION, "source": source, "label": "pass"}) for source in sources]
        (labelled / "labels.jsonl").write_text("\n".join(lines) + "\n")
        result = calibrate(labelled, *safe_env)
        assert result.returncode == 2, result.stderr
        column = lines[1].index(json.dumps(str(secret))) + 1  # where the source's value opens
        assert column > 40 and result.stderr.startswith(
            f"labels.jsonl:2:{column}: the conversation {str(secret)!r} is outside the project folder {labelled.resolve()}: calibrate reads"
        ), result.stderr
        assert result.stdout == "" and "hunter2" not in result.stderr and openai_server.count == 0
    for number, source in enumerate(sources[1:], 3):  # each refused alone, at its own line
        (labelled / "labels.jsonl").write_text(json.dumps({"source": source, "criterion": CRITERION, "label": "fail"}) + "\n")
        result = calibrate(labelled)
        assert result.returncode == 2 and result.stderr.startswith(f"labels.jsonl:1:12: the conversation {source!r} is outside the project folder"), (number, result.stderr)
    assert openai_server.count == 0
