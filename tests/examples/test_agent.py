"""The bundled example agent (`examples/card_replace/agent.py`) against its scripted scenarios.

Each script is driven through `respond` directly and the turns are recorded
the way the runner records them: per turn a `user` event, the events the
agent returned, then one `bot` event per message.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

import pytest

from dialogcheck import Outcome, evaluate, load_scenario
from dialogcheck.events.parse import conversation_from_dicts
from tests.conftest import EXAMPLE

SCENARIOS = EXAMPLE / "eval" / "scenarios"

#: The scenarios written for the bundled agent, and the verdict each is meant to reach.
BUNDLED = {
    "run_cancel": Outcome.PASS,
    "run_damaged_card": Outcome.PASS,
    "run_digression": Outcome.PASS,
    "run_out_of_scope": Outcome.PASS,
    "run_stolen_card": Outcome.FAIL,
    "run_transfer_limit": Outcome.PASS,
}
#: The bundled scenarios whose agent's tools act on the example's environment (eval/environments/bank.yml): run
#: as `run` runs them, with their own state and faults.
WITH_ENVIRONMENT = {
    "run_order_placed": Outcome.PASS,
    "run_order_timeout": Outcome.FAIL,
}
#: The scripted scenarios written for the recorded conversations, which the agent also satisfies.
RECORDED_SCRIPTED = ("card_replace_cancel", "card_replace_confirms_first", "card_replace_digression")


def _load_agent():
    spec = importlib.util.spec_from_file_location("card_replace_agent", EXAMPLE / "agent.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


agent = _load_agent()


def record(turns: list[tuple[str | None, dict]]) -> list[dict]:
    """The runner's record of a conversation: user event, the turn's events, one bot event per message."""
    events: list[dict] = []
    for text, answer in turns:
        if text is not None:
            events.append({"event": "user", "text": text})
        events.extend(answer["events"])
        for message in answer["messages"]:
            bot = {"event": "bot", "text": message["text"]}
            if "utter_name" in message:
                bot["metadata"] = {"utter_action": message["utter_name"]}
            if "buttons" in message:
                bot["data"] = {"buttons": message["buttons"]}
            events.append(bot)
    return events


def talk(conversation_id: str, script, initial_slots=None) -> list[tuple[str | None, dict]]:
    turns = [(None, agent.respond(conversation_id, None, initial_slots))]
    turns += [(text, agent.respond(conversation_id, text)) for text in script]
    return turns


def run_scenario(path: Path, conversation_id: str | None = None):
    scenario = load_scenario(path)
    turns = talk(conversation_id or f"test-{scenario.slug}", scenario.script, dict(scenario.initial_slots) or None)
    conversation = conversation_from_dicts(record(turns), source=str(path))
    return evaluate(scenario, conversation, no_judge=True), turns


def failures(result) -> list[str]:
    """Every check that did not pass, with its detail (for an assertion message)."""
    found = [f"{r.check.key}: {r.detail}" for r in result.assertions if r.outcome is not Outcome.PASS]
    if result.sop is not None:
        found += [f"sop {r.id}: {r.detail}" for r in result.sop.results if r.outcome not in (Outcome.PASS, Outcome.SKIP)]
    return found


def names(turns) -> list[str]:
    """A compact trace: every event as `type:label` (a tool's name, a memory key, else the step), then the bots."""
    trace = []
    for _, answer in turns:
        for event in answer["events"]:
            label = event.get("tool_name") or event.get("key") or event.get("step_id") or event.get("block_id")
            trace.append(f"{event['event']}:{label or event.get('skill_id')}")
        trace += [f"bot:{m.get('utter_name')}" for m in answer["messages"]]
    return trace


# --- the scenarios ---------------------------------------------------------------


def test_every_bundled_scenario_is_listed():
    assert sorted(p.stem for p in SCENARIOS.glob("run_*.yml")) == sorted([*BUNDLED, *WITH_ENVIRONMENT])


def run_with_environment(tmp_path: Path, slug: str):
    from dialogcheck import run_scenarios

    batch = run_scenarios(SCENARIOS / f"{slug}.yml", results=tmp_path / "out", no_judge=True)
    (run,) = batch.runs
    return run


@pytest.mark.parametrize("slug", sorted(WITH_ENVIRONMENT))
def test_bundled_scenario_with_the_environment_verdict(tmp_path, slug):
    run = run_with_environment(tmp_path, slug)
    assert run.verdict is WITH_ENVIRONMENT[slug], [(line.title, line.detail) for line in run.checks()]
    assert run.environment is not None and run.environment.name == "bank"


def test_the_order_that_timed_out_is_claimed_and_the_end_state_catches_it(tmp_path):
    run = run_with_environment(tmp_path, "run_order_timeout")
    outcomes = [(line.check.key, line.outcome) for line in run.checks()]
    assert outcomes == [("bot_uttered", Outcome.PASS), ("state_equals", Outcome.FAIL)]  # it says ordered; nothing was
    assert [(fault.kind, fault.tool) for fault in run.environment.faults] == [("timeout", "order_replacement")]
    [order] = [e for e in run.record.tool_runs if e.tool_name == "order_replacement"]
    assert order.is_error and order.metadata["fault"]["kind"] == "timeout"  # what it received, logged by the agent too
    assert run.environment.final_state["orders"] == {} and run.environment.unanswered == () == run.environment.unreported


@pytest.mark.parametrize("slug", sorted(BUNDLED))
def test_bundled_scenario_verdict(slug):
    result, _ = run_scenario(SCENARIOS / f"{slug}.yml")
    if BUNDLED[slug] is Outcome.PASS:
        assert result.verdict is Outcome.PASS, failures(result)
    else:
        assert result.verdict is Outcome.FAIL


def test_stolen_card_fails_on_the_missing_confirmation_only():
    result, _ = run_scenario(SCENARIOS / "run_stolen_card.yml")
    assert [(r.check.key, r.outcome) for r in result.assertions] == [
        ("memory_was_set", Outcome.PASS),
        ("tool_executed", Outcome.PASS),
        ("skill_completed", Outcome.PASS),
        ("sequencing", Outcome.FAIL),
    ]
    assert result.assertions[-1].detail.startswith(
        "step 1 of 2 (bot_uttered utter_confirm_replacement) has no match: 3 bot message events recorded, none matched"
    )
    assert [(r.id, r.outcome) for r in result.sop.results] == [
        ("look_up_first", Outcome.PASS),
        ("confirm_before_ordering", Outcome.FAIL),
    ]
    assert result.sop.results[1].detail.startswith(
        "order_replacement at event 9 (turn 1): no bot message before it in turns 0-1 matched"
    )


@pytest.mark.parametrize("slug", RECORDED_SCRIPTED)
def test_scripted_scenarios_of_the_recordings_pass_too(slug):
    result, _ = run_scenario(SCENARIOS / f"{slug}.yml")
    assert result.verdict is Outcome.PASS, failures(result)


def test_the_damaged_card_scenario_passes_its_assertions():
    result, _ = run_scenario(SCENARIOS / "card_replace_damaged.yml")
    assert all(r.passed for r in result.assertions), failures(result)
    assert [c.outcome for c in result.criteria] == [Outcome.SKIP]


# --- the agent's logic --------------------------------------------------------------


def test_open_greets_and_writes_initial_slots():
    answer = agent.respond("open", None, {"project.preferred_language": "en", "customer_id": "cus_981"})
    assert answer["events"] == [
        {"event": "memory_set", "key": "project.preferred_language", "value": "en"},
        {"event": "memory_set", "key": "customer_id", "value": "cus_981"},
    ]
    assert answer["messages"] == [{"text": "Hi, I'm the Acme Bank assistant. How can I help?", "utter_name": "utter_greet"}]


def test_express_asked_up_front_ships_express():
    turns = talk("express-1", ["My card is cracked, I need a new one fast", "yes"])
    confirm = turns[1][1]["messages"][-1]
    assert "express shipping (2 days)" in confirm["text"]
    order = next(e for e in turns[2][1]["events"] if e.get("tool_name") == "order_replacement")
    assert order["arguments"] == {"card_id": "card_4417", "reason": "damaged", "shipping": "express"}
    assert order["result"] == {"order_id": "ord_5521", "eta_days": 2}
    assert turns[2][1]["messages"][0]["text"].endswith("arriving in 2 days.")


def test_express_asked_at_confirmation_asks_again_before_ordering():
    turns = talk("express-2", ["I need a replacement card", "it's lost", "express please", "/affirm"])
    assert turns[1][1]["messages"][0]["utter_name"] == "utter_ask_replacement_reason"
    assert names(turns[3:4]) == ["bot:utter_confirm_replacement"]
    assert "express" in turns[3][1]["messages"][0]["text"]
    order = next(e for e in turns[4][1]["events"] if e.get("tool_name") == "order_replacement")
    assert order["arguments"]["shipping"] == "express" and order["arguments"]["reason"] == "lost"


def test_standard_shipping_by_default():
    turns = talk("standard", ["My card is damaged", "Yes please"])
    order = next(e for e in turns[2][1]["events"] if e.get("tool_name") == "order_replacement")
    assert order["arguments"]["shipping"] == "standard"


def test_cancel_events_in_order():
    turns = talk("cancel", ["I lost my card", "Actually no, I just found it in my coat. Cancel that."])
    assert names(turns[2:]) == [
        "tool_executed:cancel_skill",
        "ordered_block_cancelled:confirm",
        "skill_cancelled:confirm",
        "memory_cleared:card_replace.draft_order_id",
        "bot:utter_replacement_cancelled",
    ]


def test_digression_events_in_order():
    turns = talk("digress", ["My card is damaged", "Wait, first: did my salary arrive?", "Yes"])
    assert names(turns[2:3]) == [
        "skill_interrupted:confirm",
        "ordered_block_interrupted:confirm",
        "tool_executed:search_knowledge",
        "skill_resumed:confirm",
        "ordered_block_resumed:confirm",
        "bot:None",
        "bot:utter_confirm_replacement",
    ]
    knowledge = turns[2][1]["events"][2]
    assert knowledge["result"] == "Salary deposits arrive on the 25th of each month."
    assert [e["event"] for e in turns[2][1]["events"] if e["event"].startswith(("skill_", "ordered_block_"))] == [
        "skill_interrupted", "ordered_block_interrupted", "skill_resumed", "ordered_block_resumed",
    ]
    assert "tool_executed:order_replacement" in names(turns[3:])


def test_balance_digression_uses_the_local_tool():
    turns = talk("balance", ["My card is damaged", "What's my balance?"])
    tools = [e for e in turns[2][1]["events"] if e["event"] == "tool_executed"]
    assert [(t["tool_name"], t["source"], t["result"]) for t in tools] == [
        ("check_balance", "local", {"balance": 1520.75, "currency": "EUR"}),
    ]


def test_stolen_card_is_ordered_without_asking():
    """The deliberate bug: the stolen-card order goes out in the first turn, with no confirmation."""
    turns = talk("stolen", ["Someone stole my wallet and my card was stolen"])
    trace = names(turns[1:])
    assert "tool_executed:order_replacement" in trace
    assert "bot:utter_confirm_replacement" not in trace


def test_transfer_over_the_limit_fails_and_under_it_succeeds():
    turns = talk("transfer", ["Send 50 euros to Maria", "yes", "send 20 euros to tom", "yes"])
    failed = next(e for e in turns[2][1]["events"] if e.get("tool_name") == "submit_transfer")
    assert failed["is_error"] is True and failed["error_message"] == "daily limit reached"
    assert failed["source"] == "mcp" and failed["mcp_server"] == "banking"
    assert failed["metadata"] == {"skill_id": "transfer_money"}
    done = next(e for e in turns[4][1]["events"] if e.get("tool_name") == "submit_transfer")
    assert done["is_error"] is False and done["arguments"] == {"payee_id": "p_9", "amount": 20, "currency": "EUR"}


def test_transfer_asks_for_what_is_missing():
    turns = talk("transfer-ask", ["I want to send money", "to Tom", "20", "/deny"])
    assert [t[1]["messages"][0]["utter_name"] for t in turns[1:]] == [
        "utter_ask_transfer_amount", "utter_ask_transfer_amount", "utter_confirm_transfer", "utter_transfer_cancelled",
    ]
    assert "submit_transfer" not in " ".join(names(turns))


def test_unknown_payee_cancels():
    turns = talk("payee", ["Transfer 10 euros to Bob"])
    assert names(turns[1:])[-3:] == ["tool_executed:cancel_skill", "skill_cancelled:payee", "bot:utter_payee_not_found"]


def test_out_of_scope_and_goodbye():
    turns = talk("oos", ["Can you book me a flight?", "Thanks, that's all", "Hello?"])
    assert names(turns[1:]) == [
        "tool_executed:cannot_help", "bot:utter_cannot_help",
        "tool_executed:hangup", "bot:utter_goodbye",
    ]
    assert turns[3][1] == {"messages": [], "events": []}  # after hangup: silence, which ends a simulated conversation


def test_a_conversation_without_an_opening_still_works():
    assert agent.respond("no-open", "What's my balance?")["messages"][0]["utter_name"] == "utter_balance"


def test_deterministic():
    script = ["My card is damaged", "what's my balance?", "yes"]
    assert talk("same-1", script) == talk("same-2", script) == talk("same-1", script)


def test_reopening_resets_the_conversation():
    agent.respond("reopen", None)
    agent.respond("reopen", "My card is damaged")
    agent.respond("reopen", None)
    assert agent.respond("reopen", "yes")["messages"][0]["utter_name"] == "utter_cannot_help"


def test_conversations_keep_apart_across_threads():
    """Many conversations at once, each in its own thread, each interleaved with the others: no state leaks."""
    script = ["I lost my card", "What's my balance?", "yes", "bye"]
    expected = talk("reference", script)
    barrier = threading.Barrier(16, timeout=120)  # a bound on a hang, not a wait
    results: dict[str, list] = {}

    def one(cid: str) -> None:
        turns = [(None, agent.respond(cid, None))]
        for text in script:
            barrier.wait()  # every thread sends its next message at the same moment
            turns.append((text, agent.respond(cid, text)))
        results[cid] = turns

    threads = [threading.Thread(target=one, args=(f"thread-{i}",), daemon=True) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(results) == sorted(f"thread-{i}" for i in range(16))
    assert all(turns == expected for turns in results.values())


def test_two_conversations_interleaved_in_one_thread():
    a, b = "inter-a", "inter-b"
    agent.respond(a, None)
    agent.respond(b, None)
    agent.respond(a, "My card is damaged")
    agent.respond(b, "Send 20 euros to Maria")
    answer_a = agent.respond(a, "yes")
    answer_b = agent.respond(b, "yes")
    assert [e.get("tool_name") for e in answer_a["events"]][0] == "order_replacement"
    assert [e.get("tool_name") for e in answer_b["events"]][0] == "submit_transfer"


def test_standard_library_only():
    import ast

    tree = ast.parse((EXAMPLE / "agent.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "json", "re", "threading", "dataclasses", "typing"}


def test_no_active_card_cancels_at_lookup():
    turns = talk("no-card", ["My card is broken"], {"customer_id": "cus_000"})
    lookup = next(e for e in turns[1][1]["events"] if e.get("tool_name") == "lookup_card")
    assert lookup["arguments"] == {"customer_id": "cus_000"} and lookup["result"] == '{"cards": []}'
    assert names(turns[1:])[-4:] == [
        "tool_executed:cancel_skill", "ordered_block_cancelled:lookup", "skill_cancelled:lookup", "bot:utter_no_active_card",
    ]
