"""The Acme Bank example agent: a small, deterministic stand-in for a Mantle agent.

`dialogcheck run examples/card_replace` talks to it through the Python
connector (`respond`), so the example runs with no server, no API key and no
network. It is plain standard-library Python with keyword rules, and it
records the native events of SPEC section 1 the way a Mantle tracker would:

- `card_replace`, a skill with one ordered block `main` (steps `reason`,
  `lookup`, `confirm`, `submit`): look the card up, remember the card, the
  reason and a draft order, ask to confirm, then order the replacement;
- `transfer_money`, a skill whose tools come from the `banking` MCP server:
  list the payees, confirm, submit (refused above 40 EUR: "daily limit reached");
- digressions while a skill waits for a confirmation (a balance or knowledge
  question: the skill is interrupted, answered, then resumed);
- out-of-scope requests (`cannot_help`) and goodbyes (`hangup`).

It has two deliberate bugs, for the example's scenarios to catch: see
`_propose_replacement` (a stolen card is ordered without asking first) and
`_order_replacement` (an order whose call failed is announced as placed).

When the scenario has an environment (`eval/environments/bank.yml`), the card
tools are called through it (`environment.call`), as a real agent calls its
back end; without one, the module's own tables answer.

State lives in a module-level dict keyed by conversation id; the runner may
call `respond` from several threads at once, so the dict is guarded by a lock
and each conversation by its own. Identifiers (orders, drafts, transfers) are
counted per conversation, never random or global, so the same script always
produces the same conversation (and an LLM cache keyed on the transcript hits).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["forget", "reset", "respond"]

# --- the bank's (fake) back end -----------------------------------------------

DEFAULT_CUSTOMER = "cus_981"
ACCOUNT_ID = "acc_12"
CARDS = {DEFAULT_CUSTOMER: [{"card_id": "card_4417", "last4": "4417", "status": "active"}]}
PAYEES = [{"payee_id": "p_7", "name": "Maria Lopez"}, {"payee_id": "p_9", "name": "Tom Becker"}]
BALANCE = {"balance": 1520.75, "currency": "EUR"}
TRANSFER_LIMIT = 40  # EUR: a larger transfer fails with "daily limit reached"
SHIPPING = {
    "standard": ("standard shipping (5-7 days)", 6),
    "express": ("express shipping (2 days)", 2),
}
KNOWLEDGE = (  # (keywords, answer), first match wins
    (r"salary|pay ?check|wages?", "Salary deposits arrive on the 25th of each month."),
    (r"fees?|costs?|price|charge", "A replacement card is free with standard shipping; express shipping costs 5 EUR."),
    (r"opening hours|branch|open\b", "Our branches are open 9:00-17:00, Monday to Friday; this chat never closes."),
    (r"limit", "You can send up to 40 EUR a day from this chat."),
    (r"how long|deliver|shipping|arrive", "Standard shipping takes 5-7 days, express shipping 2 days."),
)

GREETING = "Hi, I'm the Acme Bank assistant. How can I help?"
CONFIRM_BUTTONS = [{"title": "Yes, order it", "payload": "/affirm"}, {"title": "No", "payload": "/deny"}]
TRANSFER_BUTTONS = [{"title": "Send", "payload": "/affirm"}, {"title": "Cancel", "payload": "/deny"}]
REASON_BUTTONS = [
    {"title": "Damaged", "payload": "/reason_damaged"},
    {"title": "Lost", "payload": "/reason_lost"},
    {"title": "Stolen", "payload": "/reason_stolen"},
]

# --- understanding: keyword rules, case-insensitive ----------------------------


def _rule(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


CARD = _rule(r"\b(card|chip)\b")
REPLACE = _rule(r"\b(replace|replacement|new (one|card)|another card)\b")
REASONS = (  # checked in this order: "lost, or maybe stolen" is stolen
    ("stolen", _rule(r"\b(stolen|stole|theft|robbed|pickpocket(ed)?)\b")),
    ("lost", _rule(r"\b(lost|lose|misplaced|missing|can'?t find|cannot find)\b")),
    ("damaged", _rule(r"\b(damaged|broken|broke|cracked|crack|bent|snapped|stopped working|not working|doesn'?t work)\b")),
)
EXPRESS = _rule(r"\b(express|fast|faster|quick(ly)?|urgent(ly)?|asap|as soon as possible)\b")
BALANCE_ASKED = _rule(r"\bbalance\b|how much (money )?(do )?i have")
SALARY = _rule(rf"\b({KNOWLEDGE[0][0]})\b")
TRANSFER_VERB = _rule(r"\b(send|transfer|pay|wire)\b")
MONEY = _rule(r"\b(money|euros?|eur)\b|€")
AMOUNT = _rule(r"(?:€\s*(\d+(?:[.,]\d{1,2})?))|(\d+(?:[.,]\d{1,2})?)\s*(?:€|euros?\b|eur\b)")
BARE_AMOUNT = _rule(r"^\W*(\d+(?:[.,]\d{1,2})?)\W*$|\b(?:send|transfer|pay|wire)\s+(\d+(?:[.,]\d{1,2})?)\b")
PAYEE_NAME = _rule(r"\bto\s+(?:my\s+(?:friend|sister|brother|mum|mom|dad|colleague)\s+)?([a-z][a-z'-]*)")
NOT_NAMES = {  # words after "to" that are not a payee's name ("I want to send money")
    "send", "transfer", "pay", "wire", "make", "do", "get", "have", "be", "know", "see", "check", "order",
    "replace", "the", "a", "an", "me", "him", "her", "them", "someone", "somebody", "my", "your", "it",
}
STARTS_YES = _rule(r"^\W*(yes|yeah|yep|yup|sure|ok|okay|please do|go ahead|do it|confirm(ed)?|correct)\b")
STARTS_NO = _rule(r"^\W*(no|nope|nah|cancel|stop|don'?t|do not)\b")
CANCEL = _rule(r"\b(cancel|never ?mind|forget (it|that)|don'?t (order|send)|do not (order|send)|no need)\b")
WEAK_NO = _rule(r"\b(no|not)\b")
WEAK_YES = _rule(r"\b(yes|please|order it|send it|sounds good|go ahead|fine)\b")
GOODBYE = _rule(r"\b(bye|goodbye|that'?s all|that is all|nothing else|thanks?|thank you)\b")
HELLO = _rule(r"^\W*(hi|hello|hey|good (morning|afternoon|evening))\W*$")


def _reason(text: str) -> str | None:
    for reason, rule in REASONS:
        if rule.search(text):
            return reason
    return None


def _knowledge(text: str) -> str | None:
    for keywords, answer in KNOWLEDGE:
        if re.search(rf"\b({keywords})", text, re.IGNORECASE):
            return answer
    return None


def _is_question(text: str) -> bool:
    """A digression while a skill waits: a question, or a balance or salary request said plainly."""
    return "?" in text or bool(BALANCE_ASKED.search(text) or SALARY.search(text))


def _number(raw: str) -> int | float:
    value = float(raw.replace(",", "."))
    return int(value) if value.is_integer() else value


def _amount(text: str, bare: bool = False) -> int | float | None:
    found = AMOUNT.search(text) or (BARE_AMOUNT.search(text) if bare or TRANSFER_VERB.search(text) else None)
    if not found:
        return None
    return _number(next(g for g in found.groups() if g))


def _payee(text: str, bare: bool = False) -> tuple[dict | None, str | None]:
    """The payee a message names (`to Maria`, or with `bare` any payee's name), and the name as written."""
    named = [m.group(1) for m in PAYEE_NAME.finditer(text) if m.group(1).lower() not in NOT_NAMES]
    candidates = named + (re.findall(r"[a-z][a-z'-]*", text, re.IGNORECASE) if bare else [])
    for name in candidates:
        for payee in PAYEES:
            if name.lower() in (part.lower() for part in payee["name"].split()):
                return payee, name
    return None, (named[-1] if named else None)


def _eur(amount: int | float) -> str:
    return f"{amount:,.2f} EUR"


# --- one turn's output ----------------------------------------------------------


@dataclass
class _Turn:
    """The messages and native events one call of `respond` produces, in order."""

    messages: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)

    def say(self, text: str, utter: str | None = None, buttons: list[dict] | None = None) -> None:
        message: dict[str, Any] = {"text": text}
        if utter is not None:
            message["utter_name"] = utter
        if buttons:
            message["buttons"] = [dict(b) for b in buttons]
        self.messages.append(message)

    def event(self, kind: str, **fields: Any) -> None:
        self.events.append({"event": kind, **fields})

    def tool(
        self,
        name: str,
        arguments: dict | None = None,
        result: Any = "ok",
        *,
        skill: str | None = None,
        mcp_server: str | None = None,
        error: str | None = None,
    ) -> None:
        event: dict[str, Any] = {
            "event": "tool_executed",
            "tool_name": name,
            "arguments": dict(arguments or {}),
            "source": "mcp" if mcp_server else "local",
            "result": result,
            "is_error": error is not None,
            "metadata": {"skill_id": skill} if skill else {},
        }
        if mcp_server:
            event["mcp_server"] = mcp_server
        if error is not None:
            event["error_message"] = error
        self.events.append(event)

    def remember(self, key: str, value: Any) -> None:
        self.event("memory_set", key=key, value=value)

    def forget(self, key: str) -> None:
        self.event("memory_cleared", key=key)

    def output(self) -> dict:
        return {"messages": self.messages, "events": self.events}


