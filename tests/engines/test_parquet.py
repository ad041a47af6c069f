"""Parquet with one conversation a row, read by the local engine: the same verdicts as the same events in JSONL."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.engines.batches import SCENARIO, example_events


def check(*args) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", "--no-judge", "--scenario", str(SCENARIO), *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def without_source(document: dict) -> list[dict]:
    return [{k: v for k, v in c.items() if k != "source"} for c in document["conversations"]]


def write_parquet(path, columns: dict, row_group_size: int = 4):
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def test_events_as_json_strings_give_the_verdicts_of_the_jsonl(tmp_path):
    events = example_events() * 2  # ten conversations, three row groups
    ids = [f"c{i}" if i % 3 else None for i in range(10)]
    sources = ["named by the file" if i == 4 else None for i in range(10)]
    parquet = write_parquet(tmp_path / "batch.parquet", {"events": [json.dumps(e) for e in events], "id": ids, "source": sources, "extra": list(range(10))})
    jsonl = tmp_path / "batch.jsonl"
    jsonl.write_text("".join(json.dumps({"events": e, **({"sender_id": cid} if cid else {})}) + "\n" for e, cid in zip(events, ids)))

    code, out, err = check("--format", "json", parquet)
    assert code == 1, err
    document = json.loads(out)
    code, jsonl_out, _ = check("--format", "json", jsonl)
    assert without_source(document) == without_source(json.loads(jsonl_out))
    expected = [
        "named by the file" if i == 4 else f"{parquet}#{ids[i]}" if ids[i] else f"{parquet}#{i + 1}" for i in range(10)
    ]
    assert [c["source"] for c in document["conversations"]] == expected
    assert [c.get("conversation_id") for c in document["conversations"]] == ids


def struct_events(i: int) -> list[dict]:
    """Odd rows pass the scenario; even ones never order. Fields an event lacks are null, as Arrow stores them."""
    def event(kind, text=None, **fields):
        return {"event": kind, "text": text, "metadata": None, "data": None, "tool_name": None, "source": None, "is_error": None, "arguments": None, **fields}

    buttons = [{"title": "Yes, order it", "payload": "/affirm"}, {"title": "No", "payload": "/deny"}]
    events = [
        event("user", "My card is damaged"),
        event("bot", "Shall I order a replacement?", metadata={"utter_action": "utter_confirm_replacement"}, data={"buttons": buttons}),
        event("user", "Yes please"),
        event("tool_executed", tool_name="order_replacement", source="local", is_error=False, arguments={"reason": "damaged"}),
        event("bot", "Your new card has been ordered."),
    ]
    return events if i % 2 else events[:3] + events[4:]


def test_events_as_a_list_of_structs_read_nulls_as_absent(tmp_path):
    rows = [struct_events(i) for i in range(6)]
    parquet = write_parquet(tmp_path / "structs.parquet", {"events": rows}, row_group_size=5)
    assert pa.types.is_struct(pq.read_schema(parquet).field("events").type.value_type)
    absent = [[{k: v for k, v in e.items() if v is not None} for e in events] for events in rows]
    as_json = write_parquet(tmp_path / "json.parquet", {"events": [json.dumps(e) for e in absent]})
    code, out, err = check("--format", "json", parquet)
    assert code == 1, err
    _, json_out, _ = check("--format", "json", as_json)
    assert without_source(json.loads(out)) == without_source(json.loads(json_out))
    assert [c["verdict"] for c in json.loads(out)["conversations"]] == ["fail", "pass"] * 3


def test_a_bad_row_is_named_by_its_row(tmp_path):
    events = [json.dumps(e) for e in example_events()] * 2
    events[6] = events[6][:-30]
    parquet = write_parquet(tmp_path / "bad.parquet", {"events": events})
    code, out, err = check(parquet)
    assert (code, out) == (2, "")
    assert err.startswith(f"{parquet}:7:1: row 7: `events` is not valid JSON: ")

    rows = [struct_events(i) for i in range(3)]
    rows[2][1]["text"] = None
    rows[2][1]["event"] = None
    parquet = write_parquet(tmp_path / "bad_struct.parquet", {"events": rows})
    code, _, err = check(parquet)
    assert code == 2
    assert err == f"{parquet}:3:1: row 3: event 1: field `event` is missing: every event names its type\n"


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"conversation": ["[]"]}, "a Parquet file of conversations needs an `events` column; it has conversation"),
        ({"events": [1]}, "column `events` must be a JSON string or a list of structs, got int64"),
        ({"events": ["[]"], "id": [3]}, "column `id` must be a string, got int64"),
        ({"events": ["[]"]}, "row 1: `events` is empty: a conversation without events cannot be judged (expected at least one event object)"),
    ],
)
def test_a_file_without_the_columns_is_bad_input(tmp_path, columns, message):
    parquet = write_parquet(tmp_path / "odd.parquet", columns)
    code, _, err = check(parquet)
    assert code == 2
    assert err == f"{parquet}:1:1: {message}\n"


def test_not_a_parquet_file(tmp_path):
    fake = tmp_path / "fake.parquet"
    fake.write_text("hello")
    code, _, err = check(fake)
    assert code == 2 and err.startswith(f"{fake}:1:1: not a Parquet file of conversations")
