r"""Blame on tau-bench's recorded failures: which rule placed each failure, and does it point at the right message?

The 200 recorded runs of a gpt-4o agent on tau-bench's airline tasks (`shared/data/tau-bench`, MIT) are
imported as the command line imports them (every event keeps its message's index in `traj`), each judged
against the scenario derived from its own task, and every failed run blamed from evidence
(`--blame evidence`, the default). For each failure the script reads the message the blame's
`source_index` names in the original `traj` list and checks it is what the rule says it is:

* a placed call (`wrong_call`, `forbidden_event`): an assistant message holding a call of that tool;
* a placed absence (`missing`, `missing_from_start`, `missing_at_end`): an assistant message, the agent's
  move at the turn the expectation was missing from;
* a blame with no event (`unknown`, ...): no message to check.

Printed: the failures per actor and per rule, how many stayed `unknown`, and how many source indexes
point at such a message. There are no human labels in this data, so this measures placement, not
accuracy: whether each blame names a message a reader can open, and where each rule applies.

Run: .venv/bin/python benchmarks/blame_tau.py [--data FILE] [--review-user]
Exit code 1 when a failure has no blame, or a source index points at a message that does not fit its rule.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, log, save, table
from tau_bench import DATA, PAIR

from dialogcheck import Outcome, iter_conversations
from dialogcheck.blame import ACTORS, Blame, blame
from dialogcheck.checking import load_subject, review_recorded
from dialogcheck.importers import import_file
from dialogcheck.importers.tau_bench_scenarios import derive_scenarios
from dialogcheck.judging import evaluate

WORK = OUT / "blame_tau"


def fits(found: Blame, traj: list[dict[str, Any]], tool: str | None) -> bool:
    """Whether the message `found.source_index` names is the kind its rule places a failure at."""
    if found.event is None:
        return found.source_index is None
    if not isinstance(found.source_index, int) or not 0 <= found.source_index < len(traj):
        return False
    message = traj[found.source_index]
    if message.get("role") != "assistant":
        return False
    if tool is None:
        return True
    return any((call.get("function") or {}).get("name") == tool for call in message.get("tool_calls") or ())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="a tau-bench trajectory file")
    parser.add_argument("--review-user", action="store_true", help="also review each run's simulated user, as `check --review-user` does")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    runs, scenarios = WORK / "runs.jsonl", WORK / "scenarios"
    with runs.open("wb") as out:
        for imported in import_file(args.data, "tau-bench"):
            out.write(orjson.dumps(imported.tracker()) + b"\n")
    scenarios.mkdir(exist_ok=True)
    for slug, text in derive_scenarios(args.data):
        (scenarios / f"{slug}.yml").write_text(text, encoding="utf-8")
    trajectories = {f"task-{e['task_id']}-trial-{e['trial']}": e["traj"] for e in orjson.loads(args.data.read_bytes())}
    subject = load_subject([scenarios], pair=PAIR)
    by_actor: Counter[str] = Counter()
    by_rule: Counter[str] = Counter()
    unfit: list[str] = []
    failed = 0
    for conversation in iter_conversations([runs]):
        scenario = subject.scenario_of(conversation)
        result = evaluate(scenario, conversation, no_judge=True)
        if args.review_user:
            result = review_recorded(scenario, conversation, result)
        if result.verdict is Outcome.PASS:
            continue
        failed += 1
        found = blame(conversation, result, framework_tools=scenario.framework_tools)
        if found is None:
            unfit.append(f"{conversation.conversation_id}: failed with no blame")
            continue
        by_actor[found.actor] += 1
        by_rule[found.rule] += 1
        event = conversation.events[found.event] if found.event is not None else None
        tool = getattr(event, "tool_name", None) if event is not None and event.type == "tool_executed" else None
        if not fits(found, trajectories[conversation.conversation_id], tool):
            unfit.append(f"{conversation.conversation_id}: {found.rule} at event {found.event} -> traj[{found.source_index}]")
    print(f"{failed} failed runs of {len(trajectories)}, every one blamed by evidence:")
    print(table(["actor", "failures"], [[actor, str(by_actor[actor])] for actor in ACTORS]))
    print(table(["rule", "failures"], [[rule, str(n)] for rule, n in by_rule.most_common()]))
    placed = sum(by_rule.values()) - len([u for u in unfit if "no blame" not in u])
    print(f"source index points at the message holding the decisive call, or the agent's move at the turn it was "
          f"missing from: {placed} of {sum(by_rule.values())}")
    for line in unfit:
        print("  does not fit:", line)
    save("blame_tau", {"failed": failed, "actors": dict(by_actor), "rules": dict(by_rule), "unfit": unfit,
                       "unknown": by_actor["unknown"]})
    log(f"written to {OUT / 'blame_tau.json'}")
    return 1 if unfit else 0


if __name__ == "__main__":
    raise SystemExit(main())