# --- conversation state -----------------------------------------------------------


@dataclass
class _Conversation:
    customer_id: str = DEFAULT_CUSTOMER
    skill: str | None = None  # the active skill
    step: str | None = None  # what the active skill waits for: reason, details, confirm
    slots: dict[str, Any] = field(default_factory=dict)  # the active skill's values
    counters: dict[str, int] = field(default_factory=dict)
    ended: bool = False
    #: The run's environment when the scenario has one (`environment` keyword): the card tools are called through it.
    environment: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def next_id(self, prefix: str, base: int) -> str:
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        return f"{prefix}_{base + n}"

    def finish_skill(self) -> None:
        self.skill, self.step, self.slots = None, None, {}


_CONVERSATIONS: dict[str, _Conversation] = {}
_LOCK = threading.Lock()


def respond(conversation_id: str, text: str | None, initial_slots: dict | None = None, environment: Any = None) -> dict:
    """Answer one user message (`text` None opens the conversation with a greeting).

    Returns `{"messages": [{"text", "utter_name"?, "buttons"?}], "events": [...]}`,
    the events being the native events this turn produced (SPEC 6(b)); the
    caller records the user and bot events itself. `initial_slots` are written
    to memory (one `memory_set` each) before anything else; a `customer_id`
    slot chooses whose cards are looked up. `environment`, when the scenario has
    one, answers the card tools.
    """
    with _LOCK:
        state = _CONVERSATIONS.get(conversation_id)
        if state is None or text is None:
            state = _CONVERSATIONS[conversation_id] = _Conversation()
    with state.lock:
        state.environment = environment
        turn = _Turn()
        for key, value in (initial_slots or {}).items():
            turn.remember(key, value)
            if key == "customer_id" and isinstance(value, str):
                state.customer_id = value
        if text is None or text.strip() == "/session_start":
            turn.say(GREETING, "utter_greet")
        elif not state.ended:
            _handle(state, text.strip(), turn)
        return turn.output()


