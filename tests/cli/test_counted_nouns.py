"""Counts in text output read as English and as numbers: `1 file` and `1,200 files`, never `1 files` or `1200`.

Every count goes through one helper (`dialogcheck._shown.counted`); these runs of the command (in process,
`tests/inprocess.py`) show it where a reader sees it, with one of a thing and with 1,200. JSON keeps plain numbers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dialogcheck._shown import counted
from tests import inprocess
from tests.conftest import plain_env
from tests.engines.batches import SCENARIO, write_batch

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"

ONE_OF_EACH = """scenario:
  name: One of each
  simulation_context: c
  goals:
    criteria: [The agent is polite]
    assertions:
      - tool_executed: {tool_name: order_replacement, source: local, times: 2}
"""


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], text=True, env=plain_env(), timeout=300, cwd=cwd)


def without(text: str, folder: Path) -> str:
    """`text` without the temporary folder's path, whose name may hold any digits."""
    return text.replace(str(folder), "TMP")


def test_counted_says_one_thing_and_many_things_with_a_separator():
    assert [counted(n, "file") for n in (0, 1, 2, 1_200)] == ["0 files", "1 file", "2 files", "1,200 files"]
    assert [counted(n, "criterion", "criteria") for n in (1, 20_000)] == ["1 criterion", "20,000 criteria"]


@pytest.mark.parametrize("count, line", [(1, "1 conversation: 0 passed, 1 failed, 0 errored"), (1_200, "1,200 conversations: 720 passed, 480 failed, 0 errored")])
def test_check_counts_conversations_and_shards(tmp_path, count, line):
    conversations = write_batch(tmp_path / "batch.jsonl", count)
    if count == 1:  # the first example passes the scenario: make it fail once, so a count of 1 shows in `failed` too
        conversations.write_text(conversations.read_text().replace("utter_confirm_replacement", "utter_other"))
    for extra in ([], ["--output", tmp_path / "out"]):
        done = run("check", "--no-judge", "--scenario", SCENARIO, conversations, *extra)
        assert done.returncode == 1, done.stderr
        printed = without(done.stdout, tmp_path)
        if count > 1 or extra:
            assert line in printed.splitlines()
        assert not re.search(r"\b\d{4,}\b", printed), printed  # every count of 1,000 or more has its separator
        assert not re.search(r"\b1 (conversations|shards|runs|times|files)\b", printed), printed
    assert (f"results: {counted(len(list((tmp_path / 'out').glob('part-*'))), 'shard')} in TMP/out") in without(done.stdout, tmp_path)
    if count > 1:  # one conversation's document is that conversation's, without a summary
        document = json.loads(run("check", "--no-judge", "--format", "json", "--scenario", SCENARIO, conversations).stdout)
        assert document["summary"]["conversations"] == count  # JSON stays a plain number


def test_a_tool_that_ran_once_ran_1_time(tmp_path):
    scenario = tmp_path / "one_of_each.yml"
    scenario.write_text(ONE_OF_EACH)
    conversations = write_batch(tmp_path / "batch.jsonl", 4)  # the fourth example orders once
    done = run("check", "--no-judge", "--show", "all", "--scenario", scenario, conversations)
    assert "ran 1 time, expected exactly 2" in done.stdout, done.stdout
    assert "ran 1 times" not in done.stdout


def test_validate_counts_one_file_one_assertion_one_criterion(tmp_path):
    scenario = tmp_path / "one_of_each.yml"
    scenario.write_text(ONE_OF_EACH)
    done = run("validate", scenario)
    assert done.returncode == 0, done.stderr
    assert "scenario 'One of each': 1 assertion, 1 criterion" in done.stdout
    assert "1 file, 1 valid, 0 with problems" in done.stdout


def test_validate_counts_1200_files_with_a_separator(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for i in range(1_200):
        (folder / f"s{i}.yml").write_text(ONE_OF_EACH.replace("One of each", f"Scenario {i}"))
    done = run("validate", folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1,200 files, 1,200 valid, 0 with problems"
