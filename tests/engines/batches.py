"""Batch files for the engine tests: the example project's conversations as tracker lines, some with no id."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import EXAMPLE

CONVERSATIONS = EXAMPLE / "conversations"
SCENARIO = EXAMPLE / "eval" / "scenarios" / "card_replace_confirms_first.yml"
SOURCES = ("damaged_card_digression", "damaged_card_express", "damaged_card_no_confirmation", "damaged_card_ok", "lost_card_cancelled")


def example_events() -> list[list[dict]]:
    return [[json.loads(line) for line in (CONVERSATIONS / f"{name}.jsonl").read_text().splitlines() if line.strip()] for name in SOURCES]


def tracker_lines(count: int) -> list[str]:
    """`count` tracker lines cycling through the examples; every seventh has no id (named by its line)."""
    events = example_events()
    lines = []
    for i in range(count):
        tracker = {"events": events[i % len(events)]}
        if i % 7:
            tracker = {"sender_id": f"c{i}", **tracker}
        lines.append(json.dumps(tracker))
    return lines


def write_batch(path: Path, count: int, *, blank_every: int = 50) -> Path:
    """A JSONL of `count` conversations with a blank line now and then (blank lines are skipped, but counted)."""
    out = []
    for i, line in enumerate(tracker_lines(count)):
        out.append(line)
        if blank_every and i % blank_every == blank_every - 1:
            out.append("")
    path.write_text("\n".join(out) + "\n")
    return path


def batch_with(path: Path, count: int, bad: dict[int, str]) -> Path:
    """`count` tracker lines at `path`, the line at each index of `bad` replaced by its text."""
    lines = tracker_lines(count)
    for index, text in bad.items():
        lines[index] = text
    path.write_text("\n".join(lines) + "\n")
    return path


def cut_short(index: int) -> str:
    """Tracker line `index`, its end cut off (invalid JSON)."""
    return tracker_lines(index + 1)[index][:-25]
