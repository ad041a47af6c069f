"""`dialogcheck check --engine ray` on a real local Ray instance: the local engine's results, shard for shard.

One Ray instance is started for the test session (2 CPUs, on loopback) and
each test runs the installed command in a subprocess that joins it with
`--ray-address`. Deselect with `-m "not ray"`.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import plain_env
from tests.engines.batches import SCENARIO, example_events, tracker_lines, write_batch
from tests.engines.test_parquet import struct_events
from tests.stats_helpers import verdict_counts

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"


def run(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(DIALOGCHECK), "check", *map(str, args)], capture_output=True, text=True, env=plain_env("RAY_ADDRESS", **(env or {})), timeout=300)


@pytest.fixture(scope="session")
def ray_address():
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # the instance listens on 127.0.0.1 only
    import ray

    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    try:
        yield context.address_info["gcs_address"]
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("ray")
    batch = write_batch(folder / "batch.jsonl", 300)  # about 1 MB: ten chunks of 0.1 MiB
    events = example_events() * 3
    as_json = folder / "json.parquet"
    ids = [f"p{i}" if i % 2 else None for i in range(len(events))]
    pq.write_table(pa.table({"events": [json.dumps(e) for e in events], "id": ids}), as_json, row_group_size=4)
    structs = folder / "structs.parquet"
    pq.write_table(pa.table({"events": [struct_events(i) for i in range(7)]}), structs, row_group_size=3)
    return [batch, as_json, structs]


def shard_rows(folder: Path) -> list[dict]:
    rows = []
    for shard in sorted(folder.glob("part-*")):
        if shard.suffix == ".jsonl":
            rows += [json.loads(line) for line in shard.read_text().splitlines()]
        else:
            rows += [json.loads(value) for value in pq.read_table(shard).column("result").to_pylist()]
    return rows


@pytest.mark.ray
def test_ray_gives_the_results_of_the_local_engine(ray_address, inputs, tmp_path):
    common = ("--no-judge", "--format", "json", "--chunk-mb", "0.1", "--scenario", SCENARIO, *inputs)
    local = run("--output", tmp_path / "local", *common)
    on_ray = run("--engine", "ray", "--ray-address", ray_address, "--output", tmp_path / "ray", "--output-format", "parquet", *common)
    assert local.returncode == on_ray.returncode == 1, on_ray.stderr
    assert on_ray.stderr == ""  # no Ray log lines either
    summary = json.loads(local.stdout)
    assert verdict_counts(summary) == {"conversations": 322, "passed": 192, "failed": 130, "errored": 0}
    assert json.loads(on_ray.stdout) == summary == json.loads((tmp_path / "ray" / "summary.json").read_text())
    ray_rows = shard_rows(tmp_path / "ray")
    assert len(list((tmp_path / "ray").glob("part-*.parquet"))) > 10  # a shard per chunk
    assert ray_rows == shard_rows(tmp_path / "local")  # every result, in input order
    sources = [row["source"] for row in ray_rows]
    assert sources[:2] == [f"{inputs[0]}#1", f"{inputs[0]}#c1"] and sources[300:302] == [f"{inputs[1]}#1", f"{inputs[1]}#p1"]


@pytest.mark.ray
def test_a_bad_record_under_ray_names_its_line_and_leaves_nothing(ray_address, tmp_path):
    lines = tracker_lines(300)
    lines[250] = lines[250][:-20]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    uri = bad.resolve().as_uri()  # read through the object-store layer
    out = tmp_path / "out"
    done = run("--engine", "ray", "--ray-address", ray_address, "--output", out, "--chunk-mb", "0.1", "--no-judge", "--scenario", SCENARIO, uri)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"{uri}:251:") and "invalid JSON" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert not out.exists() or list(out.iterdir()) == []  # no shard left, no summary


def _judged(results) -> list[tuple]:
    return [(r.source, r.conversation_id, r.verdict, r.outcomes) for r in results]


@pytest.mark.ray
def test_every_engine_gives_the_same_typed_results_in_input_order(ray_address, inputs):
    """The run object the CLI, the API and the MCP server consume: in this process, in worker processes and on Ray."""
    from dialogcheck.checking import CheckRun
    from dialogcheck.scenario.load import load_scenario

    scenario = load_scenario(SCENARIO)

    def results(**how) -> list[tuple]:
        run = CheckRun(scenario, inputs, no_judge=True, chunk_bytes=100_000, **how)
        found = _judged(run.results())
        assert run.tally.counts.total == len(found)
        return found

    alone = results(jobs=1)
    assert len(alone) == 322 and alone[0][0] == f"{inputs[0]}#1" and alone[300][0] == f"{inputs[1]}#1"
    assert results(jobs=2) == alone
    assert results(engine="ray", ray_address=ray_address) == alone


@pytest.mark.ray
def test_check_conversations_on_ray_gives_what_the_local_engine_gives(ray_address, inputs, tmp_path):
    from dialogcheck import LoadError, check_conversations

    local = _judged(check_conversations(SCENARIO, inputs, no_judge=True))
    assert _judged(check_conversations(SCENARIO, inputs, no_judge=True, engine="ray")) == local
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "user", "text": "hi"}\n{"event": \n')
    with pytest.raises(LoadError) as info:
        list(check_conversations(SCENARIO, [bad], engine="ray"))
    assert (info.value.problems[0].file, info.value.problems[0].line) == (str(bad), 2)
    with pytest.raises(ValueError, match="engine='ray' reads files"):
        list(check_conversations(SCENARIO, [[{"event": "user", "text": "hi"}]], engine="ray"))
