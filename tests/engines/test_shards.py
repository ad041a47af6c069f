"""Result shards: written in input order, a shard every N conversations, removed whole when the input turns out bad."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from dialogcheck.checks.base import Outcome
from dialogcheck.engines.shards import ShardWriter, shard_bytes
from dialogcheck.engines.work import Checked


def item(i: int) -> Checked:
    verdict = Outcome.PASS if i % 2 else Outcome.FAIL
    return Checked(json.dumps({"source": f"f#{i}", "verdict": verdict.value}), verdict, False, f"f#{i}", f"c{i}" if i % 3 else None)


def test_a_shard_every_n_conversations_in_order_and_all_removed(tmp_path):
    writer = ShardWriter(str(tmp_path / "out"), "jsonl", per_shard=2)
    for i in range(5):
        writer.add(item(i))
    writer.flush()
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    rows = [json.loads(line) for name in names for line in (tmp_path / "out" / name).read_text().splitlines()]
    assert [row["source"] for row in rows] == [f"f#{i}" for i in range(5)]
    writer.remove_all()
    assert list((tmp_path / "out").iterdir()) == []


def test_parquet_shards_hold_the_json_of_each_result(tmp_path):
    path = tmp_path / "part.parquet"
    path.write_bytes(shard_bytes([item(i) for i in range(4)], "parquet"))
    table = pq.read_table(path)
    assert table.column_names == ["source", "conversation_id", "verdict", "result"]
    assert table.column("conversation_id").to_pylist() == [None, "c1", "c2", None]
    assert table.column("verdict").to_pylist() == ["fail", "pass", "fail", "pass"]
    assert [json.loads(r)["source"] for r in table.column("result").to_pylist()] == ["f#0", "f#1", "f#2", "f#3"]