def forget(conversation_id: str) -> None:
    """Drop one conversation's state (the runner never needs to; long-lived hosts may)."""
    with _LOCK:
        _CONVERSATIONS.pop(conversation_id, None)


def reset() -> None:
    """Drop every conversation's state."""
    with _LOCK:
        _CONVERSATIONS.clear()


# --- dialogue -----------------------------------------------------------------------


def _handle(state: _Conversation, text: str, turn: _Turn) -> None:
    if not text:
        turn.say("Sorry, I didn't catch that. How can I help?", "utter_ask_rephrase")
    elif state.step == "confirm":
        _on_confirm(state, text, turn)
    elif state.step == "reason":
        _on_reason(state, text, turn)
    elif state.step == "details":
        _on_transfer_details(state, text, turn)
    else:
        _on_idle(state, text, turn)


def _on_idle(state: _Conversation, text: str, turn: _Turn) -> None:
    reason = _reason(text)
    if (reason and (CARD.search(text) or REPLACE.search(text))) or (REPLACE.search(text) and CARD.search(text)):
        _start_card_replace(state, text, reason, turn)
    elif TRANSFER_VERB.search(text) and (MONEY.search(text) or _amount(text) is not None or PAYEE_NAME.search(text)):
        _start_transfer(state, text, turn)
    elif BALANCE_ASKED.search(text):
        _answer_balance(turn)
    elif _knowledge(text) is not None:
        _answer_knowledge(text, turn)
    elif GOODBYE.search(text):
        _goodbye(state, turn)
    elif HELLO.search(text):
        turn.say("Hello! I can replace a card, send money or tell you your balance. What do you need?", "utter_greet")
    else:
        turn.tool("cannot_help", {"reason": "out_of_scope"})
        turn.say(
            "Sorry, I can't help with that. I can replace a card, send money or tell you your balance.",
            "utter_cannot_help",
        )


