"""`check` with several scenarios: each conversation judged against its own, never silently against the last.

A conversation names its scenario (a `scenario` key in its tracker object), or `--pair REGEX` pairs
it by the key its id and a scenario's slug give. A conversation with no scenario is bad input at its
file and line. With one scenario, everything is as it was. Every run is the command run in process
(`tests/inprocess.py`).
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
from tests.conftest import EXAMPLE, plain_env
from tests.engines.batches import example_events
from tests.stats_helpers import per_check_stats, verdict_counts

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
SCENARIOS = EXAMPLE / "eval" / "scenarios"
CONFIRMS = SCENARIOS / "card_replace_confirms_first.yml"  # passes damaged_card_ok, fails damaged_card_no_confirmation
ONE_TURN = SCENARIOS / "card_replace_one_turn.yml"  # the other way round
TAU_DATA = Path(__file__).parents[1] / "importers" / "data"


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    env = plain_env()
    return inprocess.run([DIALOGCHECK, *args], env=env, timeout=120, cwd=cwd)


def check(*args, cwd=None) -> subprocess.CompletedProcess:
    return run("check", "--no-judge", *args, cwd=cwd)


def line(name: str, events: list[dict], scenario: object = None) -> str:
    tracker = {"sender_id": name, "events": events}
    if scenario is not None:
        tracker["scenario"] = scenario
    return json.dumps(tracker)


OK, UNCONFIRMED = example_events()[3], example_events()[2]  # damaged_card_ok, damaged_card_no_confirmation


@pytest.fixture
def named(tmp_path) -> Path:
    """Four conversations, each naming the scenario it passes."""
    path = tmp_path / "named.jsonl"
    path.write_text(
        "\n".join(
            [
                line("a", OK, "card_replace_confirms_first"),
                line("b", UNCONFIRMED, "card_replace_one_turn"),
                line("c", UNCONFIRMED, "card_replace_one_turn"),
                line("d", OK, "card_replace_confirms_first"),
            ]
        )
        + "\n"
    )
    return path


def test_each_conversation_is_judged_against_the_scenario_it_names(named):
    done = check("--format", "json", "--scenario", CONFIRMS, "--scenario", ONE_TURN, named)
    assert done.returncode == 0, done.stderr  # judged against the last only, a and d would fail
    document = json.loads(done.stdout)
    assert [(c["conversation_id"], c["scenario"], c["subject"], c["verdict"]) for c in document["conversations"]] == [
        ("a", "card_replace_confirms_first", "Agent asks before ordering and orders once", "pass"),
        ("b", "card_replace_one_turn", "Card looked up and ordered in one turn", "pass"),
        ("c", "card_replace_one_turn", "Card looked up and ordered in one turn", "pass"),
        ("d", "card_replace_confirms_first", "Agent asks before ordering and orders once", "pass"),
    ]
    folder = check("--format", "json", "--scenario", SCENARIOS, named)  # a folder of scenarios: the same pairs
    assert folder.returncode == 0 and json.loads(folder.stdout)["conversations"] == document["conversations"]
    text = check("--show", "all", "--scenario", CONFIRMS, "--scenario", ONE_TURN, named)
    assert f"{named}#a  Agent asks before ordering and orders once (card_replace_confirms_first)\n" in text.stdout.decode()


def test_jobs_and_stream_pair_as_one_process_does(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text("".join(line(f"c{i}", OK if i % 2 else UNCONFIRMED, "card_replace_confirms_first" if i % 2 else "card_replace_one_turn") + "\n" for i in range(600)))
    outputs = {
        check(*extra, "--format", "json", "--scenario", CONFIRMS, "--scenario", ONE_TURN, path).stdout
        for extra in (["--jobs", "1"], ["--jobs", "2"], ["--stream", "--jobs", "2"])
    }
    assert len(outputs) == 1
    assert verdict_counts(json.loads(outputs.pop())["summary"]) == {"conversations": 600, "passed": 600, "failed": 0, "errored": 0}


def scenario_file(folder: Path, slug: str, tool: str) -> Path:
    path = folder / f"{slug}.yml"
    path.write_text(
        f"scenario:\n  name: {slug}\n  simulation_context: c\n  goals:\n    assertions:\n"
        f"      - tool_executed: {{tool_name: {tool}, source: local}}\n"
    )
    return path


def test_pair_compares_keys_whole_so_7_is_not_17(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    scenario_file(folder, "tau-bench-task-7", "order_replacement")
    scenario_file(folder, "tau-bench-task-17", "never_called")
    scenario_file(folder, "tau-bench-task-71", "never_called")
    path = tmp_path / "runs.jsonl"
    path.write_text(line("task-7-trial-2", OK) + "\n" + line("task-17-trial-0", OK) + "\n")
    done = check("--format", "json", "--scenario", folder, "--pair", r"task-(\d+)", path)
    assert done.returncode == 1, done.stderr
    pairs = [(c["conversation_id"], c["scenario"], c["verdict"]) for c in json.loads(done.stdout)["conversations"]]
    assert pairs == [("task-7-trial-2", "tau-bench-task-7", "pass"), ("task-17-trial-0", "tau-bench-task-17", "fail")]


def test_a_conversation_without_a_scenario_is_bad_input_where_it_stands(tmp_path, named):
    lines = named.read_text().splitlines()
    lines.insert(2, line("stray", OK))
    named.write_text("\n".join(lines) + "\n")
    done = check("--scenario", CONFIRMS, "--scenario", ONE_TURN, named)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode() == (
        f"{named}:3:1: no scenario for conversation stray: its record names none (a `scenario` key holding a scenario's slug)"
        " and no --pair pattern pairs by id\n"
    )
    streamed = check("--stream", "--format", "json", "--scenario", CONFIRMS, "--scenario", ONE_TURN, named)
    document = json.loads(streamed.stdout)
    assert streamed.returncode == 2 and len(document["conversations"]) == 2 and document["error"]["line"] == 3
    paired = check("--scenario", CONFIRMS, "--scenario", ONE_TURN, "--pair", "^(zzz)", named)
    assert paired.returncode == 2
    assert paired.stderr.decode() == f"{named}:3:1: no scenario for conversation stray: --pair /^(zzz)/ finds no key in its id `stray`\n"


def test_a_name_that_is_no_scenario_and_a_name_of_the_wrong_type(tmp_path):
    path = tmp_path / "named.jsonl"
    path.write_text(line("a", OK, "card_replace_confirm_first") + "\n" + line("b", OK, 7) + "\n")
    done = check("--scenario", CONFIRMS, "--scenario", ONE_TURN, path)
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"{path}:1:1: no scenario for conversation a: it names `card_replace_confirm_first`, which is not one of the scenarios"
        " given (did you mean `card_replace_confirms_first`?)\n"
    )
    path.write_text(line("b", OK, 7) + "\n")
    done = check("--scenario", CONFIRMS, path)
    column = path.read_text().index('"scenario"') + 1
    assert (done.returncode, done.stderr.decode()) == (2, f"{path}:1:{column}: `scenario` must be a string (the slug of a scenario), got a number\n")


def test_ambiguous_pairs_and_slugs_are_refused_before_anything_is_judged(tmp_path, named):
    folder = tmp_path / "scenarios"
    (folder / "more").mkdir(parents=True)
    plain = scenario_file(folder, "task-5", "x")
    second = scenario_file(folder, "task-5-v2", "y")  # read first: files are taken in sorted order
    done = check("--scenario", folder, "--pair", r"task-(\d+)", named)
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"{plain}:1:1: --pair takes the key `5` from both `task-5-v2` ({second}) and `task-5`: make the pattern tell them apart\n"
    )
    twin = scenario_file(folder / "more", "task-5", "z")  # sorted before both
    done = check("--scenario", folder, named)
    assert done.returncode == 2
    assert done.stderr.decode().startswith(f"{plain}:1:1: two scenarios have the slug `task-5` (the other is {twin})")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pair", "task-("], "Invalid value for '--pair': not a valid regular expression: missing ) at position 6"),
        (["--pair", "task-(\\d{5000})"], "Invalid value for '--pair': too large a regular expression: a repeat count of 5,000 is more than the limit of 1,000"),
        (["--pair", "task-\\d+"], "Invalid value for '--pair': needs exactly one capturing group, the key to pair by (it has 0), e.g. 'task-(\\d+)'"),
        (["--sop", "x.yml", "--sop", "y.yml"], "give --sop once: an SOP applies to every conversation (several scenarios may be given with --scenario)"),
    ],
)
def test_usage_errors(named, args, message):
    subject = [] if "--sop" in args else ["--scenario", CONFIRMS, "--scenario", ONE_TURN]
    done = check(*subject, *args, named)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines()[-1] == f"Error: {message}"


def test_a_pair_pattern_that_backtracks_catastrophically_on_an_id_exits_2_at_its_line(tmp_path):
    slow = "a" * 5000 + "!"
    path = tmp_path / "slow.jsonl"
    path.write_text(line("a", OK, "card_replace_confirms_first") + "\n" + line(slow, OK) + "\n")
    done = check("--scenario", CONFIRMS, "--scenario", ONE_TURN, "--pair", "(a+)+$", path)
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"{path}:2:1: no scenario for conversation {slow[:79]}…: --pair /(a+)+$/ ran out of its 1 s for searching `{slow[:79]}…`"
        " (5,001 characters): it backtracks catastrophically: simplify it (its id)\n"
    )


def test_one_scenario_is_judged_as_it_always_was(tmp_path, named):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(CONFIRMS, alone)
    for output_format in ("text", "json"):
        file = check("--format", output_format, "--scenario", CONFIRMS, named)
        folder = check("--format", output_format, "--scenario", alone, named)
        assert file.returncode == folder.returncode == 1  # b and c name another scenario: with one, it is not read
        assert folder.stdout == file.stdout.replace(str(CONFIRMS).encode(), str(alone / CONFIRMS.name).encode())
        assert b'"scenario"' not in file.stdout and b"(card_replace_confirms_first)" not in file.stdout


def test_reports_and_shards_name_each_conversation_scenario(tmp_path, named):
    junit, html, out = tmp_path / "j.xml", tmp_path / "r.html", tmp_path / "out"
    done = check("--junit", junit, "--html", html, "--scenario", CONFIRMS, "--scenario", ONE_TURN, named)
    assert done.returncode == 0, done.stderr
    suites = ElementTree.parse(junit).getroot().findall("testsuite")
    assert [(s.get("name"), len(s.findall("testcase"))) for s in suites] == [("card_replace_confirms_first", 2), ("card_replace_one_turn", 2)]
    properties = {p.get("name"): p.get("value") for p in suites[1].iter("property")}
    assert properties["scenario.name"] == "Card looked up and ordered in one turn" and properties["scenario.path"] == str(ONE_TURN)
    page = html.read_text()
    assert "card_replace_confirms_first" in page and "card_replace_one_turn" in page
    done = check("--output", out, "--scenario", CONFIRMS, "--scenario", ONE_TURN, named)
    rows = [json.loads(row) for shard in sorted(out.glob("part-*.jsonl")) for row in shard.read_text().splitlines()]
    assert [row["scenario"] for row in rows] == ["card_replace_confirms_first", "card_replace_one_turn", "card_replace_one_turn", "card_replace_confirms_first"]


def test_tau_bench_reproduces_from_the_command_line(tmp_path):
    """docs/importers.md's tau-bench example on four real runs: import, derive a scenario per task, check them all at once."""
    assert (TAU_DATA / "LICENSE-tau-bench").is_file()
    imported = run("import", "--from", "tau-bench", TAU_DATA / "tau_bench_airline_sample.json", "-o", "runs.jsonl", "--derive-scenarios", "scenarios", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    done = check("--format", "json", "--scenario", "scenarios", "--pair", r"task-(\d+)", "runs.jsonl", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    judged = {c["conversation_id"]: (c["scenario"], c["verdict"]) for c in json.loads(done.stdout)["conversations"]}
    recorded = {f"task-{r['task_id']}-trial-{r['trial']}": r["reward"] for r in json.loads((TAU_DATA / "tau_bench_airline_sample.json").read_text())}
    assert {cid: scenario for cid, (scenario, _) in judged.items()} == {cid: f"tau-bench-task-{cid.split('-')[1]}" for cid in recorded}
    assert {cid: verdict == "pass" for cid, (_, verdict) in judged.items()} == {cid: reward == 1.0 for cid, reward in recorded.items()}
    document = json.loads(done.stdout)
    checks = document["summary"]["checks"]
    assert checks == per_check_stats(document["conversations"])  # each task's checks, by scenario
    assert {row["scenario"] for row in checks} == {f"tau-bench-task-{cid.split('-')[1]}" for cid in recorded}


def test_missing_and_broken_scenarios_are_bad_input_naming_them(tmp_path, named):
    broken = tmp_path / "broken.yml"
    broken.write_text("scenario:\n  name: x\n")
    done = check("--scenario", tmp_path / "missing", "--scenario", broken, "--scenario", CONFIRMS, named)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [f"{tmp_path / 'missing'}:1:1: no such file or folder"]
    done = check("--scenario", broken, "--scenario", CONFIRMS, "--scenario", tmp_path / "missing.yml", named)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines()[0] == f"{tmp_path / 'missing.yml'}:1:1: no such file or folder"
    again = check("--scenario", broken, "--scenario", CONFIRMS, named)
    assert again.stderr.decode().splitlines() == [f"{broken}:2:3: `scenario` is missing required field `simulation_context`"]
