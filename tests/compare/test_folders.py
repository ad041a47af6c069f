"""Folders as sides: a `run` results folder pairs runs by scenario slug, a `check --output` folder by conversation id.

The folders are written by the `dialogcheck` command (run in process, `tests/inprocess.py`): `run` against a small
project whose agent reads a mode file (so BASE and NEW differ by what the agent did), and `check`
with `--output` and with `--format json` on the example conversations, which must read the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dialogcheck import compare_results
from dialogcheck.checks.base import Outcome
from dialogcheck.compare import Status, Verdict
from dialogcheck.compare.model import CHECK_FOLDER, JSON_DOCUMENT, RUN_FOLDER
from dialogcheck.compare.read import read_side
from tests import inprocess
from tests.compare.test_read import runs_of
from tests.conftest import EXAMPLE, plain_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

AGENT = '''
import pathlib

MODE = pathlib.Path(__file__).with_name("mode")


def respond(conversation_id, text, initial_slots=None):
    if text is None:
        return {"messages": [{"text": "Hi"}], "events": []}
    if text == "break":
        raise LookupError("the agent broke")
    query = text if MODE.read_text() == "good" else "nope"
    events = [{"event": "tool_executed", "tool_name": "lookup", "arguments": {"q": query}, "source": "local", "result": "ok"}]
    return {"messages": [{"text": "Looked it up"}], "events": events}
'''

SCENARIO = """
scenario:
  name: {slug}
  simulation_context: c
  script: [{message}]
  goals:
    assertions:
      - tool_executed: {{tool_name: lookup, source: local, arguments: {{q: card}}}}
      - tool_executed: {{tool_name: lookup, source: local}}
"""

#: Seven scenarios the good agent passes and the bad one fails, one that always fails, one whose runs all error.
SLUGS = [f"s{i}" for i in range(1, 8)]


def dialogcheck(*args, cwd=None) -> subprocess.CompletedProcess:
    env = plain_env()
    return inprocess.run([DIALOGCHECK, *args], text=True, env=env, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("compare_project")
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (root / "agent.py").write_text(AGENT)
    for slug, message in [*((slug, "card") for slug in SLUGS), ("never", "other"), ("broken", "break")]:
        (root / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(slug=slug, message=message))
    folders = []
    for mode in ("good", "bad"):
        (root / "mode").write_text(mode)
        done = dialogcheck("run", root, "--no-judge", "--parallel", "1", "--results", root / mode)
        assert done.returncode in (1, 3), done.stdout + done.stderr
        folders.append(root / mode)
    return folders[0], folders[1]


def test_runs_pair_by_scenario_slug(run_folders):
    base, new = run_folders
    comparison = compare_results(base, new)
    assert (comparison.base.form, comparison.base.runs, comparison.base.errored) == (RUN_FOLDER, 9, 1)
    statuses = {key.key: key.status for key in comparison.keys}
    assert statuses == {**dict.fromkeys(SLUGS, Status.REGRESSED), "never": Status.STILL_FAILING}
    assert comparison.not_judged == ("broken",)
    assert comparison.test == "mcnemar" and comparison.p_value == pytest.approx(2 / 2**7)
    assert comparison.verdict is Verdict.REGRESSED
    flipped = {(flips.check.subject, flips.check.index, flips.pass_to_fail, flips.fail_to_pass) for flips in comparison.checks}
    assert flipped == {(slug, 1, 1, 0) for slug in SLUGS}  # the argument the agent now gets wrong; the tool still ran
    assert {key.broke[0].title for key in comparison.keys if key.broke} == {comparison.checks[0].check.title}


def test_a_run_folder_against_itself_changes_nothing(run_folders):
    base, _ = run_folders
    comparison = compare_results(base, base)
    assert comparison.checks == () and comparison.p_value == 1.0 and comparison.verdict is Verdict.NO_CHANGE
    assert {key.status for key in comparison.keys} == {Status.STILL_PASSING, Status.STILL_FAILING}


def test_the_command_exits_1_on_the_regression_with_fail_on(run_folders):
    base, new = run_folders
    done = dialogcheck("compare", base, new, "--fail-on", "regression")
    assert done.returncode == 1, done.stderr
    assert "verdict: regressed (alpha 0.05)" in done.stdout
    assert "keys: 7 regressed, 0 fixed, 0 flaky, 1 still failing, 0 still passing" in done.stdout
    assert "errored runs, left out of the pass rates: 1 in BASE, 1 in NEW" in done.stdout
    assert "not compared (every run errored on a side): 1 key (broken)" in done.stdout
    assert dialogcheck("compare", base, new).returncode == 0
    assert dialogcheck("compare", new, base, "--fail-on", "regression").returncode == 0


@pytest.fixture(scope="module")
def check_outputs(tmp_path_factory) -> tuple[Path, Path, Path]:
    """The example conversations against the example SOP: `--output` folders (JSONL and Parquet shards beside it), the
    `--format json` document, and `--jobs 2`'s."""
    root = tmp_path_factory.mktemp("check_outputs")
    sop = EXAMPLE / "sops" / "replace_card.yml"
    conversations = EXAMPLE / "conversations"
    folder = root / "out"
    assert dialogcheck("check", "--no-judge", "--sop", sop, conversations, "--output", folder).returncode == 1
    parquet = dialogcheck("check", "--no-judge", "--sop", sop, conversations, "--output", root / "parquet", "--output-format", "parquet")
    assert parquet.returncode == 1, parquet.stderr
    documents = []
    for jobs in ("1", "2"):
        done = dialogcheck("check", "--no-judge", "--sop", sop, conversations, "--format", "json", "--jobs", jobs)
        assert done.returncode == 1, done.stderr
        documents.append(root / f"jobs{jobs}.json")
        documents[-1].write_text(done.stdout)
    return folder, documents[0], documents[1]


def test_a_check_output_folder_reads_as_its_json_document_does(check_outputs):
    folder, document, chunked = check_outputs
    from_folder, from_document, from_chunks = read_side(folder), read_side(document), read_side(chunked)
    from_parquet = read_side(folder.with_name("parquet"))
    assert (from_folder.form, from_parquet.form, from_document.form) == (CHECK_FOLDER, CHECK_FOLDER, JSON_DOCUMENT)
    assert runs_of(from_folder) == runs_of(from_parquet) == runs_of(from_document) == runs_of(from_chunks)
    verdicts = [run.verdict for runs in from_document.runs.values() for run in runs]
    assert verdicts.count(Outcome.PASS) == 4 and verdicts.count(Outcome.FAIL) == 4
    outcomes = {outcome for runs in from_document.runs.values() for run in runs for _, outcome in run.checks}
    assert outcomes >= {Outcome.PASS, Outcome.FAIL, Outcome.SKIP}


def test_a_check_output_folder_against_its_document_changes_nothing(check_outputs):
    folder, document, _ = check_outputs
    done = dialogcheck("compare", folder, document, "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["verdict"], result["p_value"], result["checks"]) == ("no significant change", 1.0, [])
    assert result["statuses"] == {"fixed": 0, "regressed": 0, "still failing": 4, "still passing": 4, "flaky": 0}
