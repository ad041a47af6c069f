"""Result shards: one a chunk, written by whoever checked it, in input order; removed whole when the input is bad."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache

import pyarrow.parquet as pq

from dialogcheck import check_conversations
from dialogcheck.checks.base import Outcome
from dialogcheck.engines.shards import remove_shards, shard_bytes, write_shard
from dialogcheck.results.model import ConversationResult
from tests.conftest import EXAMPLE


@cache
def judged(verdict: Outcome) -> ConversationResult:
    """A result of the example's SOP with this verdict."""
    results = check_conversations(EXAMPLE / "sops" / "replace_card.yml", EXAMPLE / "conversations", no_judge=True)
    return next(r for r in results if r.verdict is verdict)


def item(i: int) -> ConversationResult:
    result = judged(Outcome.PASS if i % 2 else Outcome.FAIL)
    return replace(result, source=f"f#{i}", conversation_id=f"c{i}" if i % 3 else None)


def test_shards_sort_in_input_order_and_are_removed_whole(tmp_path):
    out = tmp_path / "out"
    for index in (2, 0, 1):  # written as workers finish, in any order
        write_shard(str(out), "jsonl", index, [item(2 * index), item(2 * index + 1)])
    assert write_shard(str(out), "jsonl", 3, []) is None  # no conversations, no shard
    (out / "summary.json").write_text("{}")
    names = sorted(p.name for p in out.glob("part-*"))
    assert names == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    rows = [json.loads(line) for name in names for line in (out / name).read_text().splitlines()]
    assert [row["source"] for row in rows] == [f"f#{i}" for i in range(6)]
    remove_shards(str(out), "jsonl")
    assert [p.name for p in out.iterdir()] == ["summary.json"]


def test_parquet_shards_hold_the_json_of_each_result(tmp_path):
    path = tmp_path / "part.parquet"
    path.write_bytes(shard_bytes([item(i) for i in range(4)], "parquet"))
    table = pq.read_table(path)
    assert table.column_names == ["source", "conversation_id", "verdict", "result"]
    assert table.column("conversation_id").to_pylist() == [None, "c1", "c2", None]
    assert table.column("verdict").to_pylist() == ["fail", "pass", "fail", "pass"]
    assert [json.loads(r)["source"] for r in table.column("result").to_pylist()] == ["f#0", "f#1", "f#2", "f#3"]
