"""Scenarios whose goals say what a tau2-bench task expects, derived from the task as tau-bench's are.

tau2 scores the airline and retail tasks by its DB check (the task's expected
actions replayed on a fresh database, compared with the one the agent left)
and its COMMUNICATE check (each `communicate_info` string in some agent
reply, lower-cased, commas removed): what `tau_bench_scenarios` derives goals
for, here from `evaluation_criteria.actions` (their `arguments`; only those
`compare_args` names, when it names some) and `communicate_info`. Its
`nl_assertions` are judged by an LLM in tau2 and are not derived. The
customer's brief (`user_scenario.instructions`) is the simulation context.

The tasks are those of a results file (`{"info", "tasks", "simulations"}`);
a file of runs alone holds none.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import LoadError
from ._build import expect
from ._records import Item, ItemProblem, JsonPath, file_items
from .tau_bench import task_id_of
from .tau_bench_scenarios import domain_of, scenarios_of_tasks

#: The parts of a structured customer brief, in the order tau2's user simulator is given them.
_BRIEF = (("reason_for_call", "Reason for call"), ("known_info", "Known info"),
          ("unknown_info", "Unknown info"), ("task_instructions", "Task instructions"))


def _brief(task: dict[str, Any]) -> tuple[str, str | None]:
    """The customer's brief as one text, and the domain it names (None when it names none)."""
    where: JsonPath = ("user_scenario", "instructions")
    scenario = expect(task.get("user_scenario"), dict, "user_scenario", ("user_scenario",))
    instructions = scenario.get("instructions")
    if isinstance(instructions, str):
        return instructions, None
    instructions = expect(instructions, dict, "user_scenario.instructions", where)
    parts = []
    for key, label in _BRIEF:
        text = expect(instructions.get(key), str, f"user_scenario.instructions.{key}", (*where, key), optional=True)
        if text and text.strip():
            parts.append(f"{label}: {text.strip()}")
    domain = expect(instructions.get("domain"), str, "user_scenario.instructions.domain", (*where, "domain"), optional=True)
    return "\n\n".join(parts), domain


def _action(action: Any, path: JsonPath) -> dict[str, Any]:
    """One expected action as `task_assertions` reads it: its name and the arguments tau2 compares."""
    action = expect(action, dict, "action", path)
    name = expect(action.get("name"), str, "action name", (*path, "name"))
    arguments = expect(action.get("arguments", {}), dict, "action arguments", (*path, "arguments"))
    compared = expect(action.get("compare_args"), list, "compare_args", (*path, "compare_args"), optional=True)
    if compared is not None:
        keys = [expect(key, str, "compare_args entry", (*path, "compare_args", i)) for i, key in enumerate(compared)]
        arguments = {key: arguments[key] for key in keys if key in arguments}
    return {"name": name, "kwargs": arguments}


def _task(item: Item) -> tuple[Any, dict[str, Any], str]:
    """The task of one item of a results file's `tasks`, in the shape `scenario_yaml` reads, and its domain."""
    task = expect(item.value, dict, "task", ())
    if "messages" in task or "task_id" in task:
        raise ItemProblem("this is a simulation run, not a task: deriving scenarios needs a tau2 results file, "
                          "whose `tasks` hold each task's expected actions (`{\"info\", \"tasks\", \"simulations\"}`)")
    try:
        task_id = task_id_of({"task_id": task.get("id")})
    except ItemProblem as err:
        raise ItemProblem(str(err).replace("`task_id`", "`id`"), ("id",)) from None
    if task_id is None:
        raise ItemProblem("a task without `id`: expected the id its simulations name as `task_id`", ())
    instruction, domain = _brief(task)
    criteria = expect(task.get("evaluation_criteria"), dict, "evaluation_criteria", ("evaluation_criteria",), optional=True) or {}
    where: JsonPath = ("evaluation_criteria",)
    raw = expect(criteria.get("actions"), list, "evaluation_criteria.actions", (*where, "actions"), optional=True) or []
    actions = [_action(action, (*where, "actions", i)) for i, action in enumerate(raw)]
    said = expect(criteria.get("communicate_info"), list, "evaluation_criteria.communicate_info", (*where, "communicate_info"), optional=True) or []
    outputs = [expect(text, str, "communicate_info entry", (*where, "communicate_info", i)) for i, text in enumerate(said)]
    domain = domain or domain_of({a["name"] for a in actions})
    return task_id, {"instruction": instruction, "actions": actions, "outputs": outputs}, domain


def derive_scenarios(path: str | Path) -> Iterator[tuple[str, str]]:
    """(slug, scenario YAML) for each task of a tau2 results file, slugs `tau2-task-{id}` (safe file names)."""
    items = file_items(path, list_key="tasks")
    first = next(items, None)
    if first is None or (isinstance(first.value, dict) and "simulations" in first.value):
        raise LoadError([first.problem("the results file holds no `tasks`: deriving scenarios needs each task's expected actions")
                         if first is not None else LoadError.one("the file holds no tasks", str(path)).problems[0]])
    return scenarios_of_tasks(itertools.chain([first], items), _task, "tau2", id_key="id")
