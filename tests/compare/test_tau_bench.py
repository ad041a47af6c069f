"""`compare` on tau-bench's recorded gpt-4o airline runs: repeats of one agent are noise, a planted regression is not.

tau-bench ran each of its 50 tasks four times (trials 0-3) with the same agent. Trials 0-1 against
trials 2-3, paired by task (`--match 'task-(\\d+)'`), must be `no significant change`. Then a
regression is planted in NEW: the expected write is removed from every passing run that has one
(13 of its 42 passing runs, about a third), so those runs fail. That must be `regressed`, and the
checks that flipped to a failure because of it must be the assertions about the removed writes.

Everything runs through the installed command, as docs/importers.md and docs/compare.md show it: `import --derive-scenarios`,
`check --pair`, `compare`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest

from dialogcheck import load_scenario
from tests.compare.test_cli import compare
from tests.compare.test_folders import dialogcheck
from tests.conftest import REPO

TRAJECTORIES = Path("shared", "data", "tau-bench", "historical_trajectories", "gpt-4o-airline.json")
#: The copy kept with the tests (MIT, beside its licence), else the shared original beside the repository.
COPY = REPO / "tests" / "importers" / "data" / "tau_bench_gpt-4o-airline.json"
DATA = COPY if COPY.exists() else next((up / TRAJECTORIES for up in REPO.parents if (up / TRAJECTORIES).exists()), None)
pytestmark = pytest.mark.skipif(DATA is None, reason=f"needs tau-bench's recorded runs at {TRAJECTORIES} beside the repository")
MATCH = r"task-(\d+)"


def _check(folder: Path, name: str) -> Path:
    done = dialogcheck("check", "--no-judge", "--scenario", folder / "scenarios", "--pair", MATCH, folder / f"{name}.jsonl", "--format", "json")
    assert done.returncode == 1, done.stderr
    (folder / f"{name}.json").write_text(done.stdout)
    return folder / f"{name}.json"


def expected_write(scenario_path: Path) -> tuple[int, object] | None:
    """The first assertion that an expected write ran with its arguments: (its index, the check)."""
    for index, check in enumerate(load_scenario(scenario_path).goals.assertions, 1):
        if check.key == "tool_executed" and check.arguments is not None:
            return index, check
    return None


@pytest.fixture(scope="module")
def tau(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("tau_compare")
    done = dialogcheck("import", "--from", "tau-bench", DATA, "-o", folder / "runs.jsonl", "--derive-scenarios", folder / "scenarios")
    assert done.returncode == 0, done.stderr
    lines = (folder / "runs.jsonl").read_bytes().splitlines()
    trial = re.compile(rb'"sender_id":"task-\d+-trial-(\d)"')
    for name, trials in (("base", (b"0", b"1")), ("new", (b"2", b"3"))):
        (folder / f"{name}.jsonl").write_bytes(b"".join(line + b"\n" for line in lines if trial.search(line).group(1) in trials))
    base, new = _check(folder, "base"), _check(folder, "new")
    planted = {}
    passing = {c["conversation_id"] for c in orjson.loads(new.read_bytes())["conversations"] if c["verdict"] == "pass"}
    kept = []
    for line in (folder / "new.jsonl").read_bytes().splitlines():
        conversation = orjson.loads(line)
        cid = conversation["sender_id"]
        task = cid.split("-")[1]
        write = expected_write(folder / "scenarios" / f"tau-bench-task-{task}.yml") if cid in passing else None
        if write is not None:
            index, check = write
            events = conversation["events"]
            conversation["events"] = [
                e for e in events if not (e["event"] == "tool_executed" and e["tool_name"] == check.tool_name and e.get("arguments") == dict(check.arguments))
            ]
            assert len(conversation["events"]) < len(events), cid
            planted[cid] = (f"tau-bench airline task {task}", index, check.tool_name)
        kept.append(orjson.dumps(conversation) + b"\n")
    (folder / "planted.jsonl").write_bytes(b"".join(kept))
    return {"base": base, "new": new, "planted": _check(folder, "planted"), "writes": planted, "passing": len(passing)}


def _json(*args) -> tuple[int, dict]:
    done = compare(*args, "--format", "json")
    return done.returncode, json.loads(done.stdout)


def test_trials_0_1_against_trials_2_3_is_no_significant_change(tau):
    code, result = _json(tau["base"], tau["new"], "--match", MATCH, "--fail-on", "regression")
    assert code == 0
    assert result["verdict"] == "no significant change" and result["p_value"] > 0.5
    assert result["test"] == "permutation"  # two trials a side at every task
    assert (result["base"]["keys"], result["new"]["keys"], len(result["keys"])) == (50, 50, 50)
    assert (result["base"]["pass_rate"], result["new"]["pass_rate"]) == (0.42, 0.42)  # dialogcheck's verdicts of trials 0-1 and 2-3
    assert result["interval"][0] < 0 < result["interval"][1]
    assert result["statuses"]["flaky"] > 10 and result["noisy"]  # repeats of one agent disagree at many tasks


def test_a_planted_regression_is_regressed_and_its_flips_point_at_the_broken_checks(tau):
    writes = tau["writes"]
    assert len(writes) == 13 and tau["passing"] == 42  # the expected write removed from 13 of the 42 passing runs
    code, result = _json(tau["base"], tau["planted"], "--match", MATCH, "--fail-on", "regression")
    assert code == 1
    assert result["verdict"] == "regressed" and result["p_value"] < 0.05
    assert result["new"]["pass_rate"] == pytest.approx(0.42 - 13 / 100)
    _, unplanted = _json(tau["base"], tau["new"], "--match", MATCH)

    def fell(document):
        return {(c["subject"], c["index"]): c["pass_to_fail"] for c in document["checks"] if c["pass_to_fail"]}

    before, after = fell(unplanted), fell(result)
    grew = {check for check, n in after.items() if n > before.get(check, 0)}
    assert len(grew) >= 8  # checks fall at more tasks than between the unchanged trials: only those the plant broke
    _only_about_the_removed_writes(result, grew, writes)


def _only_about_the_removed_writes(result: dict, flipped: set, writes: dict) -> None:
    labels = {(c["subject"], c["index"]): c["label"] for c in result["checks"]}
    for subject, index in flipped:
        tools = {tool for s, _, tool in writes.values() if s == subject}
        label = labels[(subject, index)]  # the write's arguments, or its count (`times N`)
        assert any(re.fullmatch(rf"tool_executed {tool} \(local\) (with arguments|times \d+)", label) for tool in tools), (subject, label)


def test_new_against_its_planted_self_flips_exactly_the_broken_checks(tau):
    """Paired by conversation id, one run a side: the 13 planted runs regressed, and only checks of the removed writes flipped."""
    writes = tau["writes"]
    code, result = _json(tau["new"], tau["planted"], "--fail-on", "regression")
    assert code == 1 and result["verdict"] == "regressed"
    assert result["test"] == "mcnemar" and result["p_value"] == pytest.approx(2 / 2**13)
    assert result["statuses"] == {"fixed": 0, "regressed": 13, "still failing": 58, "still passing": 29, "flaky": 0}
    assert {key["key"] for key in result["keys"] if key["status"] == "regressed"} == set(writes)
    assert all(c["fail_to_pass"] == 0 for c in result["checks"])
    flipped = {(c["subject"], c["index"]) for c in result["checks"]}
    assert {(subject, index) for subject, index, _ in writes.values()} <= flipped  # each removed write's own assertion
    _only_about_the_removed_writes(result, flipped, writes)  # and, beside it, only its tool's count
    keys = {key["key"]: key for key in result["keys"]}
    for cid, (_, index, tool) in writes.items():
        assert f"assertion {index} tool_executed {tool} (local) with arguments" in keys[cid]["broke"]


def test_the_text_output_of_the_planted_regression(tau):
    done = compare(tau["base"], tau["planted"], "--match", MATCH)
    assert done.returncode == 0
    assert "pass rate 42.0% -> 29.0%: -13.0 points" in done.stdout
    assert "paired permutation test on per-key pass rates: p = " in done.stdout
    assert "verdict: regressed (alpha 0.05)" in done.stdout
