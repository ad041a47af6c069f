"""A hand-edited or damaged `plan.json`: bad input (exit 2, at its file, line and column) for `run --resume` and
`report`, decided from the plan's bounds and the files it names, never by running or reading without end.

A plan once set a resume out on 2,000,001 runs (2,000 persona traits x 1,000 repeats), a 1 MB plan made `report`
die with a MemoryError, and a scenario path pointing at /dev/zero was hashed for ever. Every case here is the
command run in process (`tests/inprocess.py`), bounded as a subprocess would be: far below what any of those would take.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dialogcheck.results.plan import MAX_BATCH_RUNS
from tests.cli.test_resume import dialogcheck, interrupted  # noqa: F401 - the fixture

BOTH = (["run", "--resume"], ["report"])
#: From a key's opening quote to its value, in a plan dialogcheck wrote (`"personas": [`).
PAST_PERSONAS, PAST_TOTAL = len('"personas": '), len('"total_runs": ')


def edit(folder: Path, change) -> Path:
    """`change(plan)` written back as `plan.json`, indented as dialogcheck writes it."""
    path = folder / "plan.json"
    plan = json.loads(path.read_text())
    change(plan)
    path.write_text(json.dumps(plan, indent=2))
    return path


def position(path: Path, needle: str, nth: int = 1) -> tuple[int, int]:
    """Line and column (from 1) of the `nth` occurrence of `needle` in the file."""
    text, offset = path.read_text(), -1
    for _ in range(nth):
        offset = text.index(needle, offset + 1)
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def refused(folder: Path, *command: str) -> str:
    done = dialogcheck(*command, str(folder), cwd=folder.parent)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    return done.stderr


def untouched(folder: Path):
    return sorted((str(p), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.name != ".dialogcheck.lock")


@pytest.mark.parametrize("command", BOTH)
def test_two_thousand_traits_of_a_thousand_runs_are_refused(interrupted, command):  # noqa: F811 - `interrupted` is the fixture imported above
    def matrix(plan):
        plan["scenarios"][0] |= {"runs": 1000, "personas": ["terse"] * 2000}
        plan["total_runs"] = 2_000_000 + plan["scenarios"][1]["runs"]

    path = edit(interrupted, matrix)
    before = untouched(interrupted)
    line, column = position(path, '"personas"')
    assert refused(interrupted, *command) == (
        f"{path}:{line}:{column + PAST_PERSONAS}: invalid plan: `scenarios[0].personas`: expected `array` of length <= 9\n"
    )
    assert untouched(interrupted) == before


@pytest.mark.parametrize("command", BOTH)
def test_a_trait_named_twice_is_refused_at_its_second_naming(interrupted, command):  # noqa: F811 - `interrupted` is the fixture imported above
    path = edit(interrupted, lambda plan: plan["scenarios"][0].update(personas=["terse", "polite", "terse"]) or plan.update(total_runs=8))
    line, column = position(path, '"terse"', 2)
    assert refused(interrupted, *command) == f"{path}:{line}:{column}: invalid plan: `scenarios[0].personas` names the trait 'terse' twice\n"


@pytest.mark.parametrize("command", BOTH)
def test_a_plan_of_more_runs_than_a_batch_may_run_is_refused_before_any_is_listed(interrupted, tmp_path, command):  # noqa: F811 - `interrupted` is the fixture imported above
    """A 1 MB plan of 5,000 scenarios at the most repeats each: 5,000,000 runs, which `report` once listed until it ran out of memory."""
    count = 5000

    def many(plan):
        first = plan["scenarios"][0]
        plan["scenarios"] = [first | {"slug": f"s{i}", "runs": 1000} for i in range(count)]
        plan["total_runs"] = 1000 * count

    path = edit(interrupted, many)
    assert path.stat().st_size > 1 << 20
    line, column = position(path, '"total_runs"')
    assert refused(interrupted, *command) == (
        f"{path}:{line}:{column + PAST_TOTAL}: invalid plan: its scenarios plan 5,000,000 runs,"
        f" more than the {MAX_BATCH_RUNS:,} a batch may run\n"
    )


def test_a_new_batch_of_more_runs_than_a_batch_may_run_is_refused_before_it_starts(tmp_path):
    from tests.cli.test_run import make_project

    project = make_project(tmp_path / "p")
    scenarios = project / "eval" / "scenarios"
    alpha = (scenarios / "alpha.yml").read_text()
    for i in range(MAX_BATCH_RUNS // 1000):  # with alpha and beta, two scenarios past the bound at --runs 1000
        (scenarios / f"copy{i}.yml").write_text(alpha)
    done = dialogcheck("run", str(project), "--runs", "1000", "--results", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"--runs:1:1: these {MAX_BATCH_RUNS // 1000 + 2} scenarios at 1,000 runs each plan {(MAX_BATCH_RUNS + 2000):,} runs,"
        f" more than the {MAX_BATCH_RUNS:,} a batch may run: give fewer --runs, or run the scenarios in several batches\n"
    )
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("slug", "s" * 2_000_000, "expected `str` of length <= 255"),
        ("path", "/" + "p" * 2_000_000, "expected `str` of length <= 4095"),
        ("sha256", "0" * 2_000_000, "expected `str` matching regex '^[0-9a-f]{64}$'"),
        ("personas", ["t" * 2_000_000], "expected `str` of length <= 32"),
    ],
)
@pytest.mark.parametrize("command", BOTH)
def test_a_huge_string_is_refused_without_quoting_it(interrupted, field, value, expected, command):  # noqa: F811 - `interrupted` is the fixture imported above
    edit(interrupted, lambda plan: plan["scenarios"][0].update({field: value}))
    message = refused(interrupted, *command)
    where = f"`scenarios[0].{field}`" if field != "personas" else "`scenarios[0].personas[0]`"
    assert message.endswith(f": invalid plan: {where}: {expected}\n") and len(message) < 1000


@pytest.mark.parametrize("command", BOTH)
def test_a_huge_unknown_field_is_named_in_short(interrupted, command):  # noqa: F811 - `interrupted` is the fixture imported above
    edit(interrupted, lambda plan: plan["scenarios"][0].update({"k" * 2_000_000: 1}))
    message = refused(interrupted, *command)
    assert "invalid plan: unknown field `kkkk" in message and "…` in `scenarios[0]`" in message and len(message) < 1000


@pytest.mark.parametrize("depth", [100, 5_000, 200_000])
@pytest.mark.parametrize("command", BOTH)
def test_deep_nesting_is_refused_at_a_place(interrupted, depth, command):  # noqa: F811 - `interrupted` is the fixture imported above
    path = interrupted / "plan.json"
    text = path.read_text()
    path.write_text(text.replace('"total_runs"', '"deep": ' + "[" * depth + "]" * depth + ',\n  "total_runs"', 1))
    message = refused(interrupted, *command)
    assert message.startswith(f"{path}:") and ("unknown field `deep`" in message or "not valid JSON" in message), message


def test_traits_the_scenario_does_not_declare_are_refused_by_resume(interrupted):  # noqa: F811 - `interrupted` is the fixture imported above
    path = edit(interrupted, lambda plan: plan["scenarios"][0].update(personas=["terse"]))  # one trait: the same count of runs
    line, column = position(path, '"personas"')
    scenario = interrupted.parent / "p" / "eval" / "scenarios" / "alpha.yml"
    before = untouched(interrupted)
    assert refused(interrupted, "run", "--resume") == (
        f"{path}:{line}:{column + PAST_PERSONAS}: invalid plan: `scenarios[0].personas` is ['terse'],"
        f" but scenario `alpha` ({scenario}) runs under no persona traits (its `personas`, or the batch's --persona)\n"
    )
    assert untouched(interrupted) == before


def test_traits_other_than_those_the_scenario_declares_are_refused_by_resume(interrupted):  # noqa: F811 - `interrupted` is the fixture imported above
    import hashlib

    scenario = interrupted.parent / "p" / "eval" / "scenarios" / "alpha.yml"
    scenario.write_text(scenario.read_text().replace("scenario:\n", "scenario:\n  personas: [terse, polite]\n", 1))
    assert "personas: [terse, polite]" in scenario.read_text()

    def other_traits(plan):
        plan["scenarios"][0] |= {"personas": ["terse", "impatient"], "sha256": hashlib.sha256(scenario.read_bytes()).hexdigest()}
        plan["total_runs"] += plan["scenarios"][0]["runs"]

    path = edit(interrupted, other_traits)
    line, column = position(path, '"personas"')
    assert refused(interrupted, "run", "--resume") == (
        f"{path}:{line}:{column + PAST_PERSONAS}: invalid plan: `scenarios[0].personas` is ['terse', 'impatient'],"
        f" but scenario `alpha` ({scenario}) runs under ['terse', 'polite'] (its `personas`, or the batch's --persona)\n"
    )


def special_file(tmp_path: Path, kind: str) -> str:
    if kind == "fifo":
        fifo = tmp_path / "fifo.yml"
        os.mkfifo(fifo)
        return str(fifo)
    if kind == "folder":
        folder = tmp_path / "folder.yml"
        folder.mkdir()
        return str(folder)
    return "/dev/zero"


@pytest.mark.parametrize("kind", ["devzero", "fifo", "folder"])
@pytest.mark.parametrize("field", ["scenario", "config"])
def test_a_path_in_the_plan_that_is_not_a_regular_file_is_refused_without_opening_it_for_long(interrupted, tmp_path, kind, field):  # noqa: F811 - `interrupted` is the fixture imported above
    target = special_file(tmp_path, kind)
    edit(interrupted, lambda plan: plan["scenarios"][0].update(path=target) if field == "scenario" else plan.update(config=target))
    what = {"devzero": "a character device", "fifo": "a named pipe", "folder": "a folder"}[kind]
    message = refused(interrupted, "run", "--resume")
    if field == "scenario":
        assert message == (
            f"{target}:1:1: scenario `alpha` of this batch cannot be read: not a regular file ({what});"
            " the batch cannot be finished without it\n"
        )
    else:
        assert message == f"{target}:1:1: the config of this batch cannot be read: not a regular file ({what})\n"
    assert dialogcheck("report", str(interrupted), cwd=interrupted.parent).returncode == 1  # report reads no scenario: its runs still show


@pytest.mark.parametrize("bad", ["/tmp/a\x00b.yml", "/" + "n" * 300 + ".yml"])
def test_a_path_no_system_call_takes_is_refused(interrupted, bad):  # noqa: F811 - `interrupted` is the fixture imported above
    edit(interrupted, lambda plan: plan["scenarios"][0].update(path=bad))
    message = refused(interrupted, "run", "--resume")
    assert "scenario `alpha` of this batch cannot be read" in message and "ValueError" not in message