def _answer_balance(turn: _Turn) -> None:
    turn.tool("check_balance", {"account_id": ACCOUNT_ID}, dict(BALANCE))
    turn.say(f"Your balance is {_eur(BALANCE['balance'])}.", "utter_balance")


def _answer_knowledge(text: str, turn: _Turn) -> None:
    answer = _knowledge(text)
    turn.tool("search_knowledge", {"query": text}, answer or "no results")
    turn.say(answer or "I couldn't find anything about that in our help pages.")


def _goodbye(state: _Conversation, turn: _Turn) -> None:
    turn.say("Glad I could help. Goodbye!", "utter_goodbye")
    turn.tool("hangup")
    state.ended = True  # later messages get no answer, which ends a simulated conversation


def _activate(state: _Conversation, skill: str, turn: _Turn) -> None:
    turn.tool("activate", {"skill_id": skill})
    turn.event("skill_activated", skill_id=skill)
    state.skill, state.step, state.slots = skill, None, {}


def _cancel_skill(state: _Conversation, step: str, turn: _Turn) -> None:
    skill = state.skill
    turn.tool("cancel_skill", skill=skill)
    if skill == "card_replace":
        turn.event("ordered_block_cancelled", skill_id=skill, block_id="main", step_id=step)
    turn.event("skill_cancelled", skill_id=skill, step_id=step)
    if skill == "card_replace" and "draft_order_id" in state.slots:
        turn.forget("card_replace.draft_order_id")
    state.finish_skill()


def _complete_skill(state: _Conversation, turn: _Turn) -> None:
    turn.tool("complete_skill", skill=state.skill)
    turn.event("skill_completed", skill_id=state.skill)
    state.finish_skill()


# --- card_replace ---------------------------------------------------------------------


def _start_card_replace(state: _Conversation, text: str, reason: str | None, turn: _Turn) -> None:
    _activate(state, "card_replace", turn)
    turn.event("ordered_block_entered", skill_id="card_replace", block_id="main")
    state.slots["shipping"] = "express" if EXPRESS.search(text) else "standard"
    if BALANCE_ASKED.search(text):  # "...and what's my balance?": answered on the way
        _answer_balance(turn)
    if reason is None:
        state.step = "reason"
        turn.say("I can replace your card. What happened to it?", "utter_ask_replacement_reason", REASON_BUTTONS)
    else:
        _propose_replacement(state, reason, turn)


def _on_reason(state: _Conversation, text: str, turn: _Turn) -> None:
    payload = re.fullmatch(r"/reason_(damaged|lost|stolen)", text)
    reason = payload.group(1) if payload else _reason(text)
    if reason is not None:
        if EXPRESS.search(text):
            state.slots["shipping"] = "express"
        _propose_replacement(state, reason, turn)
    elif STARTS_NO.search(text) or CANCEL.search(text):
        _cancel_skill(state, "reason", turn)
        turn.say("No problem, I've stopped the replacement. Nothing was ordered.", "utter_replacement_cancelled")
    else:
        turn.say("Is your card damaged, lost or stolen?", "utter_ask_replacement_reason", REASON_BUTTONS)


