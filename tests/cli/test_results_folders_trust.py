"""A results folder is read back only as what it is: an unfinished batch is never a pass, shards that disagree
with their summary are a damaged folder, a link out of the folder is refused, and `report` of a `check --output`
folder prints what `check` printed.

Every run is the command run in process (`tests/inprocess.py`), Ray's in a subprocess, on folders the commands themselves wrote; the
damage (a killed batch's missing runs, a shard cut short, a link) is made on those folders by hand.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests import inprocess
from tests.compare.builders import simple, write_batch
from tests.conftest import EXAMPLE, plain_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
CONFIRMS = EXAMPLE / "eval" / "scenarios" / "card_replace_confirms_first.yml"
DAMAGED = EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"
SOP = EXAMPLE / "sops" / "replace_card.yml"
CONVERSATIONS = EXAMPLE / "conversations"
SLUG = "card_replace_confirms_first"


def dialogcheck(*args) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], text=True, env=plain_env(), timeout=300)


def installed(*args) -> subprocess.CompletedProcess:
    """The installed command in a subprocess, for Ray (which must not start in the test's own process)."""
    return subprocess.run([str(DIALOGCHECK), *map(str, args)], capture_output=True, text=True, env=plain_env(), timeout=300, check=False)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A batch of a scenario that passes, 2 runs, as `dialogcheck run` writes it."""
    folder = tmp_path_factory.mktemp("finished") / "results"
    done = dialogcheck("run", "--no-judge", "--runs", "2", "--results", folder, CONFIRMS)
    assert done.returncode == 0, done.stderr
    return folder


def killed_copy(finished: Path, where: Path) -> Path:
    """The batch as a kill after its first run leaves it: run 2's files absent, the summary counting one run."""
    folder = where / "killed"
    shutil.copytree(finished, folder)
    for path in (folder / SLUG).glob("run_2.*"):
        path.unlink()
    summary = json.loads((folder / "summary.json").read_text())
    summary |= {"completed_runs": 1, "passed": 1, "interrupted": True}
    summary["scenarios"][0] |= {"runs": 1, "passed": 1, "pass_hat_k": {"1": 1.0}}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2))
    return folder


@pytest.fixture
def killed(finished, tmp_path) -> Path:
    return killed_copy(finished, tmp_path)


# -- item 3: planned runs that never finished ------------------------------------------------------


def test_report_of_an_unfinished_batch_is_never_a_pass(killed, tmp_path):
    text = dialogcheck("report", killed)
    assert text.returncode == 3, text.stdout + text.stderr
    assert "\n1 run of 2 planned: 1 passed, 0 failed, 0 errored\n" in text.stdout
    assert f"unfinished: 1 of 2 planned runs never finished ({SLUG} run 2): finish the batch with dialogcheck run --resume {killed}\n" in text.stdout
    document = dialogcheck("report", "--format", "json", killed)
    assert document.returncode == 3
    assert json.loads(document.stdout)["unfinished_runs"] == [{"slug": SLUG, "run": 2}]
    page = tmp_path / "report.html"
    html = dialogcheck("report", "--html", page, killed)
    assert html.returncode == 3 and page.is_file()
    assert "1 of 2 planned runs never finished" in page.read_text()
    junit = tmp_path / "junit.xml"
    assert dialogcheck("report", "--junit", junit, killed).returncode == 3
    root = ElementTree.parse(junit).getroot()
    assert (root.get("tests"), root.get("errors"), root.get("failures")) == ("2", "1", "0")
    (never,) = [case for case in root.iter("testcase") if case.find("error") is not None]
    assert (never.get("name"), never.get("classname")) == ("run_2", SLUG)
    assert "never finished" in never.find("error").text


def test_report_of_a_finished_batch_says_nothing_of_unfinished_runs(finished):
    done = dialogcheck("report", "--format", "json", finished)
    assert done.returncode == 0
    assert "unfinished_runs" not in json.loads(done.stdout)


def test_check_of_an_unfinished_batch_folder_is_never_a_pass(killed):
    text = dialogcheck("check", "--no-judge", "--scenario", CONFIRMS, killed)
    assert text.returncode == 3, text.stdout + text.stderr
    assert (
        f"{killed / 'plan.json'}:1:1: warning: 1 of 2 planned runs never finished ({SLUG} run 2): this check judged the batch in part;"
        f" finish it with dialogcheck run --resume {killed}\n"
    ) in text.stderr
    document = dialogcheck("check", "--no-judge", "--format", "json", "--scenario", CONFIRMS, killed)
    assert document.returncode == 3
    (warning,) = json.loads(document.stdout)["warnings"]
    assert warning["file"] == str(killed / "plan.json") and "1 of 2 planned runs never finished" in warning["message"]


def test_check_output_of_an_unfinished_batch_is_reported_as_check_exited(killed, tmp_path):
    out = tmp_path / "out"
    assert dialogcheck("check", "--no-judge", "--output", out, "--scenario", CONFIRMS, killed).returncode == 3
    assert dialogcheck("report", out).returncode == 3


