"""Throughput of `dialogcheck check` against plain JSON decoding of the same file.

Generates (seeded, deterministic) a batch of realistic Mantle/Rasa tracker
conversations and one very long single conversation under `benchmarks/out/check_throughput/`,
then measures, best of N repeats with `time.perf_counter`:

* baseline: `orjson.loads` (and `json.loads`) of every line of the batch file;
* dialogcheck loading only: `iter_conversation_file`;
* dialogcheck checking only: `evaluate` on already-loaded conversations;
* dialogcheck load + check: the path `dialogcheck check` takes;
* the `dialogcheck check` command end to end (a subprocess);
* linearity: the single conversation at 50k, 100k, 200k events, for loading,
  for the whole scenario, and for every assertion key alone (in the scenario's
  form and in a worst-case form that scans every candidate and builds the
  closest-miss explanation).

Run: .venv/bin/python benchmarks/check_throughput.py [--conversations N] [--seed S]
Standard library plus the project's own dependencies only.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

import dialogcheck
from dialogcheck.checks import ASSERTIONS
from dialogcheck.judging import evaluate
from dialogcheck.events.load import iter_conversation_file
from dialogcheck.events.model import Conversation
from dialogcheck.scenario.model import Goals, Scenario

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------- generation

FIRST_NAMES = ["Anna", "Ben", "Chloé", "Dmitri", "Eva", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kemal", "Lea"]
REASONS = ["damaged", "lost", "stolen", "expired"]
DAMAGE_TEXTS = [
    "Hi, the chip on my card is cracked and the card stopped working.",
    "My debit card got bent and the terminal won't read it anymore",
    "I lost my card somewhere in town yesterday, I need a new one",
    "Someone stole my wallet with my card in it!",
    "my card expires next week, can I get the new one sent already?",
]
FAQ = [
    ("What are your opening hours?", "Our branches are open Monday to Friday, 9:00 to 17:00."),
    ("How do I change my PIN?", "You can change your PIN at any of our ATMs under 'Card services'."),
    ("Is there a fee for international transfers?", "SEPA transfers are free; other international transfers cost 5 EUR."),
    ("Can I get a paper statement?", "Yes, paper statements can be ordered in the app under Documents."),
]


class Writer:
    """Builds one conversation's events with realistic fields and rising timestamps."""

    def __init__(self, rng: random.Random, t0: float):
        self.rng = rng
        self.t = t0
        self.events: list[dict] = []
        self.customer = f"cus_{rng.randrange(100, 999)}"

    def emit(self, event: str, **fields) -> None:
        self.t += self.rng.uniform(0.3, 2.5)
        obj = {"event": event, "timestamp": round(self.t, 3)}
        obj.update(fields)
        self.events.append(obj)

    def user(self, text: str, intent: str = "inform") -> None:
        self.emit(
            "user",
            text=text,
            parse_data={
                "intent": {"name": intent, "confidence": round(self.rng.uniform(0.6, 0.99), 4)},
                "entities": [],
                "text": text,
                "message_id": f"{self.rng.getrandbits(64):016x}",
            },
            input_channel="rest",
            message_id=f"{self.rng.getrandbits(64):016x}",
        )

    def bot(self, text: str | None, utter: str | None = None, buttons: list[dict] | None = None) -> None:
        # Both the tracker form and the shorthand form of SPEC section 1.
        if self.rng.random() < 0.15:
            fields: dict = {"text": text}
            if utter:
                fields["utter_name"] = utter
            if buttons:
                fields["buttons"] = buttons
            self.emit("bot", **fields)
        else:
            meta = {"utter_action": utter} if utter else {}
            data = {"elements": None, "quick_replies": None, "buttons": buttons, "attachment": None, "image": None, "custom": None}
            self.emit("bot", text=text, data=data, metadata=meta)
        if self.rng.random() < 0.3:
            self.tool("listen", {}, "ok")

    def tool(self, name: str, arguments: dict, result, *, skill: str | None = None, mcp: str | None = None,
             error: str | None = None) -> None:
        fields: dict = {
            "tool_name": name,
            "arguments": arguments,
            "source": "mcp" if mcp else "local",
            "result": None if error else result,
            "is_error": error is not None,
        }
        if error:
            fields["error_message"] = error
        if mcp:
            fields["mcp_server"] = mcp
        if skill and self.rng.random() < 0.2:
            fields["skill_id"] = skill  # shorthand
            fields["metadata"] = {}
        else:
            fields["metadata"] = {"skill_id": skill} if skill else {}
        self.emit("tool_executed", **fields)

    def activate(self, skill: str) -> None:
        self.tool("activate", {"skill_id": skill}, "ok")
        self.emit("skill_activated", skill_id=skill)

    def complete(self, skill: str) -> None:
        self.tool("complete_skill", {}, "ok", skill=skill)
        self.emit("skill_completed", skill_id=skill)

    # -- episodes: one user request each, several turns -------------------------------

    def check_balance(self, nested: bool = False) -> None:
        self.user("Wait, what's my current balance?" if nested else "How much money do I have on my account?", "check_balance")
        self.activate("check_balance")
        balance = round(self.rng.uniform(10, 9000), 2)
        self.tool("get_balance", {"customer_id": self.customer, "account": "main"},
                  {"balance": balance, "currency": "EUR", "as_of": "2025-12-01"}, skill="check_balance", mcp="core_banking")
        self.bot(f"Your main account balance is {balance:.2f} EUR.", "utter_balance")
        self.complete("check_balance")

    def card_replace(self) -> None:
        rng = self.rng
        reason = rng.choice(REASONS)
        card = f"card_{rng.randrange(1000, 9999)}"
        express = rng.random() < 0.3  # everything in one turn: lookup and order together
        self.user(rng.choice(DAMAGE_TEXTS) + (" Standard shipping, go ahead." if express else ""), "replace_card")
        self.activate("card_replace")
        self.emit("ordered_block_entered", skill_id="card_replace", block_id="main")
        self.tool("lookup_card", {"customer_id": self.customer},
                  orjson.dumps({"cards": [{"card_id": card, "last4": card[-4:], "status": "active"}]}).decode(),
                  skill="card_replace")
        self.emit("memory_set", key="card_replace.selected_card_id", value=card)
        self.emit("memory_set", key="card_replace.replacement_reason", value=reason)
        self.emit("memory_set", key="card_replace.draft_order_id", value=f"draft_{rng.randrange(10, 99)}")
        if not express:
            buttons = [{"title": "Yes, order it", "payload": "/affirm"}, {"title": "No", "payload": "/deny"}]
            self.bot(f"I found your card ending in {card[-4:]}. Shall I order a replacement with standard shipping (5-7 days)?",
                     "utter_confirm_replacement", buttons)
            if rng.random() < 0.2:  # digression: the skill is interrupted and resumed
                self.emit("skill_interrupted", skill_id="card_replace", step_id="confirm")
                self.emit("ordered_block_interrupted", skill_id="card_replace", block_id="main", step_id="confirm")
                self.check_balance(nested=True)
                self.emit("skill_resumed", skill_id="card_replace", step_id="confirm")
                self.emit("ordered_block_resumed", skill_id="card_replace", block_id="main", step_id="confirm")
                self.bot("Back to your card: shall I order the replacement?", "utter_confirm_replacement", buttons)
            if rng.random() < 0.2:
                self.user("Actually no, I just found it. Cancel that.", "deny")
                self.tool("cancel_skill", {}, "ok", skill="card_replace")
                self.emit("ordered_block_cancelled", skill_id="card_replace", block_id="main", step_id="confirm")
                self.emit("skill_cancelled", skill_id="card_replace", step_id="confirm")
                self.emit("memory_cleared", key="card_replace.draft_order_id")
                self.bot("No problem, I've cancelled the replacement. Your card stays active.", "utter_replacement_cancelled")
                return
            self.user(rng.choice(["Yes please", "yes", "Yes, order it"]), "affirm")
        shipping = "standard" if rng.random() < 0.85 else "express"
        order = f"ord_{rng.randrange(1000, 9999)}"
        self.tool("order_replacement", {"card_id": card, "reason": reason, "shipping": shipping},
                  {"order_id": order, "eta_days": 6 if shipping == "standard" else 2}, skill="card_replace")
        self.emit("memory_cleared", key="card_replace.draft_order_id")
        self.emit("ordered_block_completed", skill_id="card_replace", block_id="main", step_id="submit")
        self.complete("card_replace")
        self.bot(f"Done: your replacement card has been ordered (order {order}), arriving in a few days.",
                 "utter_replacement_ordered")

    def transfer_money(self) -> None:
        rng = self.rng
        name = rng.choice(FIRST_NAMES)
        amount = rng.choice([50, 100, 250, 250.0, 1200, 75.5])
        recipient = {"name": name, "iban": f"DE{rng.randrange(10**19, 10**20)}"}
        self.user(f"Send {amount} euros to {name}", "transfer_money")
        self.activate("transfer_money")
        self.emit("ordered_block_entered", skill_id="transfer_money", block_id="details")
        self.tool("set_fields", {"amount": amount, "recipient": name}, "ok", skill="transfer_money")
        self.emit("memory_set", key="transfer_money.amount", value=amount)
        self.emit("memory_set", key="transfer_money.recipient", value=recipient)
        self.tool("get_accounts", {"customer_id": self.customer}, [{"id": "main", "iban": "DE00123"}],
                  skill="transfer_money", mcp="core_banking")
        limit_error = "daily limit exceeded" if amount > 1000 else None
        self.tool("check_limit", {"amount": amount}, {"ok": True}, skill="transfer_money", mcp="core_banking", error=limit_error)
        if limit_error:
            self.bot("That is above your daily limit of 1000 EUR. Do you want to send a smaller amount?", "utter_over_limit")
            self.user("ok make it 900", "inform")
            self.tool("correct", {"amount": 900}, "ok", skill="transfer_money")
            amount = 900
            self.emit("memory_set", key="transfer_money.amount", value=amount)
        buttons = [{"title": "Confirm", "payload": "/affirm"}, {"title": "Change", "payload": "/change"},
                   {"title": "Cancel", "payload": "/deny"}]
        self.bot(f"Send {amount} EUR to {name} ({recipient['iban'][:6]}…)?", "utter_confirm_transfer", buttons)
        if rng.random() < 0.25:
            self.user("No, don't send it", "deny")
            self.tool("cancel_skill", {}, "ok", skill="transfer_money")
            self.emit("ordered_block_cancelled", skill_id="transfer_money", block_id="details", step_id="confirm")
            self.emit("skill_cancelled", skill_id="transfer_money", step_id="confirm")
            self.emit("memory_cleared", key="transfer_money.amount")
            self.bot("Okay, nothing was sent.", "utter_transfer_cancelled")
            return
        self.user("Confirm", "affirm")
        self.tool("resolve_tool_confirmation", {"tool": "create_transfer", "approved": True}, "ok", skill="transfer_money")
        self.tool("create_transfer", {"amount": amount, "currency": "EUR", "recipient_iban": recipient["iban"]},
                  orjson.dumps({"transfer_id": f"tr_{rng.randrange(10**6)}", "status": "booked"}).decode(),
                  skill="transfer_money", mcp="core_banking")
        self.emit("memory_set", key="transfer_money.confirmed", value=True)
        self.emit("ordered_block_completed", skill_id="transfer_money", block_id="details", step_id="submit")
        self.complete("transfer_money")
        self.bot(f"Done, {amount} EUR are on their way to {name}.", "utter_transfer_done")

    def dispute(self) -> None:
        rng = self.rng
        tx = f"tx_{rng.randrange(10**5, 10**6)}"
        self.user("There's a charge on my card I don't recognise", "dispute")
        self.activate("dispute_charge")
        self.emit("ordered_block_entered", skill_id="dispute_charge", block_id="identify")
        self.tool("list_transactions", {"customer_id": self.customer, "days": 30},
                  {"transactions": [{"id": tx, "amount": -42.9, "merchant": "ACME STORE"},
                                    {"id": "tx_1", "amount": -3.5, "merchant": "Coffee"}]}, skill="dispute_charge")
        self.bot("Which one is it?", "utter_pick_transaction",
                 [{"title": "ACME STORE -42.90", "payload": f"/pick{{\"tx\":\"{tx}\"}}"}, {"title": "Coffee -3.50"}])
        self.user("The ACME one", "inform")
        self.emit("memory_set", key="dispute_charge.transaction_id", value=tx)
        self.tool("create_case", {"transaction_id": tx, "kind": "unrecognised"}, {"case_id": f"case_{rng.randrange(10**4)}"},
                  skill="dispute_charge", mcp="crm")
        self.emit("ordered_block_completed", skill_id="dispute_charge", block_id="identify", step_id="file")
        self.complete("dispute_charge")
        self.bot("I've opened a dispute case; you'll hear from us within 5 days.", "utter_dispute_opened")

    def faq(self) -> None:
        question, answer = self.rng.choice(FAQ)
        self.user(question, "faq")
        self.tool("search_knowledge", {"query": question}, {"hits": [{"doc": "faq.md", "score": 0.82}]})
        if self.rng.random() < 0.05:
            self.tool("cannot_help", {}, "ok")
            self.bot("Sorry, I can't help with that here.", "utter_cannot_help")
        else:
            self.bot(answer)

    def opening(self) -> None:
        self.emit("action", name="action_session_start", policy=None, confidence=1.0)
        self.emit("session_started")
        self.user("/session_start", "session_start")
        self.bot("Hi, I'm the Acme Bank assistant. How can I help?", "utter_greet")

    def episode(self) -> None:
        pick = self.rng.random()
        if pick < 0.35:
            self.card_replace()
        elif pick < 0.65:
            self.transfer_money()
        elif pick < 0.77:
            self.check_balance()
        elif pick < 0.87:
            self.dispute()
        else:
            self.faq()

    def closing(self) -> None:
        self.user("Thanks, that's all", "goodbye")
        self.bot("You're welcome, goodbye!", "utter_goodbye")
        if self.rng.random() < 0.5:
            self.tool("hangup", {}, "ok")