def _propose_replacement(state: _Conversation, reason: str, turn: _Turn) -> None:
    arguments = {"customer_id": state.customer_id}
    if state.environment is not None:
        answer = state.environment.call("lookup_card", arguments)
        found = answer["result"] if not answer["is_error"] and isinstance(answer["result"], dict) else {}
        cards = [dict(card) for card in found.get("cards", [])]
        turn.tool("lookup_card", arguments, answer["result"], skill="card_replace", error=str(answer["result"]) if answer["is_error"] else None)
    else:
        cards = [dict(card) for card in CARDS.get(state.customer_id, [])]
        turn.tool("lookup_card", arguments, json.dumps({"cards": cards}), skill="card_replace")
    active = [card for card in cards if card["status"] == "active"]
    if not active:
        _cancel_skill(state, "lookup", turn)
        turn.say("I couldn't find an active card on your profile, so I can't order a replacement.", "utter_no_active_card")
        return
    card = active[0]
    state.slots.update(card_id=card["card_id"], last4=card["last4"], reason=reason)
    turn.remember("card_replace.selected_card_id", card["card_id"])
    turn.remember("card_replace.replacement_reason", reason)
    state.slots["draft_order_id"] = state.next_id("draft", 77)
    turn.remember("card_replace.draft_order_id", state.slots["draft_order_id"])
    if reason == "stolen":
        # THE DELIBERATE BUG of this example: "a stolen card is urgent, save the
        # customer a turn", so the order goes out without the confirmation the
        # policy requires. The scenario run_stolen_card.yml catches it.
        _order_replacement(state, turn)
        return
    state.step = "confirm"
    shipping = SHIPPING[state.slots["shipping"]][0]
    turn.say(
        f"I found your card ending in {card['last4']}. Shall I order a replacement with {shipping}?",
        "utter_confirm_replacement",
        CONFIRM_BUTTONS,
    )


def _ask_again(state: _Conversation, turn: _Turn, lead: str) -> None:
    if state.skill == "card_replace":
        shipping = SHIPPING[state.slots["shipping"]][0]
        turn.say(f"{lead} shall I order the replacement with {shipping}?", "utter_confirm_replacement", CONFIRM_BUTTONS)
    else:
        payee = state.slots["payee"]["name"]
        turn.say(f"{lead} send {_eur(state.slots['amount'])} to {payee}?", "utter_confirm_transfer", TRANSFER_BUTTONS)


def _on_confirm(state: _Conversation, text: str, turn: _Turn) -> None:
    """The skill waits for a yes or no; a question in between is a digression."""
    card = state.skill == "card_replace"
    if text == "/affirm" or STARTS_YES.search(text):
        if card and EXPRESS.search(text):
            state.slots["shipping"] = "express"
        _accept(state, turn)
    elif text == "/deny" or STARTS_NO.search(text) or CANCEL.search(text):
        _decline(state, turn)
    elif _is_question(text):
        _digress(state, text, turn)
    elif WEAK_NO.search(text):
        _decline(state, turn)
    elif card and EXPRESS.search(text):
        state.slots["shipping"] = "express"
        _ask_again(state, turn, "Sure, express it is:")
    elif WEAK_YES.search(text):
        _accept(state, turn)
    elif GOODBYE.search(text):
        _decline(state, turn)
        _goodbye(state, turn)
    else:
        _ask_again(state, turn, "Sorry, I need a yes or a no:")


def _accept(state: _Conversation, turn: _Turn) -> None:
    if state.skill == "card_replace":
        _order_replacement(state, turn)
    else:
        _submit_transfer(state, turn)


def _decline(state: _Conversation, turn: _Turn) -> None:
    skill = state.skill
    _cancel_skill(state, "confirm", turn)
    if skill == "card_replace":
        turn.say("No problem, I've cancelled the replacement. Nothing was ordered.", "utter_replacement_cancelled")
    else:
        turn.say("OK, I won't send anything.", "utter_transfer_cancelled")


def _digress(state: _Conversation, text: str, turn: _Turn) -> None:
    skill, block = state.skill, state.skill == "card_replace"
    turn.event("skill_interrupted", skill_id=skill, step_id="confirm")
    if block:
        turn.event("ordered_block_interrupted", skill_id=skill, block_id="main", step_id="confirm")
    if BALANCE_ASKED.search(text):
        _answer_balance(turn)
    else:
        _answer_knowledge(text, turn)
    turn.event("skill_resumed", skill_id=skill, step_id="confirm")
    if block:
        turn.event("ordered_block_resumed", skill_id=skill, block_id="main", step_id="confirm")
    _ask_again(state, turn, "Back to your card:" if block else "Back to your transfer:")