def test_check_on_ray_of_an_unfinished_batch_folder_is_never_a_pass(killed, tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "out"
    done = installed("check", "--engine", "ray", "--no-judge", "--output", out, "--scenario", CONFIRMS, killed)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"{killed / 'plan.json'}:1:1: warning: 1 of 2 planned runs never finished ({SLUG} run 2)" in done.stderr
    assert json.loads((out / "summary.json").read_text())["unfinished_runs"] == [{"results": str(killed), "slug": SLUG, "run": 2}]


@pytest.mark.parametrize("unfinished", ["base", "new"])
def test_compare_with_an_unfinished_side_is_never_a_pass(finished, tmp_path, unfinished):
    killed = killed_copy(finished, tmp_path)
    base, new = (killed, finished) if unfinished == "base" else (finished, killed)
    done = dialogcheck("compare", "--fail-on", "regression", base, new)
    assert done.returncode == 3, done.stdout + done.stderr
    name = "BASE" if unfinished == "base" else "NEW"
    assert f"dialogcheck: {name} is an unfinished batch: 1 of 2 planned runs never finished ({SLUG} run 2)" in done.stderr
    document = dialogcheck("compare", "--fail-on", "regression", "--format", "json", base, new)
    assert document.returncode == 3
    assert json.loads(document.stdout)[unfinished]["unfinished_runs"] == [{"slug": SLUG, "run": 2}]
    assert dialogcheck("compare", "--fail-on", "regression", finished, finished).returncode == 0


# -- item 3: shards that disagree with their summary -----------------------------------------------


@pytest.fixture(scope="module")
def output(tmp_path_factory) -> Path:
    """`check --output` of the 8 recorded conversations against the SOP (4 fail it), 8 shards."""
    folder = tmp_path_factory.mktemp("check") / "out"
    done = dialogcheck("check", "--no-judge", "--output", folder, "--sop", SOP, CONVERSATIONS)
    assert done.returncode == 1, done.stderr
    return folder


def damaged(output: Path, where: Path, how: str) -> Path:
    folder = where / "damaged"
    shutil.copytree(output, folder)
    shards = sorted(folder.glob("part-*.jsonl"))
    failing = next(p for p in shards if json.loads(p.read_text())["verdict"] == "fail")
    if how == "cut":
        failing.write_text("")  # cut short at a line's end: what is left is valid JSON
    elif how == "removed":
        failing.unlink()
    else:  # a shard added by hand
        (folder / "part-99999.jsonl").write_bytes(failing.read_bytes())
    return folder


@pytest.mark.parametrize("how", ["cut", "removed", "added"])
def test_shards_that_disagree_with_their_summary_are_a_damaged_folder(output, tmp_path, how):
    folder = damaged(output, tmp_path, how)
    held = {"cut": "7 (4 passed, 3 failed, 0 errored)", "removed": "7 (4 passed, 3 failed, 0 errored)", "added": "9 (4 passed, 5 failed, 0 errored)"}[how]
    message = (
        f"{folder / 'summary.json'}:1:1: summary.json counts 8 conversations (4 passed, 4 failed, 0 errored), but the shards hold {held}:"
        " a shard was cut short, removed or added, so this folder cannot be trusted\n"
    )
    for args in ([], ["--format", "json"], ["--html", tmp_path / "page.html"], ["--junit", tmp_path / "junit.xml"]):
        done = dialogcheck("report", *args, folder)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        if "--format" in args:
            assert json.loads(done.stdout)["error"]["file"] == str(folder / "summary.json")
        else:
            assert done.stderr == message
    assert not (tmp_path / "page.html").exists() and not (tmp_path / "junit.xml").exists()
    for base, new in ((output, folder), (folder, output)):
        done = dialogcheck("compare", "--fail-on", "regression", base, new)
        assert (done.returncode, done.stderr) == (2, message)


def test_a_parquet_shard_removed_is_a_damaged_folder(tmp_path):
    pytest.importorskip("pyarrow")
    folder = tmp_path / "out"
    assert dialogcheck("check", "--no-judge", "--output", folder, "--output-format", "parquet", "--sop", SOP, CONVERSATIONS).returncode == 1
    sorted(folder.glob("part-*.parquet"))[-1].unlink()
    for args in ([], ["--format", "json"], ["--html", tmp_path / "page.html"]):
        done = dialogcheck("report", *args, folder)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
    assert "summary.json counts 8 conversations (4 passed, 4 failed, 0 errored), but the shards hold 7" in done.stderr


# -- item 10: links out of a results folder --------------------------------------------------------


@pytest.mark.parametrize("name", ["summary.json", "plan.json", f"{SLUG}/run_1.json", f"{SLUG}/run_1.events.jsonl", SLUG])
def test_a_link_out_of_a_run_folder_is_refused_by_every_reader(finished, tmp_path, name):
    folder = tmp_path / "results"
    shutil.copytree(finished, folder)
    outside = tmp_path / "outside" / Path(name).name
    outside.parent.mkdir()
    shutil.move(folder / name, outside)
    (folder / name).symlink_to(outside, target_is_directory=outside.is_dir())
    for args in (["report"], ["report", "--format", "json"], ["report", "--html", tmp_path / "page.html"], ["compare", finished]):
        done = dialogcheck(*args, folder)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        if "--format" not in args:
            assert f"{folder / name}:1:1: this is a link to {outside}, outside the results folder {folder}:" in done.stderr, (args, done.stderr)
    assert not (tmp_path / "page.html").exists()
    if name not in ("summary.json", f"{SLUG}/run_1.json"):  # check reads the plan and the recorded events alone
        checked = dialogcheck("check", "--no-judge", "--scenario", CONFIRMS, folder)
        assert checked.returncode == 2 and f"{folder / name}" in checked.stderr and "outside" in checked.stderr, checked.stderr


@pytest.mark.parametrize("name", ["summary.json", "part-00000.jsonl"])
def test_a_link_out_of_a_check_output_folder_is_refused_by_every_reader(output, tmp_path, name):
    folder = tmp_path / "out"
    shutil.copytree(output, folder)
    outside = tmp_path / "outside" / name
    outside.parent.mkdir()
    shutil.move(folder / name, outside)
    (folder / name).symlink_to(outside)
    for args in (["report"], ["report", "--html", tmp_path / "page.html"], ["compare", output]):
        done = dialogcheck(*args, folder)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert f"{folder / name}:1:1: this is a link to {outside}, outside the results folder {folder}:" in done.stderr, (args, done.stderr)


# -- items 17 and 20: `report` of a `check --output` folder prints what `check` printed ------------


def with_threshold(tmp_path: Path) -> Path:
    sop = tmp_path / "replace_card.yml"
    sop.write_text(SOP.read_text().replace("sop:\n", "sop:\n  threshold: 0.8\n", 1))
    return sop


@pytest.mark.parametrize("subject", ["sop", "scenario"])
def test_report_of_a_check_output_folder_prints_what_check_printed(tmp_path, subject):
    flag, path = ("--sop", with_threshold(tmp_path)) if subject == "sop" else ("--scenario", DAMAGED)
    out = tmp_path / "out"
    checked = dialogcheck("check", "--no-judge", "--output", out, flag, path, CONVERSATIONS)
    assert checked.returncode == 1, checked.stderr
    if subject == "sop":
        assert "; 2 of 8 below their threshold\n" in checked.stdout
    reported = dialogcheck("report", out)
    assert reported.returncode == 1
    assert reported.stdout == checked.stdout.replace("1 LLM-judged check per conversation skipped (--no-judge)\n", "")


@pytest.mark.parametrize("flag, path, slug", [("--scenario", DAMAGED, "card_replace_damaged"), ("--sop", SOP, "replace_card")])
def test_the_scenario_rows_of_a_check_are_keyed_by_slug(tmp_path, flag, path, slug):
    done = dialogcheck("check", "--no-judge", "--format", "json", flag, path, CONVERSATIONS)
    assert done.returncode == 1
    (row,) = json.loads(done.stdout)["summary"]["scenarios"]
    assert (row["slug"], row["runs"]) == (slug, 8)
    assert row["name"] != slug
    assert all("scenario" not in check for check in json.loads(done.stdout)["summary"]["checks"])
    out = tmp_path / "out"
    assert dialogcheck("check", "--no-judge", "--output", out, flag, path, CONVERSATIONS).returncode == 1
    assert [r["slug"] for r in json.loads((out / "summary.json").read_text())["scenarios"]] == [slug]


# -- item 1: a --match that runs out of its time names the line of the name ------------------------


def test_a_match_that_runs_out_of_time_names_the_line_of_the_name(tmp_path):
    slow = "a" * 5000 + "!"
    base = write_batch(tmp_path / "base.json", [simple("aaaa", "pass"), simple("aa", "pass"), simple(slow, "pass")])
    new = write_batch(tmp_path / "new.json", [simple("aaaa", "pass")])
    done = dialogcheck("compare", base, new, "--match", "(a+)+$")
    assert done.returncode == 2
    assert done.stderr.startswith(f"{base}:4:1: --match /(a+)+$/ ran out of its 1 s for searching `{slow[:79]}…`")


def test_report_of_a_check_output_folder_exits_as_check_did_when_an_optional_step_errored(tmp_path):
    out = tmp_path / "out"
    one = CONVERSATIONS / "sop_follows_procedure.jsonl"  # passes every required step; the optional judged one has no judge
    checked = dialogcheck("check", "--output", out, "--sop", SOP, one)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    assert json.loads((out / "summary.json").read_text())["passed"] == 1
    assert dialogcheck("report", out).returncode == 3