def gen_conversation(rng: random.Random, index: int, target: int) -> dict:
    w = Writer(rng, 1764576000.0 + index * 3600.0)
    w.opening()
    while len(w.events) < target - 4:
        w.episode()
    w.closing()
    return {
        "sender_id": f"conv-{index:06d}",
        "slots": {"session_started_metadata": None},
        "latest_event_time": w.events[-1]["timestamp"],
        "events": w.events,
    }


def gen_long_events(rng: random.Random, count: int) -> list[dict]:
    """One session that goes on and on: many requests, one conversation."""
    w = Writer(rng, 1764576000.0)
    w.opening()
    while len(w.events) < count:
        w.episode()
    return w.events[:count]


def write_batch(path: Path, n: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    events = 0
    with path.open("wb") as out:
        for i in range(n):
            conv = gen_conversation(rng, i, rng.randint(40, 80))
            events += len(conv["events"])
            out.write(orjson.dumps(conv) + b"\n")
    return n, events


def write_long(out_dir: Path, sizes: list[int], seed: int) -> dict[int, Path]:
    events = gen_long_events(random.Random(seed + 1), max(sizes))
    paths = {}
    for size in sizes:
        path = out_dir / f"single_{size // 1000}k.jsonl"
        with path.open("wb") as out:
            for obj in events[:size]:
                out.write(orjson.dumps(obj) + b"\n")
        paths[size] = path
    return paths


# --------------------------------------------------------------------------- scenarios

# The scenario a team would write for this agent: every one of the 18 keys, as meant.
REALISTIC = """\
scenario:
  name: Benchmark - every assertion key
  simulation_context: A customer of Acme Bank with several requests.
  goals:
    assertions:
      - skill_activated: {skill_id: card_replace}
      - skill_completed: {skill_id: card_replace}
      - skill_cancelled: {skill_id: transfer_money, step_id: confirm}
      - skill_interrupted: {skill_id: card_replace, step_id: confirm}
      - skill_resumed: {skill_id: card_replace, step_id: confirm}
      - ordered_block_entered: {skill_id: card_replace, block_id: main}
      - ordered_block_completed: {skill_id: card_replace, block_id: main, step_id: submit}
      - ordered_block_cancelled: {skill_id: transfer_money, block_id: details, step_id: confirm}
      - ordered_block_interrupted: {skill_id: card_replace, block_id: main, step_id: confirm}
      - ordered_block_resumed: {skill_id: card_replace, block_id: main, step_id: confirm}
      - memory_was_set:
          - name: card_replace.replacement_reason
            value: damaged
          - name: transfer_money.amount
            value: 250
          - name: transfer_money.confirmed
            value: true
      - memory_was_not_set:
          - name: card_replace.fraud_review
          - name: card_replace.replacement_reason
            value: stolen
      - memory_was_cleared:
          - name: card_replace.draft_order_id
      - tool_executed:
          tool_name: order_replacement
          source: local
          skill_id: card_replace
          arguments: {shipping: standard}
      - tool_executed:
          tool_name: create_transfer
          source: mcp
          mcp_server: core_banking
          is_error: false
      - tool_executed:
          tool_name: activate
          source: local
          arguments: {skill_id: dispute_charge}
      - tool_executed:
          tool_name: check_limit
          source: mcp
          mcp_server: core_banking
          times: 0
      - tools_within_one_turn:
          ordered: true
          allow_extra_calls: true
          calls:
            - tool_executed: {tool_name: lookup_card, source: local}
            - tool_executed: {tool_name: order_replacement, source: local, arguments: {shipping: standard}}
      - tools_within_one_turn:
          allow_extra_calls: false
          calls:
            - tool_executed: {tool_name: check_limit, source: mcp, mcp_server: core_banking}
            - tool_executed: {tool_name: get_accounts, source: mcp, mcp_server: core_banking}
      - bot_uttered:
          utter_name: utter_confirm_transfer
          buttons:
            - title: Confirm
            - title: Cancel
              payload: /deny
      - bot_uttered:
          text_matches: "replacement.*(ordered|placed)"
      - bot_did_not_utter:
          text_matches: "(?i)as an ai language model"
      - bot_did_not_utter:
          utter_name: utter_cannot_help
      - sequencing:
          - skill_activated: {skill_id: card_replace}
          - memory_was_set: card_replace.replacement_reason
          - tool_executed: {tool_name: order_replacement, source: local}
          - memory_was_cleared: card_replace.draft_order_id
          - skill_completed: {skill_id: card_replace}
          - bot_uttered: {utter_name: utter_replacement_ordered}
"""

# Each key in the form that does the most work: no early match, so every
# candidate is compared and the closest-miss explanation is built.
WORST_CASE = """\
scenario:
  name: Benchmark - worst case of every key
  simulation_context: A customer of Acme Bank with several requests.
  goals:
    assertions:
      - skill_activated: {skill_id: no_such_skill}
      - skill_completed: {skill_id: no_such_skill}
      - skill_cancelled: {skill_id: card_replace, step_id: no_such_step}
      - skill_interrupted: {skill_id: no_such_skill, step_id: confirm}
      - skill_resumed: {skill_id: no_such_skill, step_id: confirm}
      - ordered_block_entered: {skill_id: card_replace, block_id: no_such_block}
      - ordered_block_completed: {skill_id: card_replace, block_id: main, step_id: no_such_step}
      - ordered_block_cancelled: {skill_id: no_such_skill, block_id: main, step_id: confirm}
      - ordered_block_interrupted: {skill_id: no_such_skill, block_id: main, step_id: confirm}
      - ordered_block_resumed: {skill_id: no_such_skill, block_id: main, step_id: confirm}
      - memory_was_set:
          - name: transfer_money.recipient
            value: {name: Nobody, iban: DE0}
          - name: card_replace.selected_card_ids
      - memory_was_not_set:
          - name: card_replace.fraud_review
          - name: transfer_money.amount
            value: 123456
      - memory_was_cleared:
          - name: card_replace.selected_card_id
      - tool_executed:
          tool_name: order_replacement
          source: local
          skill_id: card_replace
          arguments: {shipping: overnight, reason: damaged}
      - tool_executed:
          tool_name: create_transfer
          source: mcp
          mcp_server: core_banking
          times: 1
      - tools_within_one_turn:
          allow_extra_calls: false
          calls:
            - tool_executed: {tool_name: lookup_card, source: local}
            - tool_executed: {tool_name: order_replacement, source: local, arguments: {shipping: overnight}}
      - tools_within_one_turn:
          ordered: true
          allow_extra_calls: true
          calls:
            - tool_executed: {tool_name: create_transfer, source: mcp, mcp_server: core_banking}
            - tool_executed: {tool_name: get_accounts, source: mcp, mcp_server: core_banking}
      - bot_uttered:
          utter_name: utter_confirm_transfer
          text_matches: "(?i)never said"
          buttons:
            - title: Cancel
            - title: Confirm
      - bot_did_not_utter:
          text_matches: "(?i)as an ai language model"
      - sequencing:
          - skill_activated: {skill_id: card_replace}
          - tool_executed: {tool_name: order_replacement, source: local}
          - skill_completed: {skill_id: card_replace}
          - bot_uttered: {utter_name: utter_no_such_message}
"""


def alone(scenario: Scenario, key: str) -> Scenario:
    """The same scenario with only the assertions of one key."""
    checks = tuple(c for c in scenario.goals.assertions if c.key == key)
    return dataclasses.replace(scenario, goals=Goals(assertions=checks))


# --------------------------------------------------------------------------- timing


@dataclasses.dataclass
class Item:
    name: str
    run: Callable[[object], object]
    setup: Callable[[], object] | None = None
    min_time: float = 0.0
    loops: int = 1
    best: float = float("inf")


class Bench:
    """Named measurements sampled round-robin, so drift of a shared machine hits all of them alike.

    Each sample is one call (or, for calls shorter than `min_time`, a loop of
    calls divided by its length); the best of `repeats` samples is kept.
    """

    def __init__(self) -> None:
        self.items: list[Item] = []

    def add(self, name: str, run: Callable[[object], object], setup: Callable[[], object] | None = None,
            min_time: float = 0.0) -> None:
        self.items.append(Item(name, run, setup, min_time))

    def run(self, repeats: int, *, cold: bool = False) -> dict[str, float]:
        """With `cold`, CPU caches are flushed before every sample, so small inputs get no cache advantage."""
        for item in self.items:
            if item.min_time:
                arg = item.setup() if item.setup else None
                start = time.perf_counter()
                item.run(arg)
                item.loops = max(1, int(item.min_time / max(time.perf_counter() - start, 1e-9)))
        for _ in range(repeats):
            for item in self.items:
                arg = item.setup() if item.setup else None
                gc.collect()
                if cold:
                    flush_caches()
                start = time.perf_counter()
                for _ in range(item.loops):
                    item.run(arg)
                item.best = min(item.best, (time.perf_counter() - start) / item.loops)
        return {item.name: item.best for item in self.items}


_EVICT = bytearray(128 << 20)  # larger than the last-level cache


def flush_caches() -> None:
    """Read 128 MB so the data of the previous sample is no longer cached."""
    _EVICT.find(b"\x01")


def gc_off(fn: Callable[[object], object]) -> Callable[[object], object]:
    def run(arg: object) -> object:
        gc.disable()
        try:
            return fn(arg)
        finally:
            gc.enable()

    return run


def fresh(conversations: list[Conversation]) -> list[Conversation]:
    """Copies without the cached per-type index, so a timed check pays for building it."""
    return [Conversation(c.events, c.source, c.conversation_id) for c in conversations]


def warm(conv: Conversation) -> Conversation:
    conv.by_type, conv.tool_runs, conv.counted_tool_runs, conv.bot_messages  # noqa: B018 - fill the caches
    return conv


def decode_lines(path: Path, loads: Callable[[bytes], object]) -> int:
    n = 0
    with path.open("rb") as handle:
        for line in handle:
            loads(line)
            n += 1
    return n


def stream_load(path: Path) -> int:
    return sum(len(conv) for conv in iter_conversation_file(path))


def stream_check(path: Path, scenario: Scenario) -> int:
    return sum(evaluate(scenario, conv).verdict != "pass" for conv in iter_conversation_file(path))


def check_all(scenario: Scenario, conversations: list[Conversation]) -> None:
    for conv in conversations:
        evaluate(scenario, conv)


def git_revision() -> str:
    """The commit measured, with `+dirty` when library files differ from it."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=False, cwd=HERE, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], check=False, cwd=HERE.parent, capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    return (rev or "unknown") + ("+dirty" if dirty.strip() else "")


def cli_command() -> list[str]:
    script = Path(sys.executable).with_name("dialogcheck")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from dialogcheck._cli.main import main; main()"]


def run_cli(args: list[str]) -> None:
    done = subprocess.run(cli_command() + args, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode not in (0, 1):
        raise SystemExit(f"dialogcheck check failed with exit {done.returncode}: {done.stderr.decode()[-2000:]}")


# --------------------------------------------------------------------------- report



def thresholds(size_ratio: float) -> tuple[float, float]:
    """Growth of time per event (largest / smallest size) reported as rising, and as super-linear.

    O(n^2) gives `size_ratio`; super-linear is half way there, rising a sixth
    (for 50k to 200k: 2.5 and 1.5, where O(n log n) gives about 1.1).
    """
    return 1 + (size_ratio - 1) / 6, 1 + (size_ratio - 1) / 2


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table that also reads well in a terminal."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    right = [i > 0 for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right)) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def verdict(growth: float, seconds: float, limits: tuple[float, float]) -> str:
    rising, superlinear = limits
    if seconds < 1e-3:
        return "constant (early match)" if growth < 1 / rising else "flat"
    if growth > superlinear:
        return "SUPER-LINEAR"
    if growth > rising:
        return "rising"
    return "flat" if growth > 1 / rising else "sub-linear"


def profile_batch(batch: Path, scenario: Scenario) -> str:
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(stream_check, batch, scenario)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(20)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=2000, help="conversations in the batch file (default 2000)")
    parser.add_argument("--seed", type=int, default=7, help="generator seed (default 7)")
    parser.add_argument("--repeats", type=int, default=3, help="samples per measurement; the best is kept (default 3)")
    parser.add_argument("--sizes", default="50000,100000,200000", help="single-conversation sizes in events")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "check_throughput", help="folder for generated data and results")
    parser.add_argument("--no-cli", action="store_true", help="skip timing the `dialogcheck check` command")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of load + check on the batch")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    repeats = args.repeats
    small, large = sizes[0], sizes[-1]

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    # -- data and scenarios ------------------------------------------------------------
    t0 = time.perf_counter()
    batch = out / "batch.jsonl"
    n_conv, n_events = write_batch(batch, args.conversations, args.seed)
    singles = write_long(out, sizes, args.seed)
    scenario_path, worst_path = out / "scenario_all_keys.yml", out / "scenario_worst_case.yml"
    scenario_path.write_text(REALISTIC, encoding="utf-8")
    worst_path.write_text(WORST_CASE, encoding="utf-8")
    realistic = dialogcheck.load_scenario(scenario_path)
    worst = dialogcheck.load_scenario(worst_path)
    for scen in (realistic, worst):
        missing = set(ASSERTIONS) - {c.key for c in scen.goals.assertions}
        assert not missing, f"{scen.name} misses keys: {missing}"
    mb = batch.stat().st_size / 1e6
    log(f"generated {n_conv:,} conversations / {n_events:,} events ({mb:.1f} MB) and one conversation of "
        f"{', '.join(f'{s:,}' for s in sizes)} events in {time.perf_counter() - t0:.1f}s")

    load_before = os.getloadavg()[0]
    results: dict = {
        "command": "python benchmarks/check_throughput.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": {"nproc": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "orjson": orjson.__version__, "dialogcheck": dialogcheck.__version__, "commit": git_revision()},
        "seed": args.seed,
        "repeats": repeats,
        "batch": {"conversations": n_conv, "events": n_events, "bytes": batch.stat().st_size,
                  "assertions": {"realistic": len(realistic.goals.assertions), "worst": len(worst.goals.assertions)}},
    }

    # -- batch: streaming paths (nothing kept between conversations) --------------------
    log("timing the batch file…")
    bench = Bench()
    bench.add("orjson.loads per line (baseline)", lambda _: decode_lines(batch, orjson.loads))
    bench.add("json.loads per line", lambda _: decode_lines(batch, json.loads))
    bench.add("dialogcheck load only (iter_conversation_file)", lambda _: stream_load(batch))
    bench.add("dialogcheck load + check, all 18 keys", lambda _: stream_check(batch, realistic))
    bench.add("dialogcheck load + check, worst case of every key", lambda _: stream_check(batch, worst))
    batch_times = bench.run(repeats)

    # -- batch: checks alone, on conversations already loaded ----------------------------
    loaded = list(iter_conversation_file(batch))
    assert sum(len(c) for c in loaded) == n_events
    gc.collect()
    gc.freeze()
    bench = Bench()
    bench.add("dialogcheck checks only, all 18 keys (evaluate)", lambda convs: check_all(realistic, convs), lambda c=loaded: fresh(c))
    bench.add("dialogcheck checks only, worst case of every key", lambda convs: check_all(worst, convs), lambda c=loaded: fresh(c))
    batch_times.update(bench.run(repeats))
    outcomes: dict[str, dict[str, int]] = {}
    for label, scen in (("realistic", realistic), ("worst", worst)):
        found = [r.outcome.value for conv in loaded for r in evaluate(scen, conv).assertions]
        outcomes[label] = {o: found.count(o) for o in sorted(set(found))}
    passing = sum(evaluate(realistic, conv).verdict == "pass" for conv in loaded)
    results["batch"]["outcomes"] = outcomes
    results["batch"]["conversations_passing_realistic"] = passing
    gc.unfreeze()
    del bench, loaded  # nothing of the batch stays alive while the long conversation is timed
    gc.collect()

    # -- batch: the command --------------------------------------------------------------
    if not args.no_cli:
        log("timing the `dialogcheck check` command…")
        tiny = out / "tiny.jsonl"
        with batch.open("rb") as src, tiny.open("wb") as dst:
            dst.write(src.readline())
        base = ["check", "--scenario", str(scenario_path)]
        bench = Bench()
        bench.add("`dialogcheck check --format json` (subprocess)", lambda _: run_cli(base + ["--format", "json", str(batch)]))
        bench.add("`dialogcheck check` text output, piped (subprocess)", lambda _: run_cli(base + [str(batch)]))
        bench.add("  start-up: the same on one conversation", lambda _: run_cli(base + ["--format", "json", str(tiny)]))
        batch_times.update(bench.run(repeats))
    results["batch"]["seconds"] = batch_times

    # -- one long conversation: loading (nothing retained) -------------------------------
    log("timing the single long conversation: loading…")
    bench = Bench()
    for size in sizes:
        path = singles[size]
        bench.add(f"orjson|{size}", lambda _, p=path: decode_lines(p, orjson.loads))
        bench.add(f"load|{size}", lambda _, p=path: dialogcheck.load_conversation(p))
        bench.add(f"load-nogc|{size}", gc_off(lambda _, p=path: dialogcheck.load_conversation(p)))
    lin = bench.run(repeats, cold=True)

    # -- one long conversation: checks ---------------------------------------------------
    log("timing the single long conversation: checks, and every key alone…")
    convs = {size: dialogcheck.load_conversation(singles[size]) for size in sizes}
    gc.collect()
    gc.freeze()  # the loaded conversations are long-lived: keep collections short between samples
    bench = Bench()
    for size, conv in convs.items():
        assert len(conv) == size
        warm(conv)
        bench.add(f"reference|{size}", lambda _, c=conv: [e for e in c.events if e.type == "memory_set"])
        bench.add(f"index|{size}", lambda _, c=conv: warm(Conversation(c.events, c.source)))
        bench.add(f"realistic|{size}", lambda _, c=conv: evaluate(realistic, Conversation(c.events, c.source)))
        bench.add(f"worst|{size}", lambda _, c=conv: evaluate(worst, Conversation(c.events, c.source)))
        for key in ASSERTIONS:
            for form, scen in (("scenario", realistic), ("worst", worst)):
                one = alone(scen, key)
                bench.add(f"{key}/{form}|{size}", lambda _, s=one, c=conv: evaluate(s, c), min_time=0.001)
    lin.update(bench.run(repeats, cold=True))
    gc.unfreeze()
    del convs
    results["linearity"] = lin

    def series(name: str) -> dict[int, float]:
        return {size: lin[f"{name}|{size}"] for size in sizes}

    def growth(s: dict[int, float]) -> float:
        return (s[large] / large) / (s[small] / small)

    def ns(s: dict[int, float], size: int) -> str:
        return f"{s[size] / size * 1e9:,.0f}"

    # -- report ----------------------------------------------------------------------
    t_orjson = batch_times["orjson.loads per line (baseline)"]
    t_json = batch_times["json.loads per line"]
    t_load = batch_times["dialogcheck load only (iter_conversation_file)"]
    t_full = batch_times["dialogcheck load + check, all 18 keys"]
    t_check = batch_times["dialogcheck checks only, all 18 keys (evaluate)"]
    batch_rows = [[name, f"{t:.3f}", f"{n_events / t:,.0f}", f"{t / t_orjson:.1f}x"] for name, t in batch_times.items()]
    results["ratios"] = {"load_check_vs_orjson": t_full / t_orjson, "load_check_vs_json": t_full / t_json,
                         "load_vs_orjson": t_load / t_orjson, "checks_vs_orjson": t_check / t_orjson}

    limits = thresholds(large / small)
    size_heads = [f"ns/event @{s // 1000}k" for s in sizes]
    lin_rows = []
    for label, name in (("orjson.loads per line (baseline)", "orjson"), ("dialogcheck load_conversation", "load"),
                        ("  the same with the garbage collector off", "load-nogc"),
                        ("reference: a list comprehension over every event", "reference"),
                        ("build the event index (by_type, tool runs)", "index"),
                        ("evaluate, all 18 keys", "realistic"), ("evaluate, worst case of every key", "worst")):
        s = series(name)
        g = growth(s)
        lin_rows.append([label, *(ns(s, size) for size in sizes), f"{g:.2f}", verdict(g, s[large], limits)])

    key_rows, flagged, rising = [], [], []
    for key in ASSERTIONS:
        row = [key]
        verdicts = []
        for form in ("scenario", "worst"):
            s = series(f"{key}/{form}")
            g = growth(s)
            v = verdict(g, s[large], limits)
            verdicts.append(v)
            row += [f"{s[large] * 1e3:.3f}", ns(s, large), f"{g:.2f}"]
            if v == "SUPER-LINEAR":
                flagged.append(f"{key} ({form})")
            elif v == "rising":
                rising.append(f"{key} ({form})")
        row.append("SUPER-LINEAR" if "SUPER-LINEAR" in verdicts else ("rising" if "rising" in verdicts else "linear"))
        key_rows.append(row)
    results["flagged"] = flagged
    results["rising"] = rising

    growth_head = f"growth {large // 1000}k/{small // 1000}k"
    machine = results["machine"]
    machine["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    text = [
        (f"Machine: {machine['nproc']} CPUs, Python {machine['python']}, {machine['platform']}; "
         f"orjson {machine['orjson']}; dialogcheck {machine['dialogcheck']} at {machine['commit']}; seed {args.seed}; "
         f"1-minute load average {machine['load_average'][0]:.2f} at the start, {machine['load_average'][1]:.2f} at the end."),
        "",
        f"## Batch: {n_conv:,} conversations, {n_events:,} events, {mb:.1f} MB (best of {repeats})",
        "",
        table(["path", "seconds", "events/s", "time vs orjson"], batch_rows),
        "",
        (f"dialogcheck load + check runs at {n_events / t_full:,.0f} events/s against {n_events / t_orjson:,.0f} for "
         f"orjson.loads: a ratio of {t_full / t_orjson:.1f}x the time ({t_full / t_json:.1f}x json.loads). "
         f"Of load + check, loading alone takes {t_load / t_full:.0%} and the checks alone {t_check / t_full:.0%}."),
        f"Check outcomes, all 18 keys: {outcomes['realistic']}; conversations passing every check: {passing:,} of {n_conv:,}.",
        "",
        f"## Linearity: one conversation of {', '.join(f'{s:,}' for s in sizes)} events (best of {repeats})",
        "",
        table(["path", *size_heads, growth_head, "verdict"], lin_rows),
        "",
        f"## Each assertion key alone on the {large:,}-event conversation (index prebuilt, best of {repeats})",
        "",
        table(["key", "scenario ms", "ns/event", "growth", "worst-case ms", "ns/event", "growth", "verdict"], key_rows),
        "",
        (f"growth = time per event at {large:,} events / time per event at {small:,}: 1.0 is linear, "
         f"O(n^2) would give {large / small:.1f}. Above {limits[0]:.2f} is `rising`, above {limits[1]:.2f} `SUPER-LINEAR`; "
         "calls under 1 ms that stop at an early match are `constant`."),
        "",
        "Super-linear: " + (", ".join(flagged) if flagged else "none")
        + ". Rising: " + (", ".join(rising) if rising else "none") + ".",
    ]
    report = "\n".join(text) + "\n"
    print(report)
    if args.profile:
        print(profile_batch(batch, realistic))
    (out / "results.md").write_text(report, encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {out / 'results.md'} and {out / 'results.json'}")
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
