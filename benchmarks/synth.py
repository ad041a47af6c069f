"""Seeded generator of realistic synthetic conversations, streamed to JSONL (one `{"events": [...]}` a line).

The shape of every conversation is fitted to the 200 recorded tau-bench
airline runs (`/work/shared/data/tau-bench`, MIT): its tool log, turn by turn,
is resampled from theirs, and argument and result shapes follow theirs. On top
of that it carries what a Mantle agent records around the same dialogue
(SPEC section 1): skills and ordered blocks with their whole lifecycle
(interrupted by a digression, resumed, cancelled after a failed write or when
the customer changes their mind), memory writes and clears, framework tools
(`activate`, `set_fields`, `complete_skill`, `cancel_skill`, `listen`,
`hangup`), template responses with buttons, and events checks ignore
(`action`, `session_started`).

The fit is data, `benchmarks/fixtures/tau_bench_fit.json`, remade with

    .venv/bin/python benchmarks/synth.py --fit /work/shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json

and generation reads only that file, so it needs neither the data nor
dialogcheck. The same seed gives byte-identical output:

    .venv/bin/python benchmarks/synth.py --conversations 100000 --seed 1 --out benchmarks/out/scale/convs.jsonl
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
FIT_PATH = HERE / "fixtures" / "tau_bench_fit.json"

#: The skill that handles each write; reads with no write after them belong to `trip_info`.
SKILL_OF = {
    "book_reservation": "book_flight",
    "cancel_reservation": "cancel_booking",
    "send_certificate": "compensation",
    "update_reservation_baggages": "modify_reservation",
    "update_reservation_flights": "modify_reservation",
    "update_reservation_passengers": "modify_reservation",
    "transfer_to_human_agents": "handoff",
    None: "trip_info",
}
#: tau-bench's airline tools that change the database (and the handoff that ends an episode); each starts a skill here.
WRITES = tuple(tool for tool in SKILL_OF if tool is not None)
#: tau-bench's helper tools run in the agent process; the airline API is an MCP server.
LOCAL_TOOLS = frozenset({"calculate", "think"})
MCP_SERVER = "airline"

# How often the Mantle layer does what tau-bench's log cannot show (chosen, not fitted).
P_CONFIRM = 0.9  # the agent asks before a write, as the airline policy says
P_GIVE_UP = 0.1  # the customer says no at the confirmation
P_DIGRESSION = 0.1  # a policy question in the middle of a request
P_UNPREPARED = 0.4  # customers who come without their user ID and with questions
P_AUTH_DIGRESSION = (0.15, 0.8)  # a question while being asked for the user ID (others, unprepared)
P_AUTH_CANCEL = (0.08, 0.8)  # the user ID not at hand (others, unprepared)
LOOKUPS = ("get_user_details", "get_reservation_details")
P_LISTEN = 0.05  # the agent waits for the user with the `listen` framework tool
#: Mantle's lifecycle tools (SPEC section 1): recorded as `tool_executed`, never counted as tool calls.
FRAMEWORK_TOOLS = frozenset({"activate", "complete", "cancel", "complete_skill", "cancel_skill", "set_fields", "correct",
                             "resolve_tool_confirmation", "listen", "hangup"})


@dataclass(frozen=True)
class Profile:
    """What the agent and the customer do around the fitted tool log, and how often (chosen, not fitted).

    The default is the benchmark's usual data (the rates above). The other profiles of `PROFILES` keep the
    fitted tool log and its shapes and change the rest, so that the checks of `fixtures/` mostly fail or
    mostly pass. A rate of 0 draws nothing from the random stream, so the default's bytes do not depend on
    the rates only other profiles set.
    """

    confirm: float = P_CONFIRM
    give_up: float = P_GIVE_UP
    digression: float = P_DIGRESSION
    unprepared: float = P_UNPREPARED
    auth_digression: tuple[float, float] = P_AUTH_DIGRESSION
    auth_cancel: tuple[float, float] = P_AUTH_CANCEL
    #: Requests a conversation makes at most before its closing turns (the fitted walk, cut there).
    max_requests: int = 8
    #: Turns a request takes at most: its last ones (the write is in the last). None: as fitted.
    max_turns: int | None = None
    #: The one request every conversation makes (a write), in place of the fitted walk; its openings are the
    #: fitted ones that follow the airline policy: the customer identified by a turn that looks up both the
    #: user and the reservation, after the first turn.
    request: str | None = None
    # An agent that breaks the policy, or a sloppy implementation of it:
    skip_identification: float = 0.0  #: never asks for the user ID
    misnamed_user_id: float = 0.0  #: stores the user ID under another key (`project.userId`, ...)
    record_keys: float = 0.0  #: keeps a read reservation under a key named after it (`reservation.ABC123`)
    fraud_flag: float = 0.0  #: flags the customer (`project.fraud_flag`)
    forbidden_reply: float = 0.0  #: answers "As an AI language model ..." or with `utter_cannot_help`
    bad_arguments: float = 0.0  #: a flight change with a cabin or payment the API does not take
    stray_booking: float = 0.0  #: books a new reservation (which fails) on top of a change


#: The data sets of the benchmarks, by name (`synth.py --profile NAME`).
PROFILES = {
    # The fitted rates: most conversations fail some checks of the scenario, about a third fail the SOP.
    "tau": Profile(),
    # One request a conversation (about 35 events) from an agent that breaks the policy often: most
    # conversations fail several checks of the scenario and of the SOP, of every family.
    "failing": Profile(confirm=0.5, max_requests=1, max_turns=4, skip_identification=0.35, misnamed_user_id=0.35, record_keys=0.8,
                       fraud_flag=0.15, forbidden_reply=0.15, bad_arguments=0.5, stray_booking=0.3),
    # One flight change a conversation, by the policy, from a customer who follows the scenario's story
    # (no user ID at hand, a question while asked for it): most conversations pass every check.
    "passing": Profile(confirm=1.0, give_up=0.0, unprepared=1.0, auth_digression=(1.0, 1.0), auth_cancel=(1.0, 1.0),
                       max_requests=1, max_turns=4, request="update_reservation_flights"),
}


# --------------------------------------------------------------------------- fitting


def _turns(events: list[dict]) -> list[list[tuple[str, bool]]]:
    """The tool calls of each user turn, as (name, is_error)."""
    turns: list[list[tuple[str, bool]]] = []
    for event in events:
        if event["event"] == "user":
            turns.append([])
        elif event["event"] == "tool_executed":
            if not turns:
                turns.append([])
            turns[-1].append((event["tool_name"], bool(event.get("is_error"))))
    return turns


def _segments(turns: list[list[tuple[str, bool]]]) -> list[tuple[str | None, list[list[tuple[str, bool]]]]]:
    """Cut a run's turns after each write: (write or None, the turns up to and including it)."""
    segments, current = [], []
    for calls in turns:
        part: list[tuple[str, bool]] = []
        for call in calls:
            part.append(call)
            if call[0] in WRITES:
                current.append(part)
                segments.append((call[0], current))
                current, part = [], []
        if part or not calls:
            current.append(part)
    if current:
        segments.append((None, current))
    return segments


