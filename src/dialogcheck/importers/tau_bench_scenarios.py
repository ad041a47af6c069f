"""Scenarios whose goals say what a tau-bench task expects, derived from the task itself.

tau-bench's reward replays the task's expected actions on a fresh database and
compares it with the database the agent left, then asks that every expected
output string appear in some agent reply (lower-cased, commas removed from
the reply). Only writes change the database, so the goals are about writes:

1. every expected write ran, with its arguments, and succeeded:
   `tool_executed {tool_name, arguments, is_error: false}` (arguments are a
   subset match, each listed key equal by JSON value). When the same write is
   expected k > 1 times, the entry says `times: k`.
2. no other successful write: for every write tool of the domain,
   `tool_executed {tool_name, is_error: false, times: N}` with N the number of
   times the task expects it (0 for the others). With (1), the successful
   writes are then exactly the expected ones, as a multiset. A failed write
   ("Error: ..." result) changes nothing in tau-bench's tools, so it is not
   counted.
3. every expected output said by the agent: `bot_uttered {text_matches}` with
   `(?i)` and the output's characters, escaped, joined by `,*`, so a comma
   anywhere in the reply is skipped exactly as the benchmark's
   `.replace(",", "")` skips it (`1000` matches "$1,000"). Text sent beside a
   tool call never reached the user and is no `bot` event, as in tau-bench.

Reads (never counted, never checked; the order of calls is not checked
either, as the reward ignores it). Airline: `calculate`,
`get_reservation_details`, `get_user_details`, `list_all_airports`,
`search_direct_flight`, `search_onestop_flight`, `think`,
`transfer_to_human_agents` (it ends the episode but changes no data).
Airline writes: `book_reservation`, `cancel_reservation`, `send_certificate`,
`update_reservation_baggages`, `update_reservation_flights`,
`update_reservation_passengers`. The retail domain's tools are listed too.

Limits, where the event log cannot show what the database shows: a write with
different but equivalent arguments (extra keys the tool overwrites, such as a
flight's `origin`; a payment method never charged because the price
difference is 0) fails goal (1) though the database is the same; an expected write that itself fails on the fresh database still counts
as expected here; a write tool the domain does not list is checked when
expected but not caught when extra; a run cut off at the step limit scores 0
in tau-bench whatever it did, which no goal here expresses.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from .._paths import safe_file_name
from ..errors import LoadError
from ._build import expect
from ._records import Item, ItemProblem, file_items
from .tau_bench import task_id_of

READ_TOOLS: dict[str, frozenset[str]] = {
    "airline": frozenset(
        {
            "calculate",
            "get_flight_status",  # tau2's airline only
            "get_reservation_details",
            "get_user_details",
            "list_all_airports",
            "search_direct_flight",
            "search_onestop_flight",
            "think",
            "transfer_to_human_agents",
        }
    ),
    "retail": frozenset(
        {
            "calculate",
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_order_details",
            "get_product_details",
            "get_user_details",
            "list_all_product_types",
            "think",
            "transfer_to_human_agents",
        }
    ),
}
WRITE_TOOLS: dict[str, frozenset[str]] = {
    "airline": frozenset(
        {
            "book_reservation",
            "cancel_reservation",
            "send_certificate",
            "update_reservation_baggages",
            "update_reservation_flights",
            "update_reservation_passengers",
        }
    ),
    "retail": frozenset(
        {
            "cancel_pending_order",
            "exchange_delivered_order_items",
            "modify_pending_order_address",
            "modify_pending_order_items",
            "modify_pending_order_payment",
            "modify_user_address",
            "modify_user_email",  # in some versions of the repository only
            "return_delivered_order_items",
        }
    ),
}


def output_pattern(output: str) -> str:
    """A case-insensitive regex that finds `output` in a reply the way tau-bench does, commas ignored."""
    return "(?i)" + ",*".join(re.escape(char) for char in output)


def domain_of(names: set[str]) -> str:
    """The domain whose tools these are (airline when nothing tells)."""
    scores = {d: len(names & (READ_TOOLS[d] | WRITE_TOOLS[d])) for d in WRITE_TOOLS}
    return max(scores, key=lambda d: (scores[d], d == "airline"))


def task_assertions(task: dict[str, Any], domain: str) -> list[dict[str, Any]]:
    """The scenario assertions of one task: expected writes, no other successful write, expected outputs."""
    reads, writes = READ_TOOLS.get(domain, frozenset()), WRITE_TOOLS.get(domain, frozenset())  # a domain not listed: every action is expected
    expected = [a for a in task["actions"] if a["name"] not in reads]
    keyed = Counter(orjson.dumps([a["name"], a["kwargs"]], option=orjson.OPT_SORT_KEYS) for a in expected)
    assertions: list[dict[str, Any]] = []
    done: set[bytes] = set()
    for action in expected:
        key = orjson.dumps([action["name"], action["kwargs"]], option=orjson.OPT_SORT_KEYS)
        if key in done:
            continue
        done.add(key)
        entry = {"tool_name": action["name"], "source": "local", "arguments": action["kwargs"], "is_error": False}
        if keyed[key] > 1:
            entry["times"] = keyed[key]
        assertions.append({"tool_executed": entry})
    per_tool = Counter(a["name"] for a in expected)
    for name in sorted(writes | set(per_tool)):
        count = {"tool_name": name, "source": "local", "is_error": False, "times": per_tool[name]}
        assertions.append({"tool_executed": count})
    for output in task["outputs"]:
        assertions.append({"bot_uttered": {"text_matches": output_pattern(output)}})
    return assertions


def _yaml_value(value: Any) -> str:
    """JSON is YAML 1.2; `$` is doubled before `{` so `${...}` in task text is never read as a variable."""
    return json.dumps(value, ensure_ascii=False).replace("${", "$${")


def scenario_yaml(task_id: Any, task: dict[str, Any], domain: str | None = None, benchmark: str = "tau-bench") -> str:
    """The scenario file of one task, in the Mantle form with dialogcheck's `tags` (`benchmark`: tau-bench or tau2)."""
    domain = domain or domain_of({a["name"] for a in task["actions"]})
    lines = [
        f"# Derived by `dialogcheck import --from {benchmark}` from {domain} task {task_id}.",
        "# Goals: each expected write ran with its arguments and succeeded; no other write",
        "# succeeded (times: N per write tool); each expected output said (commas ignored).",
        "scenario:",
        f"  name: {_yaml_value(f'{benchmark} {domain} task {task_id}')}",
        f"  simulation_context: {_yaml_value(task['instruction'])}",
        f"  tags: {_yaml_value([benchmark, domain, f'task-{task_id}'])}",
        "  goals:",
        "    assertions:",
    ]
    for assertion in task_assertions(task, domain):
        lines += [f"      - {key}: {_yaml_value(body)}" for key, body in assertion.items()]
    return "\n".join(lines) + "\n"


