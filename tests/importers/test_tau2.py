"""`tau2` simulation results: `messages` with tool calls by id, `error` flags, user-side tools, timestamps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogcheck.errors import LoadError
from dialogcheck.importers import import_file

# The shape of tau2-bench's `Results` (src/tau2/data_model/simulation.py), trimmed to what the importer reads.
RUN = {
    "id": "6f1c2a0e-sim-1",
    "task_id": "3",
    "trial": 0,
    "start_time": "2025-06-02T10:00:00.000000",
    "end_time": "2025-06-02T10:01:12.000000",
    "duration": 72.0,
    "termination_reason": "user_stop",
    "reward_info": {"reward": 1.0, "db_check": {"db_match": True, "db_reward": 1.0}, "reward_basis": ["DB"]},
    "messages": [
        {"role": "assistant", "content": "Hi! How can I help you today?", "turn_idx": 0, "timestamp": "2025-06-02T10:00:00.100000"},
        {"role": "user", "content": "My phone has no signal.", "turn_idx": 1, "timestamp": "2025-06-02T10:00:03.000000"},
        {"role": "assistant", "content": "Let me check your line.", "turn_idx": 2, "timestamp": "2025-06-02T10:00:05+00:00",
         "tool_calls": [{"id": "call_1", "name": "get_customer_by_phone", "arguments": {"phone_number": "555-0101"}, "requestor": "assistant"},
                        {"id": "call_2", "name": "get_line_details", "arguments": {"line_id": 4}, "requestor": "assistant"}]},
        {"role": "tool", "id": "call_2", "content": "{\"line_id\": 4, \"status\": \"suspended\"}", "requestor": "assistant", "error": False, "turn_idx": 3},
        {"role": "tool", "id": "call_1", "content": "Customer not found", "requestor": "assistant", "error": True, "turn_idx": 4},
        {"role": "assistant", "content": "Your line is suspended. Please toggle airplane mode.", "turn_idx": 5},
        {"role": "user", "content": None, "turn_idx": 6,
         "tool_calls": [{"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "tool_messages": [{"role": "tool", "id": "u1", "content": "Airplane mode: OFF", "requestor": "user", "error": False}]},
        {"role": "user", "content": "Thanks, it works. ###STOP###", "turn_idx": 8},
    ],
}
RESULTS = {
    "timestamp": "2025-06-02T10:02:00", "info": {"num_trials": 1, "max_steps": 100}, "tasks": [{"id": "3"}],
    "simulations": [RUN, {**RUN, "id": "sim-2", "trial": 1, "messages": RUN["messages"][:3]}],
}


def convert(tmp_path: Path, document, name: str = "results.json") -> list:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2))
    return list(import_file(path, "tau2"))


def test_a_results_file_gives_one_conversation_per_simulation(tmp_path):
    first, second = convert(tmp_path, RESULTS)
    assert first.conversation_id == "task-3-trial-0" and second.conversation_id == "task-3-trial-1"
    convo = first.conversation
    assert [e.type for e in convo.events] == ["bot", "user", "tool_executed", "tool_executed", "bot", "tool_executed", "user"]
    lookup, line, toggle = convo.tool_runs
    assert lookup.is_error and lookup.error_message == "Customer not found" and lookup.arguments == {"phone_number": "555-0101"}
    assert line.result == '{"line_id": 4, "status": "suspended"}' and not line.is_error
    assert line.arguments == {"line_id": 4}  # numbers stay numbers
    # Text sent with tool calls went to the environment, not to the user.
    assert lookup.metadata["unsent_text"] == "Let me check your line."
    assert "Let me check your line." not in [b.text for b in convo.bot_messages]
    assert toggle.metadata["requestor"] == "user" and toggle.result == "Airplane mode: OFF"


def test_the_benchmark_s_reward_is_kept_on_the_first_event_and_never_made_up(tmp_path):
    failed = {**RUN, "id": "sim-3", "trial": 2, "reward_info": {"reward": 0.0}}
    unscored = [{**RUN, "id": f"sim-{n}", "trial": 3 + n, "reward_info": info} for n, info in enumerate([None, {"reward": True}, {}])]
    scored, cut, *runs = convert(tmp_path, {**RESULTS, "simulations": [*RESULTS["simulations"], failed, *unscored]})
    assert scored.events[0]["metadata"]["reward"] == 1.0 and scored.events[0]["metadata"]["simulation_id"] == "6f1c2a0e-sim-1"
    assert cut.events[0]["metadata"]["reward"] == 1.0
    assert [run.events[0].get("metadata", {}).get("reward") for run in runs] == [0.0, None, None, None]


def test_timestamps_with_a_zone_become_event_times_the_others_stay_text(tmp_path):
    first, _ = convert(tmp_path, RESULTS)
    convo = first.conversation
    assert convo.events[0].timestamp is None and convo.events[0].metadata["recorded_at"] == "2025-06-02T10:00:00.100000"
    assert convo.tool_runs[0].timestamp == 1748858405.0


def test_a_cut_off_run_keeps_its_unanswered_calls(tmp_path):
    _, second = convert(tmp_path, RESULTS)
    runs = second.conversation.tool_runs
    assert [r.result for r in runs] == [None, None]
    assert all(r.metadata["result_missing"] for r in runs)


def test_a_single_run_and_jsonl_of_runs(tmp_path):
    (single,) = convert(tmp_path, RUN, "sim.json")
    assert single.conversation.source == str(tmp_path / "sim.json")
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(RUN) + "\n" + json.dumps({**RUN, "id": "b", "trial": 1}) + "\n")
    assert [c.conversation_id for c in import_file(path, "tau2")] == ["task-3-trial-0", "task-3-trial-1"]


def test_a_full_duplex_run_without_messages_is_refused(tmp_path):
    path = tmp_path / "voice.json"
    path.write_text(json.dumps({"simulations": [{"id": "v", "messages": None, "ticks": [{"tick_id": 0}]}]}, indent=2))
    with pytest.raises(LoadError) as info:
        list(import_file(path, "tau2"))
    assert str(info.value) == f"{path}:3:5: a full-duplex run stored as `ticks` only cannot be read: expected `messages`"


def test_a_bad_error_flag_points_at_it(tmp_path):
    run = {"id": "x", "messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "name": "f", "arguments": {}}]},
                                   {"role": "tool", "id": "c", "content": "ok", "error": "no"}]}
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(run, indent=2))
    with pytest.raises(LoadError) as info:
        list(import_file(path, "tau2"))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if '"error": "no"' in t)
    assert str(info.value) == f"{path}:{line}:16: `error` must be a boolean, got a string"


SAMPLE = Path(__file__).parent / "data" / "tau2_airline_sample.json"


def test_the_simulators_end_token_leaves_the_text_and_is_kept_as_metadata(tmp_path):
    first, second = convert(tmp_path, RESULTS)
    last = first.conversation.events[-1]
    assert last.type == "user" and last.text == "Thanks, it works." and last.metadata["end_token"] == "###STOP###"
    # A message without a token says nothing of one; the run's end reason is on its last event.
    assert "end_token" not in first.conversation.events[1].metadata
    assert last.metadata["termination_reason"] == "user_stop"
    assert second.conversation.events[-1].metadata["termination_reason"] == "user_stop"


def test_a_message_that_was_only_the_token_stays_as_an_empty_user_message(tmp_path):
    run = {**RUN, "termination_reason": "user_stop",
           "messages": [*RUN["messages"][:2], {"role": "assistant", "content": "Transferring you now."}, {"role": "user", "content": "  ###TRANSFER###\n"}]}
    (single,) = convert(tmp_path, run, "sim.json")
    events = single.conversation.events
    assert [(e.type, e.text) for e in events] == [("bot", "Hi! How can I help you today?"), ("user", "My phone has no signal."),
                                                 ("bot", "Transferring you now."), ("user", "")]
    assert events[-1].metadata == {"end_token": "###TRANSFER###", "source_index": 3, "termination_reason": "user_stop"}
    assert single.conversation.turn_count == 2  # the token opened no turn of its own


def test_real_runs_of_tau2_bench_keep_no_token_in_any_text():
    runs = list(import_file(SAMPLE, "tau2"))
    assert len(runs) == 3
    for run in runs:
        texts = [e.text for e in run.conversation.events if e.type in ("user", "bot")]
        assert not any("###" in text for text in texts), run.conversation_id
    ends = [run.conversation.events[-1].metadata.get("end_token") for run in runs]
    assert sorted(ends) == ["###STOP###", "###STOP###", "###TRANSFER###"]
    said_goodbye = next(run for run in runs if run.conversation.events[-1].text)
    assert said_goodbye.conversation.events[-1].text.endswith("Thanks for your help!")


def test_every_event_keeps_the_index_of_its_message(tmp_path):
    (single,) = convert(tmp_path, RUN, "sim.json")
    for event in single.conversation.events:
        message = RUN["messages"][event.metadata["source_index"]]
        if event.type == "tool_executed":  # placed at the message holding the call (a user's too), not at its result
            assert event.tool_name in [call["name"] for call in message["tool_calls"]]
        else:
            assert message["role"] == {"bot": "assistant", "user": "user"}[event.type]