def _quantiles(values: list[int], n: int = 101) -> list[int]:
    values = sorted(values)
    return [values[round(i * (len(values) - 1) / (n - 1))] for i in range(n)]


def _histogram(values) -> dict[str, int]:
    return {str(k): v for k, v in sorted(Counter(values).items())}


def fit(data_path: Path) -> dict[str, Any]:
    """The distributions the generator draws from, measured on tau-bench's recorded runs."""
    from dialogcheck.importers import tau_bench  # only fitting needs dialogcheck

    runs = [c.events for c in tau_bench.read(data_path)]
    segments: dict[str, list] = defaultdict(list)
    openings: dict[str, list] = defaultdict(list)
    transitions: dict[str, Counter] = defaultdict(Counter)
    lists: dict[str, Counter] = defaultdict(Counter)
    user_lengths, bot_lengths = [], []
    for events in runs:
        previous = "START"
        for position, (write, turns) in enumerate(_segments(_turns(events))):
            turns = [[[name, err] for name, err in calls] for calls in turns]
            (openings if position == 0 else segments)[write or "none"].append(turns)
            if write:
                transitions[previous][write] += 1
                previous = write
        transitions[previous]["END"] += 1
        for event in events:
            kind = event["event"]
            if kind == "user":
                user_lengths.append(len(event["text"]))
            elif kind == "bot":
                bot_lengths.append(len(event["text"] or ""))
            elif kind == "tool_executed":
                name, arguments = event["tool_name"], event["arguments"]
                for key, value in arguments.items():
                    if isinstance(value, list):
                        lists[f"{name}.{key}"][len(value)] += 1
                if name.startswith("search_") and not event.get("is_error"):
                    lists[f"{name}.results"][len(orjson.loads(event["result"]))] += 1
                if name == "get_user_details":
                    user = orjson.loads(event["result"])
                    lists["user.payment_methods"][len(user["payment_methods"])] += 1
                    lists["user.reservations"][len(user["reservations"])] += 1
                if name == "get_reservation_details" and not event.get("is_error"):
                    reservation = orjson.loads(event["result"])
                    lists["reservation.flights"][len(reservation["flights"])] += 1
                    lists["reservation.passengers"][len(reservation["passengers"])] += 1
    return {
        "source": "sierra-research/tau-bench historical_trajectories/gpt-4o-airline.json (MIT)",
        "runs": len(runs),
        "note": "Made by `benchmarks/synth.py --fit`. openings and segments: each run's tool calls per user turn, "
        "cut after each write (name, is_error), its first part under openings, the others under segments; transitions: which write follows which; lists: lengths of list arguments and results.",
        "transitions": {k: dict(sorted(v.items())) for k, v in sorted(transitions.items())},
        "openings": dict(sorted(openings.items())),
        "segments": dict(sorted(segments.items())),
        "lists": {k: _histogram(v.elements()) for k, v in sorted(lists.items())},
        "text_lengths": {"user": _quantiles(user_lengths), "bot": _quantiles(bot_lengths)},
        "observed": describe(runs),
    }


def describe(conversations) -> dict[str, Any]:
    """Summary figures of a set of conversations (lists of event dicts): what the fit is judged by."""
    n = events = user_turns = tool_calls = errors = 0
    mix: Counter = Counter()
    per_turn: Counter = Counter()
    for conv in conversations:
        n += 1
        events += len(conv)
        in_turn = None
        for event in conv:
            kind = event["event"]
            if kind == "user" and not event["text"].startswith("/"):
                user_turns += 1
                if in_turn is not None:
                    per_turn[in_turn] += 1
                in_turn = 0
            elif kind == "tool_executed" and event["tool_name"] not in FRAMEWORK_TOOLS:
                tool_calls += 1
                errors += bool(event.get("is_error"))
                mix[event["tool_name"]] += 1
                in_turn = (in_turn or 0) + 1
        if in_turn is not None:
            per_turn[in_turn] += 1
    total_turns = sum(per_turn.values()) or 1
    return {
        "conversations": n,
        "events_per_conversation": round(events / n, 2),
        "user_turns_per_conversation": round(user_turns / n, 2),
        "tool_calls_per_conversation": round(tool_calls / n, 2),
        "tool_error_share": round(errors / max(tool_calls, 1), 4),
        "tool_mix": {k: round(v / max(tool_calls, 1), 4) for k, v in mix.most_common()},
        "turns_by_tool_calls": {str(k): round(per_turn[k] / total_turns, 4) for k in sorted(per_turn)},
    }


