"""`tau-bench` trajectories: first call only, text beside a call unsent, "Error" results, repeated ids, positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogcheck.errors import LoadError
from dialogcheck.importers import import_file

DATA = Path(__file__).parent / "data"


def runs(path: Path) -> list:
    return list(import_file(path, "tau-bench"))


def test_quirks_of_the_tool_calling_agent():
    first, _ = runs(DATA / "tau_bench_quirks.json")
    convo = first.conversation
    assert convo.conversation_id == "task-7-trial-0"
    assert convo.source == f"{DATA / 'tau_bench_quirks.json'}#task-7-trial-0"
    assert [e.type for e in convo.events] == ["user", "tool_executed", "tool_executed", "tool_executed", "bot", "user"]
    lookup, failed, cancelled = convo.tool_runs
    # Only the first call of a message ran; the text sent beside it never reached the user.
    assert lookup.tool_name == "get_user_details" and lookup.arguments == {"user_id": "ana_lee_1"}
    assert lookup.metadata["unsent_text"] == "Let me look up your profile first."
    assert lookup.metadata["calls_not_run"] == [{"tool_name": "get_reservation_details", "arguments": {"reservation_id": "ABC123"}}]
    assert not any(m.text.startswith("Let me look up") for m in convo.bot_messages)
    # The id `call_A` repeats three times: each result goes to the call of the message it follows.
    assert lookup.result.startswith('{"name"') and not lookup.is_error
    assert failed.arguments == {"reservation_id": "ABC12"}
    assert failed.is_error and failed.error_message == "Error: reservation not found"
    assert cancelled.arguments == {"reservation_id": "ABC123"} and not cancelled.is_error
    assert all(run.source == "local" for run in convo.tool_runs)
    assert convo.events[-1].text == "###STOP###"


def test_the_benchmark_s_reward_is_kept_on_the_first_event():
    raw = json.loads((DATA / "tau_bench_airline_sample.json").read_text())
    rewards = [run.events[0]["metadata"]["reward"] for run in runs(DATA / "tau_bench_airline_sample.json")]
    assert rewards == [run["reward"] for run in raw] and set(rewards) == {0.0, 1.0}


def test_a_run_cut_off_keeps_what_happened():
    _, cut = runs(DATA / "tau_bench_quirks.json")
    assert cut.conversation_id == "task-7-trial-1"
    assert [e.type for e in cut.conversation.events] == ["user", "tool_executed"]
    assert cut.events[-1]["result"] == '{"reservation_id": "ABC123", "status": "cancelled"}'


def test_real_runs_convert_and_read_back_natively(tmp_path):
    converted = runs(DATA / "tau_bench_airline_sample.json")
    assert [c.conversation_id for c in converted] == ["task-1-trial-0", "task-44-trial-0", "task-1-trial-1", "task-44-trial-1"]
    raw = json.loads((DATA / "tau_bench_airline_sample.json").read_text())
    for run, imported in zip(raw, converted):
        calls = sum(1 for m in run["traj"] if m.get("tool_calls"))
        assert len(imported.conversation.tool_runs) == calls
        said = [m["content"] for m in run["traj"] if m["role"] == "assistant" and not m.get("tool_calls")]
        assert [b.text for b in imported.conversation.bot_messages] == said
    from dialogcheck.events.load import iter_conversation_file

    out = tmp_path / "native.jsonl"
    out.write_text("".join(json.dumps(c.tracker()) + "\n" for c in converted))
    again = list(iter_conversation_file(out))
    assert [len(c) for c in again] == [len(c.conversation) for c in converted]


def _write(tmp_path: Path, runs_: list) -> Path:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs_, indent=2) + "\n")
    return path


def _run(*messages: dict) -> dict:
    return {"task_id": 0, "trial": 0, "reward": 0.0, "info": {}, "traj": list(messages)}


def test_arguments_that_are_not_json_point_at_the_string(tmp_path):
    bad = {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "think", "arguments": "{oops"}}]}
    path = _write(tmp_path, [_run({"role": "user", "content": "hi"}, bad)])
    with pytest.raises(LoadError) as info:
        runs(path)
    text = path.read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if '"arguments": "{oops"' in t)
    column = text[line - 1].index('"{oops"') + 1
    assert str(info.value).startswith(f"{path}:{line}:{column}: `function.arguments` is not valid JSON")


def test_a_result_without_a_call_is_bad_input(tmp_path):
    path = _write(tmp_path, [_run({"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "ok"})])
    with pytest.raises(LoadError) as info:
        runs(path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if '"role": "tool"' in t) - 1
    assert str(info.value) == f"{path}:{line}:7: this tool result answers no tool call: no call is waiting for a result here"


def test_every_bad_run_of_a_file_is_reported_together(tmp_path):
    path = _write(tmp_path, [_run({"role": "robot", "content": "x"}), _run({"role": "user", "content": 5})])
    with pytest.raises(LoadError) as info:
        runs(path)
    messages = [p.message for p in info.value.problems]
    assert messages == [
        "unknown role 'robot': expected system, developer, user, assistant or tool",
        "`content` must be a string, a list of parts or null, got a number",
    ]


def test_broken_json_is_reported_at_its_place(tmp_path):
    path = tmp_path / "runs.json"
    path.write_text('[\n  {"task_id": 0, "traj": [}\n]\n')
    with pytest.raises(LoadError) as info:
        runs(path)
    assert str(info.value) == f"{path}:2:27: invalid JSON: Expecting value"


def test_every_event_keeps_the_index_of_its_message_in_traj():
    first, _ = runs(DATA / "tau_bench_quirks.json")
    traj = json.loads((DATA / "tau_bench_quirks.json").read_text())[0]["traj"]
    places = [e.metadata["source_index"] for e in first.conversation.events]
    assert places == sorted(places) and all(0 <= i < len(traj) for i in places)
    for event, i in zip(first.conversation.events, places):
        role = {"user": "user", "bot": "assistant", "tool_executed": "assistant"}[event.type]
        assert traj[i]["role"] == role  # a call is placed at the message holding it, not at its result
