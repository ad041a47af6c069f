"""Loading stays streaming: a JSONL of many conversations is converted one conversation at a time."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from dialogcheck.importers import import_file

MESSAGES = [
    {"role": "user", "content": "Where is my order? " * 20},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": json.dumps({"order_id": 7})}}]},
    {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"status": "shipped", "items": list(range(50))})},
    {"role": "assistant", "content": "It has shipped. " * 20},
]
LINES = {
    "openai": lambda n: {"id": f"conv-{n}", "messages": MESSAGES * 5},
    "tau-bench": lambda n: {"task_id": n, "trial": 0, "reward": 1.0, "info": {}, "traj": MESSAGES * 5},
    "tau2": lambda n: {"id": f"sim-{n}", "messages": [
        {"role": "user", "content": "hi " * 50},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "name": "get_order", "arguments": {"order_id": n}}]},
        {"role": "tool", "id": "a", "content": "shipped " * 50, "error": False},
    ] * 5},
}


def _peak(path: Path, fmt: str) -> tuple[int, int]:
    tracemalloc.start()
    try:
        return sum(1 for _ in import_file(path, fmt)), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", sorted(LINES))
def test_peak_memory_does_not_grow_with_the_number_of_conversations(tmp_path, fmt):
    peaks = []
    for count in (30, 150):
        path = tmp_path / f"{fmt}-{count}.jsonl"
        path.write_text("".join(json.dumps(LINES[fmt](n)) + "\n" for n in range(count)))
        read, peak = _peak(path, fmt)
        assert read == count
        peaks.append(peak)
    assert peaks[1] < peaks[0] * 1.5, peaks


def test_conversations_come_out_before_the_file_is_read_to_the_end(tmp_path):
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(LINES["openai"](n)) + "\n" for n in range(3)) + "{broken\n")
    conversations = import_file(path, "openai")
    assert next(conversations).conversation_id == "conv-0"
    assert next(conversations).conversation_id == "conv-1"