# --------------------------------------------------------------------------- values

FIRST = ["mia", "omar", "noah", "mei", "ivan", "amelia", "lucas", "sofia", "yusuf", "chen", "raj", "emma",
         "liam", "aarav", "fatima", "olivia", "juan", "anya", "harper", "mohamed", "isabella", "ethan"]
LAST = ["li", "rossi", "muller", "brown", "garcia", "ahmed", "kim", "silva", "khan", "wang", "patel", "smith",
        "lopez", "nguyen", "taylor", "davis", "sanchez", "thomas", "moore", "jackson", "martin", "lee"]
AIRPORTS = ["JFK", "SEA", "ATL", "LAX", "ORD", "DFW", "DEN", "SFO", "LAS", "MCO", "EWR", "IAH", "PHX", "MIA",
            "BOS", "MSP", "DTW", "PHL", "LGA", "CLT"]
CITIES = ["New York", "Seattle", "Atlanta", "Los Angeles", "Chicago", "Dallas", "Denver", "San Francisco",
          "Las Vegas", "Orlando", "Newark", "Houston", "Phoenix", "Miami", "Boston", "Minneapolis", "Detroit",
          "Philadelphia", "New York", "Charlotte"]
CABINS = ["basic_economy", "economy", "business"]
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
ERRORS = {
    "book_reservation": ["Error: payment amount does not add up, total price is {n}, but paid {m}",
                         "Error: not enough seats on flight {flight}", "Error: gift card balance is not enough"],
    "update_reservation_flights": ["Error: flight {flight} not available on date 2024-05-{day:02d}",
                                   "Error: gift card balance is not enough",
                                   "Error: certificate cannot be used to update reservation"],
    "update_reservation_baggages": ["Error: payment method not found"],
    "update_reservation_passengers": ["Error: number of passengers does not match"],
    "cancel_reservation": ["Error: reservation not found"],
    "send_certificate": ["Error: user not found"],
}

# Sentences the texts are made of, cut to the fitted lengths.
BOT_FILLER = (
    "Here are the details I found for you. The flight departs on time and the cabin you chose has seats left. "
    "Please note that basic economy fares cannot be changed after booking. Checked bags are free for gold "
    "members, up to three per passenger. Travel insurance covers cancellations for health or weather reasons. "
    "Let me know which option you prefer, or if you would like me to look for other dates. Refunds go back to "
    "the original payment method within five to seven business days. Certificates cannot be combined with gift "
    "cards on the same booking. If anything else comes up, I am happy to help. "
)
USER_FILLER = (
    "I want to keep the same cabin if possible. My daughter is travelling with me. I don't want to pay more "
    "than necessary, and I would rather not fly before eleven in the morning. Use the card ending in 7447 "
    "please. That is all the information I have right now. "
)
REQUESTS = {
    "book_flight": ["Hi! I'd like to book a one-way flight from {city} to {city2} on May {day}th.",
                    "I need to book a trip to {city2} for two people."],
    "cancel_booking": ["I need to cancel my reservation {res}.", "Hi, please cancel my upcoming trip, it's {res}."],
    "compensation": ["My flight was delayed by hours and I want some compensation.",
                     "You cancelled my flight, what will you do about it?"],
    "modify_reservation": ["I want to change the flights on reservation {res} to a later date.",
                           "Can I add a checked bag to my booking {res}?",
                           "I need to update the passenger name on reservation {res}."],
    "handoff": ["I want to talk to a human agent, please.", "This is too complicated, get me a person."],
    "trip_info": ["What's the status of my reservation {res}?", "How many bags can I bring on my trip?"],
}
CLOSINGS = ["Thank you so much for your help!", "No, that's all. Thanks!", "Great, thanks. Bye!"]
DIGRESSIONS = ["Wait, before that: how many checked bags are free in economy?",
               "Quick question, is travel insurance refundable?",
               "Actually, what's your policy on cancelling within 24 hours?"]


def _draw(rng: Random, histogram: tuple[list[int], list[int]]) -> int:
    """One value from a fitted histogram (values, cumulative counts)."""
    values, cumulative = histogram
    return values[bisect.bisect_right(cumulative, rng.random() * cumulative[-1])]


