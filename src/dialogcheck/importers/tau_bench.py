"""`tau-bench`: the historical trajectories of sierra-research/tau-bench.

A file is a JSON list (or JSONL) of runs: `task_id`, `trial`, `reward`,
`info` (with the task as recorded) and `traj`, OpenAI-style messages. The
messages are read as the `openai` format is, with the three facts of how
tau-bench's tool-calling agent ran them:

- only the first tool call of an assistant message was executed (the others
  are kept in that run's `metadata.calls_not_run`, never as runs);
- text sent in the same message as a tool call never reached the user, so it
  is no `bot` event (it is kept in the run's `metadata.unsent_text`);
- a failed tool shows only as a result text starting with "Error", so such a
  run has `is_error: true` and the text as its `error_message`.

Tool-call ids repeat inside some runs; a result is paired with the call of the
message it follows, so repeats do no harm. A conversation is named
`task-{task_id}-trial-{trial}`, and the benchmark's own `reward` is kept in
its first event's `metadata.reward`, so a verdict can be set beside the
score tau-bench gave. The system prompt (the policy) is left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..events.parse import json_type
from ._build import Draft, ImportedConversation, convert_items, expect
from ._records import Item, ItemProblem, file_items
from .openai_messages import Dialect, convert_messages

TAU_BENCH = Dialect(first_call_only=True, text_beside_calls_shown=False, error_prefix="Error")


def task_id_of(entry: dict[str, Any]) -> int | str | None:
    """The run's `task_id`: an integer or a plain string (it names conversations and derived scenario files), or None.

    An object, a list, a number with a fraction, or a string holding a control character (a NUL, a line
    break) is bad input at the id's place, never a name.
    """
    task_id = entry.get("task_id")
    if task_id is None or (isinstance(task_id, int) and not isinstance(task_id, bool)):
        return task_id
    if not isinstance(task_id, str):
        found = f"the number {task_id!r}" if isinstance(task_id, float) else json_type(task_id)
        raise ItemProblem(f"`task_id` must be an integer or a string, got {found}", ("task_id",))
    if not task_id.strip():
        raise ItemProblem("`task_id` must not be empty", ("task_id",))
    bad = next((char for char in task_id if ord(char) < 0x20 or ord(char) == 0x7F), None)
    if bad is not None:
        raise ItemProblem(f"`task_id` holds the control character {bad!r}: expected a plain name", ("task_id",))
    return task_id


def trajectory_id(entry: dict[str, Any], index: int) -> str:
    """`task-3-trial-1`, or the run's position in the file when the ids are missing."""
    task_id, trial = task_id_of(entry), entry.get("trial")
    if task_id is None:
        return f"run-{index + 1}"
    return f"task-{task_id}-trial-{trial}" if trial is not None else f"task-{task_id}"


def keep_reward(draft: Draft, reward: Any) -> Draft:
    """The benchmark's score of the run in its first event's `metadata.reward`, when it is a number (a missing,
    null or non-numeric reward is not made up)."""
    if isinstance(reward, (int, float)) and not isinstance(reward, bool) and draft.events:
        draft.events[0].setdefault("metadata", {})["reward"] = reward
    return draft


def _convert(item: Item) -> Iterator[Draft]:
    entry = expect(item.value, dict, "trajectory", ())
    traj = expect(entry.get("traj"), list, "traj", ("traj",))
    entries = ((message, item, ("traj", j)) for j, message in enumerate(traj))
    yield keep_reward(convert_messages(entries, trajectory_id(entry, item.index), TAU_BENCH).place_messages("traj"), entry.get("reward"))


def read(path: str | Path) -> Iterator[ImportedConversation]:
    """Every run of a tau-bench trajectory file, one conversation each, converted lazily."""
    return convert_items(file_items(path), _convert, str(path))
