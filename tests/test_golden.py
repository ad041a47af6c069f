"""What `check` prints and what `run` writes stay the same bytes while the code under them changes.

The outputs were recorded once (`tests/data/golden/`) from the example project and the tau-bench
sample: `check` in JSON and text, against every scenario and the SOP, with and without `--no-judge`,
its `--output` shards, and the results folder of `run` with what changes from run to run (ids, times,
latencies, the folder's own path) put in a fixed form. A change that moves one byte of them fails
here; a change meant to move them records them again with `DIALOGCHECK_UPDATE_GOLDEN=1` and shows
the difference in its commit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE, REPO

GOLDEN = REPO / "tests" / "data" / "golden"
UPDATE = os.environ.get("DIALOGCHECK_UPDATE_GOLDEN") == "1"
SCENARIOS = sorted((EXAMPLE / "eval" / "scenarios").glob("*.yml"))
SOP = EXAMPLE / "sops" / "replace_card.yml"
CONVERSATIONS = EXAMPLE / "conversations"


def _matches_golden(name: str, produced: bytes) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(produced)
    assert path.is_file(), f"no golden output {path}: record it with DIALOGCHECK_UPDATE_GOLDEN=1"
    assert produced == path.read_bytes(), f"the output differs from {path}"


def _check(*args: str, cwd: Path = REPO) -> bytes:
    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)
    finally:
        os.chdir(here)
    assert result.exit_code in (0, 1, 3), result.output
    return result.stdout_bytes


@pytest.mark.parametrize("subject", [*SCENARIOS, SOP], ids=lambda p: p.stem)
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_check_prints_the_recorded_bytes(subject: Path, fmt: str) -> None:
    option = "--scenario" if subject != SOP else "--sop"
    produced = _check("--no-judge", "--format", fmt, option, str(subject.relative_to(REPO)), str(CONVERSATIONS.relative_to(REPO)))
    _matches_golden(f"check/{subject.stem}.{fmt}", produced)


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_check_without_a_judge_prints_the_recorded_bytes(fmt: str) -> None:
    scenario = EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"
    produced = _check("--format", fmt, "--scenario", str(scenario.relative_to(REPO)), str(CONVERSATIONS.relative_to(REPO)))
    _matches_golden(f"check/unjudged.{fmt}", produced)


def test_check_output_shards_are_the_recorded_bytes(tmp_path: Path) -> None:
    _check("--no-judge", "--sop", str(SOP), str(CONVERSATIONS), "--output", str(tmp_path / "out"), "--chunk-mb", "0.001")
    shards = sorted((tmp_path / "out").glob("part-*.jsonl"))
    produced = b"".join(shard.read_bytes() for shard in shards) + (tmp_path / "out" / "summary.json").read_bytes()
    _matches_golden("check/shards.jsonl", produced.replace(str(REPO).encode(), b"<repo>"))  # the summary's examples name files too


def test_tau_bench_runs_paired_with_their_tasks_print_the_recorded_bytes(tmp_path: Path) -> None:
    sample = REPO / "tests" / "importers" / "data" / "tau_bench_airline_sample.json"
    imported = CliRunner().invoke(
        cli, ["import", "--from", "tau-bench", str(sample), "-o", str(tmp_path / "runs.jsonl"), "--derive-scenarios", str(tmp_path / "scenarios")]
    )
    assert imported.exit_code == 0, imported.output
    for fmt in ("json", "text"):
        produced = _check("--no-judge", "--format", fmt, "--scenario", "scenarios", "--pair", r"task-(\d+)", "runs.jsonl", cwd=tmp_path)
        _matches_golden(f"check/tau_bench_paired.{fmt}", produced)


#: What differs from one run to the next, and the fixed form it is recorded in.
_VOLATILE = [
    (re.compile(rb'"sim-[0-9a-f-]{36}"'), b'"sim-<id>"'),
    (re.compile(rb'"(duration_s|timestamp)": [0-9.e+-]+'), rb'"\1": 0'),
    (re.compile(rb'"latency_s": \[[^\]]*\]'), b'"latency_s": []'),
    (re.compile(rb'"(started|updated)": "[^"]*"'), rb'"\1": "<time>"'),
    (re.compile(rb'"timestamp":[0-9.e+-]+'), b'"timestamp":0'),
    (re.compile(rb"sim-[0-9a-f-]{36}"), b"sim-<id>"),
    (re.compile(rb"\([0-9]+\.[0-9]+ s(;|\))"), rb"(<seconds> s\1"),
]


def _steady(data: bytes, root: Path) -> bytes:
    data = data.replace(str(root).encode(), b"<project>")
    for pattern, fixed in _VOLATILE:
        data = pattern.sub(fixed, data)
    return data


def test_run_writes_the_recorded_results(tmp_path: Path) -> None:
    project = tmp_path / "card_replace"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("results", "__pycache__"))
    results = tmp_path / "results"
    ran = CliRunner().invoke(cli, ["run", "--no-judge", str(project), "--results", str(results), "--format", "json"])
    assert ran.exit_code == 1, ran.output
    files = sorted(p for p in results.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".txt"))
    produced = b"".join(
        b"== " + p.relative_to(results).as_posix().encode() + b"\n" + _steady(p.read_bytes(), project) + b"\n" for p in files
    )
    _matches_golden("run/results.txt", _steady(produced, results))
    document = json.loads(ran.stdout)
    assert (document["passed"], document["failed"], document["errored"]) == (12, 2, 0)