class Generator:
    """Makes one conversation at a time from one seeded random stream: same seed, same bytes."""

    def __init__(self, seed: int, fit_data: dict[str, Any] | None = None, *, short: bool = False,
                 profile: Profile = PROFILES["tau"]):
        fit_data = fit_data or load_fit()
        self.rng = Random(seed)
        self.short = short
        self.profile = profile
        self.segments = fit_data["segments"]
        self.openings = fit_data["openings"]
        if profile.max_turns is not None:
            self.openings, self.segments = ({write: [turns[-profile.max_turns:] for turns in pool] for write, pool in fitted.items()}
                                            for fitted in (self.openings, self.segments))
        if profile.request is not None:
            self.openings = {**self.openings, profile.request: [t for t in self.openings[profile.request] if _by_the_policy(t)]}
        self.transitions = {k: (list(v), list(itertools.accumulate(v.values()))) for k, v in fit_data["transitions"].items()}
        self.lists = {
            k: ([int(x) for x in v], list(itertools.accumulate(v.values()))) for k, v in fit_data["lists"].items()
        }
        self.user_lengths = fit_data["text_lengths"]["user"]
        self.bot_lengths = fit_data["text_lengths"]["bot"]
        self.index = 0

    # -- small helpers (hot path: one call per event) --------------------------------

    def _text(self, head: str, lengths: list[int], filler: str) -> str:
        target = lengths[int(self.rng.random() * len(lengths))]
        if self.short or len(head) >= target:
            return head
        start = int(self.rng.random() * 200)
        return head + " " + (filler * 3)[start : start + target - len(head)].strip()

    def _emit(self, kind: str, fields: dict) -> None:
        self.t += 0.4 + self.rng.random() * 2.5
        # `event` and `timestamp` first, as Rasa writes an event (and as dialogcheck's importers and `run` do).
        self.events.append({"event": kind, "timestamp": round(self.t, 3), **fields})

    def _int(self, low: int, high: int) -> int:
        """`randrange(low, high)` at a third of the cost (one `random()` call)."""
        return low + int(self.rng.random() * (high - low))

    def _pick(self, seq):
        return seq[int(self.rng.random() * len(seq))]

    def _chance(self, rate: float) -> bool:
        """True with probability `rate`; a rate of 0 draws nothing, so it leaves the random stream as it was."""
        return rate > 0 and self.rng.random() < rate

    def _id(self, n: int = 6) -> str:
        return "".join(self.rng.choices(ALNUM, k=n))

    # -- entities --------------------------------------------------------------------

    def _customer(self) -> None:
        rng = self.rng
        first, last = self._pick(FIRST), self._pick(LAST)
        self.first, self.last = first, last
        self.user_id = f"{first}_{last}_{self._int(1000, 9999)}"
        count = _draw(rng, self.lists["user.payment_methods"])
        kinds = ["credit_card", "gift_card", "certificate"]
        self.payments = [f"{kinds[i % 3] if i else 'credit_card'}_{self._int(10**6, 10**7)}" for i in range(count)]
        self.reservations = [self._id() for _ in range(_draw(rng, self.lists["user.reservations"]))]

    def _flights(self, count: int) -> list[dict]:
        date = f"2024-05-{self._int(10, 30):02d}"
        return [{"flight_number": f"HAT{self._int(1, 300):03d}", "date": date} for _ in range(count)]

    def _passengers(self, count: int) -> list[dict]:
        people = [{"first_name": self.first.title(), "last_name": self.last.title(), "dob": "1990-04-05"}]
        for _ in range(count - 1):
            people.append({"first_name": self._pick(FIRST).title(), "last_name": self._pick(LAST).title(),
                           "dob": f"19{self._int(50, 99)}-{self._int(1, 12):02d}-{self._int(1, 28):02d}"})
        return people

    def _reservation(self, reservation_id: str, **extra: Any) -> dict:
        rng = self.rng
        flights = self._flights(_draw(rng, self.lists["reservation.flights"]))
        for flight in flights:
            flight["origin"], flight["destination"] = rng.sample(AIRPORTS, 2)
            flight["price"] = self._int(50, 1800)
        return {"reservation_id": reservation_id, "user_id": self.user_id, "origin": flights[0]["origin"],
                "destination": flights[-1]["destination"], "flight_type": self._pick(["one_way", "round_trip"]),
                "cabin": self._pick(CABINS), "flights": flights,
                "passengers": self._passengers(_draw(rng, self.lists["reservation.passengers"])),
                "payment_history": [{"payment_id": self.payments[0], "amount": sum(f["price"] for f in flights)}],
                "created_at": f"2024-05-{self._int(1, 15):02d}T{self._int(0, 24):02d}:00:00",
                "total_baggages": self._int(0, 4), "nonfree_baggages": self._int(0, 2),
                "insurance": self._pick(["yes", "no"]), **extra}

    def _flight_options(self, count: int, origin: str, destination: str, date: str) -> list[dict]:
        return [{"flight_number": f"HAT{self._int(1, 300):03d}", "origin": origin, "destination": destination,
                 "scheduled_departure_time_est": f"{self._int(0, 24):02d}:00:00",
                 "scheduled_arrival_time_est": f"{self._int(0, 24):02d}:30:00", "status": "available",
                 "available_seats": {c: self._int(0, 20) for c in CABINS},
                 "prices": {c: self._int(50, 900) for c in CABINS}, "date": date} for _ in range(count)]

    # -- one tool call: arguments and result as tau-bench shapes them ------------------

    def _call(self, name: str, failed: bool, skill: str) -> dict:
        rng = self.rng
        reservation = self._pick(self.reservations) if self.reservations else self._id()
        result: Any
        if name == "get_user_details":
            arguments = {"user_id": self.user_id}
            methods = {p: {"source": p.rsplit("_", 1)[0], "id": p} for p in self.payments}
            result = {"name": {"first_name": self.first.title(), "last_name": self.last.title()},
                      "address": {"address1": f"{self._int(1, 999)} Sunset Drive", "city": self._pick(CITIES),
                                  "country": "USA", "zip": f"{self._int(10000, 99999)}"},
                      "email": f"{self.first}.{self.last}@example.com", "dob": "1990-04-05",
                      "payment_methods": methods, "membership": self._pick(["regular", "silver", "gold"]),
                      "reservations": self.reservations}
        elif name == "get_reservation_details":
            arguments = {"reservation_id": reservation}
            result = self._reservation(reservation)
        elif name in ("search_direct_flight", "search_onestop_flight"):
            origin, destination = rng.sample(AIRPORTS, 2)
            date = f"2024-05-{self._int(10, 30):02d}"
            arguments = {"origin": origin, "destination": destination, "date": date}
            count = _draw(rng, self.lists[f"{name}.results"])
            if name == "search_direct_flight":
                result = self._flight_options(count, origin, destination, date)
            else:
                hub = self._pick(AIRPORTS)
                result = [self._flight_options(1, origin, hub, date) + self._flight_options(1, hub, destination, date)
                          for _ in range(count)]
        elif name == "list_all_airports":
            arguments, result = {}, dict(zip(AIRPORTS, CITIES))
        elif name == "calculate":
            a, b = self._int(50, 900), self._int(50, 900)
            arguments, result = {"expression": f"{a} + {b}"}, f"{a + b}.0"
        elif name == "think":
            arguments = {"thought": self._text("The user wants to change the booking; I should check the fare rules first.",
                                               self.bot_lengths, BOT_FILLER)}
            result = ""
        elif name == "book_reservation":
            flights = self._flights(_draw(rng, self.lists["book_reservation.flights"]))
            count = _draw(rng, self.lists["book_reservation.payment_methods"])
            arguments = {"user_id": self.user_id, "origin": self._pick(AIRPORTS), "destination": self._pick(AIRPORTS),
                         "flight_type": self._pick(["one_way", "round_trip"]), "cabin": self._pick(CABINS),
                         "flights": flights, "passengers": self._passengers(_draw(rng, self.lists["book_reservation.passengers"])),
                         "payment_methods": [{"payment_id": self._pick(self.payments), "amount": self._int(20, 900)}
                                             for _ in range(count)],
                         "total_baggages": self._int(0, 4), "nonfree_baggages": self._int(0, 2),
                         "insurance": self._pick(["yes", "no"])}
            result = self._reservation(self._id(), flights=[dict(f, price=self._int(50, 900)) for f in flights])
        elif name == "update_reservation_flights":
            arguments = {"reservation_id": reservation, "cabin": self._pick(CABINS),
                         "flights": self._flights(_draw(rng, self.lists["update_reservation_flights.flights"])),
                         "payment_id": self._pick(self.payments)}
            if self._chance(self.profile.bad_arguments):
                wrong = self._pick([("cabin", "Economy"), ("cabin", "premium"), ("payment_id", "card ending 7447")])
                arguments[wrong[0]] = wrong[1]
            result = self._reservation(reservation, cabin=arguments["cabin"])
        elif name == "update_reservation_baggages":
            arguments = {"reservation_id": reservation, "total_baggages": self._int(1, 5),
                         "nonfree_baggages": self._int(0, 3), "payment_id": self._pick(self.payments)}
            result = self._reservation(reservation, total_baggages=arguments["total_baggages"])
        elif name == "update_reservation_passengers":
            arguments = {"reservation_id": reservation, "passengers": self._passengers(self._int(1, 3))}
            result = self._reservation(reservation, passengers=arguments["passengers"])
        elif name == "cancel_reservation":
            arguments = {"reservation_id": reservation}
            result = self._reservation(reservation, status="cancelled")
        elif name == "send_certificate":
            amount = self._pick([50, 100, 150, 200, 250])
            arguments = {"user_id": self.user_id, "amount": amount}
            result = f"Certificate certificate_{self._int(10**6, 10**7)} added to user {self.user_id} with amount {amount}."
        elif name == "transfer_to_human_agents":
            arguments = {"summary": self._text(f"User {self.first.title()} {self.last.title()} needs help that the "
                                               "automated system cannot give.", self.bot_lengths, BOT_FILLER)}
            result = "Transfer successful"
        else:  # a tool the fit knows and this generator does not: keep its name, no arguments
            arguments, result = {}, "ok"
        fields: dict[str, Any] = {"tool_name": name, "arguments": arguments}
        if name in LOCAL_TOOLS:
            fields["source"] = "local"
        else:
            fields["source"], fields["mcp_server"] = "mcp", MCP_SERVER
        if failed:
            template = self._pick(ERRORS.get(name, ["Error: {flight} failed"]))
            message = template.format(n=self._int(300, 5000), m=self._int(100, 300),
                                      flight=f"HAT{self._int(1, 300):03d}", day=self._int(10, 30))
            fields.update(result=message, is_error=True, error_message=message)
        else:
            fields["result"] = result if isinstance(result, str) else orjson.dumps(result).decode()
            fields["is_error"] = False
        fields["metadata"] = {"skill_id": skill}
        return fields

    # -- Mantle events ---------------------------------------------------------------

    def _framework(self, name: str, arguments: dict, skill: str | None = None) -> None:
        self._emit("tool_executed", {"tool_name": name, "arguments": arguments, "source": "local", "result": "ok",
                                     "is_error": False, "metadata": {"skill_id": skill} if skill else {}})

    def _user(self, head: str) -> None:
        self._emit("user", {"text": self._text(head, self.user_lengths, USER_FILLER),
                            "parse_data": {"intent": {"name": "inform", "confidence": 0.93}, "entities": []},
                            "input_channel": "rest"})

    def _bot(self, head: str, utter: str | None = None, buttons: list[dict] | None = None) -> None:
        fields: dict[str, Any] = {"text": self._text(head, self.bot_lengths, BOT_FILLER)}
        if utter or buttons:
            fields["metadata"] = {"utter_action": utter} if utter else {}
            fields["data"] = {"buttons": buttons or []}
        self._emit("bot", fields)
        if self.rng.random() < P_LISTEN:
            self._framework("listen", {})

    def _start(self, skill: str, block: str) -> None:
        self._framework("activate", {"skill_id": skill})
        self._emit("skill_activated", {"skill_id": skill})
        self._emit("ordered_block_entered", {"skill_id": skill, "block_id": block})

    def _finish(self, skill: str, block: str, step: str) -> None:
        self._emit("ordered_block_completed", {"skill_id": skill, "block_id": block, "step_id": step})
        self._framework("complete_skill", {}, skill)
        self._emit("skill_completed", {"skill_id": skill})

    def _cancel(self, skill: str, block: str, step: str) -> None:
        self._framework("cancel_skill", {}, skill)
        self._emit("ordered_block_cancelled", {"skill_id": skill, "block_id": block, "step_id": step})
        self._emit("skill_cancelled", {"skill_id": skill, "step_id": step})
        self._emit("memory_cleared", {"key": f"{skill}.draft"})

    def _digression(self, skill: str, block: str, step: str) -> None:
        """The customer asks a policy question mid-task: the skill is interrupted, `policy_faq` answers, it resumes."""
        self._user(self._pick(DIGRESSIONS))
        self._emit("skill_interrupted", {"skill_id": skill, "step_id": step})
        self._emit("ordered_block_interrupted", {"skill_id": skill, "block_id": block, "step_id": step})
        self._framework("activate", {"skill_id": "policy_faq"})
        self._emit("skill_activated", {"skill_id": "policy_faq"})
        self._bot("According to our policy, gold members get three free checked bags and insurance is refundable "
                  "within 24 hours.", "utter_policy_answer")
        self._framework("complete_skill", {}, "policy_faq")
        self._emit("skill_completed", {"skill_id": "policy_faq"})
        self._emit("skill_resumed", {"skill_id": skill, "step_id": step})
        self._emit("ordered_block_resumed", {"skill_id": skill, "block_id": block, "step_id": step})

    def _remember(self, name: str, failed: bool, skill: str, call: dict) -> None:
        if failed:
            return
        if name == "get_user_details":
            self._emit("memory_set", {"key": "project.membership", "value": orjson.loads(call["result"])["membership"]})
        elif name == "get_reservation_details":
            reservation = call["arguments"]["reservation_id"]
            if self._chance(self.profile.record_keys):
                self._emit("memory_set", {"key": f"reservation.{reservation}", "value": orjson.loads(call["result"])["cabin"]})
            else:
                self._emit("memory_set", {"key": f"{skill}.reservation_id", "value": reservation})
        elif name in WRITES and name != "transfer_to_human_agents":
            self._emit("memory_set", {"key": f"{skill}.confirmation",
                                      "value": {"tool": name, "arguments": call["arguments"]}})

    def _ask_for_id(self, skill: str, block: str) -> None:
        """The policy says: identify the customer first. The request waits while `authenticate` asks for the user ID.

        Sometimes the customer asks a question first (`authenticate` interrupted
        and resumed), sometimes they do not have the ID at hand (it is cancelled,
        and started again when they come back with it in the next turn).
        """
        rng = self.rng
        self._emit("skill_interrupted", {"skill_id": skill, "step_id": "authenticate"})
        self._emit("ordered_block_interrupted", {"skill_id": skill, "block_id": block, "step_id": "authenticate"})
        self._start("authenticate", "verify")
        self._bot("Before I can help with that, could you please provide your user ID?", "utter_ask_user_id")
        if rng.random() < self.profile.auth_digression[self.unprepared]:
            self._digression("authenticate", "verify", "ask_user_id")
        self.auth_restart = rng.random() < self.profile.auth_cancel[self.unprepared]
        if self.auth_restart:
            self._user("I don't have it at hand, let me look for it. My name is " + self.first.title() + ".")
            self._cancel("authenticate", "verify", "ask_user_id")
            self._bot("No problem. Whenever you have your user ID, just tell me and we will go on.")
        self.auth_pending = True

    def _identified(self, skill: str, block: str) -> None:
        """The customer gave the user ID: `authenticate` completes and the request resumes."""
        if self.auth_restart:
            self._start("authenticate", "verify")
        self._framework("set_fields", {"user_id": self.user_id}, "authenticate")
        misnamed = self._chance(self.profile.misnamed_user_id)
        key = self._pick(["project.userId", "project.user", "user_id", "project.customer_id"]) if misnamed else "project.user_id"
        self._emit("memory_set", {"key": key, "value": self.user_id})
        self._emit("memory_set", {"key": "project.customer_authenticated", "value": self.rng.random() > 0.03})
        if self._chance(self.profile.fraud_flag):
            self._emit("memory_set", {"key": "project.fraud_flag", "value": True})
        self._finish("authenticate", "verify", "done")
        self._emit("skill_resumed", {"skill_id": skill, "step_id": "authenticate"})
        self._emit("ordered_block_resumed", {"skill_id": skill, "block_id": block, "step_id": "authenticate"})
        self.auth_pending = False
        self.authenticated = True

    def _segment(self, write: str | None, turns: list, opened: set[str], next_write: str | None) -> bool:
        """One request: its turns and tool calls as resampled, wrapped in its skill. False when the conversation ends."""
        rng = self.rng
        self.turn_no += 1
        skill = SKILL_OF[write]
        started = skill in opened
        block = "commit" if started else "collect"  # a retry after a failed write goes on where it stopped
        res = self._pick(self.reservations) if self.reservations else "ABC123"
        city, city2 = rng.sample(CITIES, 2)
        has_calls = any(turns)
        profile = self.profile
        will_confirm = (write not in (None, "transfer_to_human_agents", "send_certificate") and len(turns) > 1
                        and rng.random() < profile.confirm)
        user_gives_up = will_confirm and rng.random() < profile.give_up
        digress_at = self._int(0, len(turns) - 1) if len(turns) > 1 and rng.random() < profile.digression else -1
        for t, calls in enumerate(turns):
            final = t == len(turns) - 1
            if self.auth_pending:
                head = "Sure, my user ID is " + self.user_id + "."
            elif t == 0 and not started and has_calls:
                head = self._pick(REQUESTS[skill]).format(city=city, city2=city2, day=self._int(10, 30), res=res)
            elif not has_calls:
                head = self._pick(CLOSINGS)
            elif final and will_confirm:
                head = "Actually, never mind. Leave it as it is." if user_gives_up else "Yes, please go ahead."
            else:
                head = self._pick(["The reservation is " + res + ".", "Yes.", "I prefer the cheaper one.",
                                   "That works for me.", "Can you check the other options too?"])
            self._user(head)
            if not started and has_calls:
                self._start(skill, block)
                opened.add(skill)
                started = True
            if self.auth_pending and started:
                self._identified(skill, block)
            if final and user_gives_up:
                self._cancel(skill, block, "confirm")
                opened.discard(skill)
                self._bot("Okay, I have not changed anything.", "utter_nothing_changed")
                return True
            if t == digress_at:
                self._digression(skill, block, "collect")
            for name, failed in calls:
                if name == write and block == "collect":
                    block = "commit"
                    self._emit("ordered_block_completed", {"skill_id": skill, "block_id": "collect", "step_id": "confirm"})
                    self._emit("ordered_block_entered", {"skill_id": skill, "block_id": block})
                call = self._call(name, failed, skill)
                self._emit("tool_executed", call)
                self._remember(name, failed, skill, call)
                if name == write and skill == "modify_reservation" and self._chance(profile.stray_booking):
                    self._emit("tool_executed", self._call("book_reservation", True, skill))
                if name == "get_reservation_details" and not failed and rng.random() < 0.15:
                    self._framework("set_fields", {"reservation_id": call["arguments"]["reservation_id"]}, skill)
            wrote = any(name == write for name, _ in calls)
            if write == "transfer_to_human_agents" and wrote:
                self._finish(skill, block, "transfer")
                opened.discard(skill)
                self._bot("I am transferring you to a human agent. Please hold on.", "utter_transfer")
                return False
            if final and wrote:
                failed = calls[-1][1] if calls[-1][0] == write else False
                if failed:
                    self._bot("Sorry, that did not go through: the system reported an error.")
                    if SKILL_OF[next_write] != skill:  # no retry follows: the request is dropped
                        self._cancel(skill, block, "commit")
                        opened.discard(skill)
                else:
                    self._emit("memory_cleared", {"key": f"{skill}.draft"})
                    self._finish(skill, block, "commit")
                    opened.discard(skill)
                    self._bot("Done: your request has been processed.", "utter_done")
            elif started and not self.authenticated and not self.auth_pending and (self.turn_no, t) == self.ask_at:
                self._ask_for_id(skill, block)
            elif t == len(turns) - 2 and will_confirm:
                buttons = [{"title": "Yes", "payload": "/affirm"}, {"title": "No", "payload": "/deny"}] if rng.random() < 0.5 else None
                self._bot(f"To confirm: I will go ahead with this change on {res}. Do you want me to proceed (yes/no)?",
                          "utter_ask_confirmation", buttons)
            elif has_calls and self._chance(profile.forbidden_reply):
                self._bot(*self._pick([("As an AI language model, I cannot see your booking history.", None),
                                       ("Sorry, I can't help with that.", "utter_cannot_help")]))
            elif has_calls:
                self._bot("Here is what I found.")
            elif not final:
                self._bot("You're welcome. Is there anything else I can help you with?")
        if write is None and skill in opened:
            self._finish(skill, block, "answer")
            opened.discard(skill)
        return True

    def _pool(self, write: str, first: bool) -> list:
        """Resampled segments: a conversation opens with one that opened a tau-bench run (they hold the lookups)."""
        if first and write in self.openings:
            return self.openings[write]
        return self.segments.get(write) or self.openings[write]

    def _plan(self) -> list[tuple[str | None, list]]:
        """The writes of one conversation (a walk on the fitted transitions), each with resampled turns."""
        rng, plan, state = self.rng, [], "START"
        if self.profile.request is not None:
            plan.append((self.profile.request, self._pick(self._pool(self.profile.request, True))))
        while self.profile.request is None:
            state = self.transitions[state][0][_draw_index(rng, self.transitions[state][1])]
            if state == "END" or len(plan) >= self.profile.max_requests:
                break
            plan.append((state, self._pick(self._pool(state, not plan))))
        plan.append((None, self._pick(self._pool("none", not plan))))
        if self.short:  # one request, at most two turns of at most two calls each
            write, turns = plan[0]
            plan = [(write, [calls[:2] for calls in turns[-2:]])]
        return plan

    def conversation(self) -> dict[str, Any]:
        """One tracker-shaped conversation object: `sender_id`, `events`."""
        self.index += 1
        self.events: list[dict] = []
        self.t = 1715785200.0 + self.index * 1800.0
        self._customer()
        if not self.short:
            self._emit("action", {"name": "action_session_start"})
            self._emit("session_started", {})
            self._emit("user", {"text": "/session_start"})
            self._bot("Hi, I'm the airline's assistant. How can I help you today?", "utter_greet")
        opened: set[str] = set()
        self.authenticated = self.auth_pending = self.auth_restart = False
        self.unprepared = self.rng.random() < self.profile.unprepared
        plan = self._plan()
        # The customer is asked for the user ID in the turn before the first lookup, as in tau-bench's runs.
        flat = [(i, t) for i, (_, turns) in enumerate(plan) for t in range(len(turns))]
        first = next((k for k, (i, t) in enumerate(flat) if any(n in LOOKUPS for n, _ in plan[i][1][t])), 0)
        self.ask_at = flat[first - 1] if first > 0 and not self._chance(self.profile.skip_identification) else None
        self.turn_no = -1
        for i, (write, turns) in enumerate(plan):
            next_write = plan[i + 1][0] if i + 1 < len(plan) else None
            if not self._segment(write, turns, opened, next_write):
                break
        for skill in sorted(opened):  # a request left open when the customer left
            self._emit("skill_interrupted", {"skill_id": skill, "step_id": "collect"})
        if self.events[-1]["event"] != "bot" and not self.short and self.rng.random() < 0.5:
            self._bot("Thank you for contacting us. Goodbye!", "utter_goodbye")
        if not self.short and self.rng.random() < 0.5:
            self._framework("hangup", {})
        return {"sender_id": f"synth-{self.index:07d}", "events": self.events}

    def long_events(self, count: int) -> list[dict]:
        """One session of `count` events: request after request, as a conversation that never ends."""
        events: list[dict] = []
        while len(events) < count:
            events.extend(self.conversation()["events"])
        return events[:count]