def _called(entry: dict[str, Any]) -> set[str]:
    """The tool names a run's agent called: they tell the domain when the task expects no action."""
    names = set()
    for message in entry.get("traj") or ():
        for call in (message.get("tool_calls") or ()) if isinstance(message, dict) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names.add(function["name"])
    return names


def _task(item: Item) -> tuple[Any, dict[str, Any], str]:
    """The task embedded in one run (`info.task`), checked for the fields the goals use, and its domain."""
    entry = expect(item.value, dict, "trajectory", ())
    info = expect(entry.get("info"), dict, "info", ("info",))
    task = expect(info.get("task"), dict, "info.task", ("info", "task"))
    where = ("info", "task")
    expect(task.get("instruction"), str, "info.task.instruction", (*where, "instruction"))
    actions = expect(task.get("actions"), list, "info.task.actions", (*where, "actions"))
    for i, action in enumerate(actions):
        path = (*where, "actions", i)
        expect(action, dict, "action", path)
        expect(action.get("name"), str, "action name", (*path, "name"))
        expect(action.get("kwargs"), dict, "action kwargs", (*path, "kwargs"))
    outputs = expect(task.get("outputs", []), list, "info.task.outputs", (*where, "outputs"))
    for i, output in enumerate(outputs):
        expect(output, str, "output", (*where, "outputs", i))
    task_id = task_id_of(entry)
    task_id = item.index if task_id is None else task_id
    domain = domain_of({a["name"] for a in actions} | _called(entry))
    return task_id, {**task, "outputs": outputs}, domain


def derive_scenarios(path: str | Path) -> Iterator[tuple[str, str]]:
    """(slug, scenario YAML) for each distinct task of a trajectory file, in order of first appearance.

    The trials of a task normally embed the same task; when one embeds a
    different version, that version gets its own scenario, suffixed by a hash.
    A slug is a safe file name (`safe_file_name`): a `task_id` such as
    `../../x` names a file in the scenarios folder, never outside it. Two tasks
    whose slugs would name the same file (`a/b` and `a_b~…`, or `T1` and `t1`
    on a case-blind file system) are bad input, never one overwriting the other.
    """
    return scenarios_of_tasks(file_items(path), _task, "tau-bench")


def scenarios_of_tasks(items: Iterator[Item], task_of: Callable[[Item], tuple[Any, dict[str, Any], str]], benchmark: str,
                       id_key: str = "task_id") -> Iterator[tuple[str, str]]:
    """(slug, scenario YAML) for each distinct task `task_of` reads from the items (its id, the task, its domain),
    slugs `{benchmark}-task-{id}`; `id_key` is where an item holds its task's id, for errors."""
    seen: dict[Any, set[bytes]] = {}
    slugs: dict[str, tuple[Any, Item]] = {}  # case-folded slug -> the task that took it
    for item in items:
        try:
            task_id, task, domain = task_of(item)
        except ItemProblem as err:
            raise LoadError([item.problem(str(err), err.path)]) from None
        digest = orjson.dumps(task, option=orjson.OPT_SORT_KEYS)
        versions = seen.setdefault(task_id, set())
        if digest in versions:
            continue
        slug = f"{benchmark}-task-{task_id}"
        if versions:
            slug += "-" + hashlib.sha256(digest).hexdigest()[:8]
        versions.add(digest)
        slug = safe_file_name(slug)
        _claim(slugs, slug, task_id, item, id_key)
        yield slug, scenario_yaml(task_id, task, domain, benchmark)


def _claim(slugs: dict[str, tuple[Any, Item]], slug: str, task_id: Any, item: Item, id_key: str) -> None:
    """Take the file name `slug` for `task_id`, or raise `LoadError` when another task has it."""
    taken = slugs.get(slug.casefold())
    if taken is not None:
        other, where = taken
        line, _ = where.position((id_key,))
        message = (
            f"task {task_id!r} and task {other!r} (line {line}) would both be written as the scenario file"
            f" `{slug}.yml`: give them ids that differ in more than case or punctuation"
        )
        raise LoadError([item.problem(message, (id_key,))])
    slugs[slug.casefold()] = (task_id, item)
