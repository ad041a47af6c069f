"""`dialogcheck check --jobs N`: worker processes give the bytes one process gives, errors where one process finds them.

Every run is the installed command in a real subprocess on real multi-MB
files (a few chunks of 1 MiB each, over the 2 MB below which one process
does all the work).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dialogcheck.engines import local
from dialogcheck.engines.chunks import CHUNK_BYTES
from dialogcheck.engines.work import CheckJob
from dialogcheck.events.model import Conversation
from dialogcheck.scenario.load import load_scenario
from tests.conftest import plain_env
from tests.engines.batches import (
    SCENARIO,
    batch_with,
    cut_short,
    example_events,
    tracker_lines,
    write_batch,
)
from tests.stats_helpers import per_check_stats, verdict_counts

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
COUNT = 1_200  # 3.8 MB: four chunks


def run(*args, **env) -> subprocess.CompletedProcess:
    return subprocess.run([str(DIALOGCHECK), "check", *map(str, args)], capture_output=True, env=plain_env(**env), timeout=120)


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    path = write_batch(tmp_path_factory.mktemp("jobs") / "batch.jsonl", COUNT)
    assert path.stat().st_size > 3 * CHUNK_BYTES
    return path


def line_numbers(path: Path) -> dict[int, int]:
    """Conversation index -> its line in the file (blank lines skipped), counted here independently."""
    numbers, index = {}, 0
    for lineno, line in enumerate(path.read_text().split("\n"), 1):
        if line.strip():
            numbers[index] = lineno
            index += 1
    return numbers


@pytest.mark.parametrize("output_format", ["text", "text-all", "json"])
def test_two_jobs_write_the_bytes_one_job_writes(batch, output_format):
    show = ("--show", "all") if output_format == "text-all" else ()
    output_format = output_format.removesuffix("-all")
    one = run("--jobs", "1", "--no-judge", "--format", output_format, *show, "--scenario", SCENARIO, batch)
    two = run("--jobs", "2", "--no-judge", "--format", output_format, *show, "--scenario", SCENARIO, batch)
    assert one.returncode == two.returncode == 1, two.stderr
    assert one.stderr == two.stderr == b""
    assert two.stdout == one.stdout
    if output_format == "json":
        document = json.loads(two.stdout)
        lines = line_numbers(batch)
        expected = [f"{batch}#{lines[i]}" if i % 7 == 0 else f"{batch}#c{i}" for i in range(COUNT)]
        assert [c["source"] for c in document["conversations"]] == expected  # complete, in input order
        assert verdict_counts(document["summary"]) == {"conversations": COUNT, "passed": 720, "failed": 480, "errored": 0}
        assert document["summary"]["checks"] == per_check_stats(document["conversations"])  # merged from the workers' chunks
    else:
        assert two.stdout.count(b"  verdict: ") == (COUNT if show else 20)  # every conversation, or the first 20 failing
        assert show or b"\n460 more failing or errored: see --format json, --output or --html\n" in two.stdout
        assert two.stdout.endswith(f"\n{COUNT:,} conversations: 720 passed, 480 failed, 0 errored\nwhose fault: 480 agent\n".encode())


class PidChunk:
    """A chunk whose conversations are named by the process that read them."""

    def __init__(self, n: int):
        self.n = n

    def read(self):
        yield Conversation.from_events([], f"chunk{self.n}@{os.getpid()}")


def test_chunks_are_checked_in_other_processes_and_come_back_in_order():
    job = CheckJob(load_scenario(SCENARIO), no_judge=True)
    items = list(local.results_in_order(job, [PidChunk(n) for n in range(12)], jobs=2))
    names = [item.source.split("@") for item in items]
    assert [name for name, _ in names] == [f"chunk{n}" for n in range(12)]
    pids = {int(pid) for _, pid in names}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def write_with(tmp_path: Path, name: str, bad: dict[int, str]) -> Path:
    return batch_with(tmp_path / name, COUNT, bad)


def test_bad_input_deep_in_the_file_stops_everything_at_the_same_place(tmp_path):
    """Small inputs are checked whole first: nothing judged is printed, the error names the first bad line."""
    path = write_with(tmp_path, "bad.jsonl", {1_000: cut_short(1_000), 1_100: "{}"})
    for output_format in ("text", "json"):
        one = run("--jobs", "1", "--no-judge", "--format", output_format, "--scenario", SCENARIO, path)
        two = run("--jobs", "2", "--no-judge", "--format", output_format, "--scenario", SCENARIO, path)
        assert one.returncode == two.returncode == 2
        assert (two.stdout, two.stderr) == (one.stdout, one.stderr)
        if output_format == "text":
            assert two.stdout == b""
            assert two.stderr.decode().startswith(f"{path}:1001:")
            assert "invalid JSON" in two.stderr.decode() and "Traceback" not in two.stderr.decode()
        else:
            error = json.loads(two.stdout)["error"]
            assert (error["file"], error["line"]) == (str(path), 1001)


def test_a_streamed_input_stops_at_its_first_bad_record_in_input_order(tmp_path):
    tracker = json.loads(tracker_lines(900)[899])
    first_user = next(i for i, e in enumerate(tracker["events"]) if e["event"] == "user")
    tracker["events"][first_user]["text"] = 7
    bad_line = json.dumps(tracker)
    column = bad_line.index('"text": 7') + 1
    path = write_with(tmp_path, "stream.jsonl", {899: bad_line, 1_150: cut_short(1_150)})
    one = run("--stream", "--jobs", "1", "--no-judge", "--show", "all", "--scenario", SCENARIO, path)
    two = run("--stream", "--jobs", "2", "--no-judge", "--show", "all", "--scenario", SCENARIO, path)
    assert one.returncode == two.returncode == 2
    assert two.stdout == one.stdout
    assert two.stdout.count(b"  verdict: ") == 899  # everything before the bad record, judged as it was read
    assert two.stderr == one.stderr == f"{path}:900:{column}: event {first_user}: field `text` must be a string or null, got a number\n".encode()


def test_junit_with_jobs_is_the_junit_of_one_job(batch, tmp_path):
    for jobs in ("1", "2"):
        done = run("--jobs", jobs, "--no-judge", "--format", "json", "--junit", tmp_path / f"junit{jobs}.xml", "--scenario", SCENARIO, batch)
        assert done.returncode == 1, done.stderr
    junit = (tmp_path / "junit2.xml").read_text()
    assert junit == (tmp_path / "junit1.xml").read_text()
    assert junit.count("<testcase ") == COUNT and f'tests="{COUNT}" failures="480"' in junit


def test_output_folder_holds_shards_and_the_summary(batch, tmp_path):
    out = tmp_path / "out"
    done = run("--jobs", "2", "--no-judge", "--format", "json", "--output", out, "--scenario", SCENARIO, batch)
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert verdict_counts(summary) == {"conversations": COUNT, "passed": 720, "failed": 480, "errored": 0}
    assert summary == json.loads((out / "summary.json").read_text())
    shards = sorted(out.glob("part-*.jsonl"))
    assert len(shards) == 4  # one a chunk, each written by the worker that checked it
    rows = [json.loads(line) for shard in shards for line in shard.read_text().splitlines()]
    printed = json.loads(run("--jobs", "1", "--no-judge", "--format", "json", "--scenario", SCENARIO, batch).stdout)
    assert summary["checks"] == printed["summary"]["checks"] == per_check_stats(rows)  # merged from the workers' shards
    assert rows == printed["conversations"]
    again = run("--no-judge", "--output", out, "--scenario", SCENARIO, batch)  # never over an earlier run
    assert again.returncode == 2 and b"the output folder is not empty" in again.stderr


@pytest.mark.parametrize("stream", [(), ("--stream",)])
def test_bad_input_leaves_no_shard(tmp_path, stream):
    path = write_with(tmp_path, "bad.jsonl", {800: cut_short(800)})  # the third of four chunks
    out = tmp_path / "out"
    done = run(*stream, "--jobs", "2", "--no-judge", "--output", out, "--scenario", SCENARIO, path)
    assert done.returncode == 2
    assert done.stderr.decode().startswith(f"{path}:801:")
    assert not out.exists() or list(out.iterdir()) == []  # no shard left, no summary



JUDGED = """
scenario:
  name: Judged
  simulation_context: You want a new card.
  goals:
    criteria: [The agent confirms before ordering]
    assertions:
      - bot_uttered: {text_matches: "(?i)order"}