def _by_the_policy(turns: list) -> bool:
    """Whether a fitted opening identifies the customer by the policy: after the first turn, one turn looks up the
    user and then the reservation."""
    names = [[name for name, _ in calls] for calls in turns]
    first = next((k for k, calls in enumerate(names) if any(n in LOOKUPS for n in calls)), 0)
    return first > 0 and any("get_user_details" in calls and "get_reservation_details" in calls[calls.index("get_user_details"):]
                             for calls in names)


def _draw_index(rng: Random, cumulative: list[int]) -> int:
    return bisect.bisect_right(cumulative, rng.random() * cumulative[-1])


def load_fit(path: Path = FIT_PATH) -> dict[str, Any]:
    return orjson.loads(path.read_bytes())


def iter_conversations(n: int, seed: int, *, short: bool = False, profile: str = "tau") -> Iterator[dict[str, Any]]:
    generator = Generator(seed, short=short, profile=PROFILES[profile])
    for _ in range(n):
        yield generator.conversation()


def write_jsonl(path: Path, n: int, seed: int, *, short: bool = False, profile: str = "tau") -> dict[str, int]:
    """Stream `n` conversations to `path`, one a line; nothing is held but the conversation being written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    events = 0
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb", buffering=4 * 2**20) as out:
        for conv in iter_conversations(n, seed, short=short, profile=profile):
            events += len(conv["events"])
            out.write(orjson.dumps(conv))
            out.write(b"\n")
    tmp.replace(path)
    return {"conversations": n, "events": events, "bytes": path.stat().st_size}


def write_long(path: Path, count: int, seed: int) -> dict[str, int]:
    """One conversation of `count` events, one event a line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for event in Generator(seed).long_events(count):
            out.write(orjson.dumps(event))
            out.write(b"\n")
    return {"conversations": 1, "events": count, "bytes": path.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=1000, help="conversations to write (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1); the same seed gives the same bytes")
    parser.add_argument("--out", type=Path, help="JSONL file to write")
    parser.add_argument("--short", action="store_true", help="small conversations (one request, about 12 events, short texts)")
    parser.add_argument("--profile", choices=PROFILES, default="tau",
                        help="tau: the fitted rates (default); failing: about 35 events a conversation, most failing several "
                             "checks of fixtures/; passing: one flight change by the policy, most passing every check")
    parser.add_argument("--single-events", type=int, metavar="E",
                        help="write one conversation of exactly E events, one event a line, instead")
    parser.add_argument("--describe", action="store_true", help="print summary figures of what was written (reads it back)")
    parser.add_argument("--fit", type=Path, metavar="TAU_BENCH_JSON",
                        help=f"measure the distributions on a tau-bench trajectory file and write {FIT_PATH.name}")
    args = parser.parse_args(argv)
    if args.fit:
        FIT_PATH.write_bytes(orjson.dumps(fit(args.fit), option=orjson.OPT_INDENT_2) + b"\n")
        print(f"wrote {FIT_PATH}", file=sys.stderr)
        return 0
    if args.out is None:
        parser.error("--out is required")
    if args.conversations < 1 and not args.single_events:
        parser.error("--conversations must be at least 1")
    start = time.perf_counter()
    if args.single_events:
        stats = write_long(args.out, args.single_events, args.seed)
    else:
        stats = write_jsonl(args.out, args.conversations, args.seed, short=args.short, profile=args.profile)
    seconds = time.perf_counter() - start
    print(f"wrote {args.out}: {stats['conversations']:,} conversations, {stats['events']:,} events, "
          f"{stats['bytes'] / 1e6:,.1f} MB in {seconds:.1f}s", file=sys.stderr)
    if args.describe:
        with args.out.open("rb") as lines:
            convs = (orjson.loads(line)["events"] for line in lines) if not args.single_events else \
                [[orjson.loads(line) for line in lines]]
            print(orjson.dumps(describe(convs), option=orjson.OPT_INDENT_2).decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