def _order_replacement(state: _Conversation, turn: _Turn) -> None:
    slots = state.slots
    order_id = state.next_id("ord", 5521)
    eta_days = SHIPPING[slots["shipping"]][1]
    arguments = {"card_id": slots["card_id"], "reason": slots["reason"], "shipping": slots["shipping"]}
    if state.environment is not None:
        answer = state.environment.call("order_replacement", arguments)
        # THE SECOND DELIBERATE BUG: the answer is logged, but never looked at, so an order whose call timed out
        # or failed is announced below as placed. The example's `run_order_timeout` catches it in the end state.
        error = str(answer["result"]) if answer["is_error"] else None
        turn.tool("order_replacement", arguments, answer["result"], skill="card_replace", error=error)
    else:
        turn.tool("order_replacement", arguments, {"order_id": order_id, "eta_days": eta_days}, skill="card_replace")
    turn.forget("card_replace.draft_order_id")
    turn.event("ordered_block_completed", skill_id="card_replace", block_id="main", step_id="submit")
    _complete_skill(state, turn)
    turn.say(
        f"Done: your replacement card has been ordered (order {order_id}), arriving in {eta_days} days.",
        "utter_replacement_ordered",
    )


# --- transfer_money (tools from the `banking` MCP server) ------------------------------------


def _start_transfer(state: _Conversation, text: str, turn: _Turn) -> None:
    _activate(state, "transfer_money", turn)
    turn.tool("list_payees", {}, [dict(p) for p in PAYEES], skill="transfer_money", mcp_server="banking")
    amount = _amount(text)
    payee, name = _payee(text)
    if name is not None and payee is None:
        _cancel_skill(state, "payee", turn)
        known = " and ".join(p["name"] for p in PAYEES)
        turn.say(f"I couldn't find {name} among your payees ({known}).", "utter_payee_not_found")
        return
    _fill_transfer(state, amount, payee, turn)


def _on_transfer_details(state: _Conversation, text: str, turn: _Turn) -> None:
    if STARTS_NO.search(text) or CANCEL.search(text):
        _cancel_skill(state, "details", turn)
        turn.say("OK, I won't send anything.", "utter_transfer_cancelled")
        return
    amount = _amount(text, bare=True) if "amount" not in state.slots else None
    payee, _ = _payee(text, bare=True) if "payee" not in state.slots else (None, None)
    _fill_transfer(state, amount, payee, turn)


def _fill_transfer(state: _Conversation, amount: int | float | None, payee: dict | None, turn: _Turn) -> None:
    if amount is not None:
        state.slots["amount"] = amount
        turn.remember("transfer_money.amount", amount)
    if payee is not None:
        state.slots["payee"] = payee
        turn.remember("transfer_money.payee_id", payee["payee_id"])
    known = " or ".join(p["name"] for p in PAYEES)
    if "amount" not in state.slots:
        state.step = "details"
        to = f"to {state.slots['payee']['name']}" if "payee" in state.slots else f"and to whom ({known})"
        turn.say(f"How much would you like to send, {to}?", "utter_ask_transfer_amount")
    elif "payee" not in state.slots:
        state.step = "details"
        turn.say(f"Who should I send {_eur(state.slots['amount'])} to: {known}?", "utter_ask_transfer_payee")
    else:
        state.step = "confirm"
        turn.say(
            f"Send {_eur(state.slots['amount'])} to {state.slots['payee']['name']}?",
            "utter_confirm_transfer",
            TRANSFER_BUTTONS,
        )


def _submit_transfer(state: _Conversation, turn: _Turn) -> None:
    amount, payee = state.slots["amount"], state.slots["payee"]
    arguments = {"payee_id": payee["payee_id"], "amount": amount, "currency": "EUR"}
    if amount > TRANSFER_LIMIT:
        turn.tool("submit_transfer", arguments, None, skill="transfer_money", mcp_server="banking", error="daily limit reached")
        _cancel_skill(state, "submit", turn)
        turn.say("Sorry, the transfer failed: your daily limit is reached. Nothing was sent.", "utter_transfer_failed")
        return
    transfer_id = state.next_id("tr", 9001)
    result = {"transfer_id": transfer_id, "status": "completed"}
    turn.tool("submit_transfer", arguments, result, skill="transfer_money", mcp_server="banking")
    _complete_skill(state, turn)
    turn.say(f"Done: {_eur(amount)} sent to {payee['name']} (transfer {transfer_id}).", "utter_transfer_done")