"""


@pytest.fixture
def judge_server():
    from tests.llm.conftest import _serve, judge_says

    yield from _serve("/v1/chat/completions", judge_says("PASS", "it asked first"))


def test_llm_judged_checks_stay_in_this_process_under_one_limit(tmp_path, judge_server):
    """With a judge, --jobs 2 judges in this process: one client, one limit on calls in flight, the same output."""
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "conftest.yml").write_text(
        "evaluation:\n"
        f"  llm: {{provider: openai_compatible, base_url: '{judge_server.root}/v1', model: judge, max_retries: 1, timeout: 60}}\n"
        "  max_concurrent_llm_calls: 2\n"
    )
    scenario = tmp_path / "eval" / "judged.yml"
    scenario.write_text(JUDGED)
    long_events = [event for events in example_events() for event in events] * 6  # ~80 kB a conversation
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps({"sender_id": f"c{i}", "events": long_events}) + "\n" for i in range(30)))
    assert path.stat().st_size > 2 * 2**20
    env = {"NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    one = run("--no-cache", "--jobs", "1", "--format", "json", "--scenario", scenario, path, **env)
    two = run("--no-cache", "--jobs", "2", "--format", "json", "--scenario", scenario, path, **env)
    assert one.returncode == two.returncode == 0, two.stderr
    assert two.stdout == one.stdout
    document = json.loads(two.stdout)
    assert [c["criteria"][0]["outcome"] for c in document["conversations"]] == ["pass"] * 30
    assert judge_server.count == 60  # 30 conversations, twice
    assert judge_server.max_in_flight <= 2
