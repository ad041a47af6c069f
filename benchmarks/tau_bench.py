r"""Reproduce tau-bench's verdicts from its recorded runs, with goals derived from each task.

On the command line it is two commands (the second judges every run against its own task's scenario):

    dialogcheck import --from tau-bench FILE -o runs.jsonl --derive-scenarios scenarios/
    dialogcheck check --no-judge --scenario scenarios/ --pair 'task-(\d+)' runs.jsonl

This script takes the same steps through the library, runs the `check` command on what they wrote,
and holds the two to the same verdict for every run:

1. convert every trajectory to native events (written to `OUT`, one conversation a line);
2. derive one scenario per task from the task embedded in the runs (`info.task`);
3. read the conversations back from `OUT` with the native loader and load each
   scenario with `dialogcheck.load_scenario`;
4. judge each run against its task's scenario (deterministic assertions only).

It then prints the agreement between dialogcheck's verdicts and the recorded
rewards, every disagreement with its reason, and pass^1..pass^4 from
dialogcheck's verdicts next to the same figures from the recorded rewards and
the published leaderboard row. pass^k uses the unbiased estimator: for a task
with n trials and c passes, C(c, k) / C(n, k), averaged over tasks.

Run: .venv/bin/python benchmarks/tau_bench.py [--data FILE] [--out DIR]
Exit code 1 when fewer than `--min-agreement` runs (default 195) agree, or when the command line and
the library differ on a run.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from dialogcheck import Outcome, evaluate, iter_conversations, load_scenario
from dialogcheck.importers import import_file
from dialogcheck.importers.tau_bench_scenarios import derive_scenarios

HERE = Path(__file__).resolve().parent
#: The recorded runs, in the `shared/data` folder beside the repository (or beside the folder holding its worktrees).
TRAJECTORIES = Path("shared", "data", "tau-bench", "historical_trajectories", "gpt-4o-airline.json")
DATA = next((up / TRAJECTORIES for up in HERE.parents if (up / TRAJECTORIES).exists()), HERE.parents[1] / TRAJECTORIES)
PUBLISHED = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}
#: Pairs run `task-7-trial-2` with scenario `tau-bench-task-7` (the whole key: never with `tau-bench-task-17`).
PAIR = r"task-(\d+)"


def pass_hat_k(passes_by_task: Mapping[Any, list[bool]], k: int) -> float:
    """Mean over tasks of C(c, k) / C(n, k): the chance that k trials drawn without replacement all pass."""
    values = [math.comb(sum(v), k) / math.comb(len(v), k) for v in passes_by_task.values() if len(v) >= k]
    return sum(values) / len(values)


def run_pipeline(data: Path, out: Path) -> tuple[Path, Path]:
    """Steps 1 and 2: the native conversations file and the scenarios folder."""
    out.mkdir(parents=True, exist_ok=True)
    conversations = out / "conversations.jsonl"
    with conversations.open("wb") as handle:
        for imported in import_file(data, "tau-bench"):
            handle.write(orjson.dumps(imported.tracker()) + b"\n")
    scenarios = out / "scenarios"
    scenarios.mkdir(exist_ok=True)
    for slug, text in derive_scenarios(data):
        (scenarios / f"{slug}.yml").write_text(text, encoding="utf-8")
    return conversations, scenarios


def _reason(run: dict[str, Any], result: Any, passed: bool) -> str:
    """Why dialogcheck and the recorded reward disagree, from what each saw."""
    if not passed:
        failed = [r for r in result.assertions if r.outcome is not Outcome.PASS]
        return "; ".join(f"assertion {result.assertions.index(r) + 1} failed: {r.detail}" for r in failed)
    info = run["info"].get("reward_info") or {}
    if not info:
        steps = sum(1 for m in run["traj"] if m["role"] == "assistant")
        return (
            f"no reward was computed: the run stopped at the step limit ({steps} agent steps, "
            f"{len(run['traj'])} messages) before the user ended it, and tau-bench scores such a run 0"
        )
    detail = info.get("info") or {}
    if detail.get("r_actions") == 0:
        return "the final database differed from the expected one, though every write the log shows matched"
    return f"the reward checks something the log does not show: {detail}"


def failed_goals(result: Any) -> set[str]:
    """Which kinds of goal a failing run missed: an expected write, a write count, an expected output."""
    kinds = set()
    for check in (r.check for r in result.assertions if r.outcome is not Outcome.PASS):
        if check.key == "bot_uttered":
            kinds.add("expected output not said")
        elif check.arguments is not None:
            kinds.add("expected write missing, different or failed")
        else:
            kinds.add("successful writes of a tool not the expected number")
    return kinds


def reward_reason(run: dict[str, Any]) -> str:
    """Why tau-bench scored a run 0, from its `reward_info`."""
    info = run["info"].get("reward_info") or {}
    if not info:
        return "cut off at the step limit (no reward computed)"
    detail = info.get("info") or {}
    if detail.get("r_outputs") == 0:
        return "an expected output missing"
    return "the final database differed"


def judge_all(data: Path, conversations: Path, scenarios: Path) -> list[tuple[dict[str, Any], bool, Any]]:
    """Steps 3 and 4: (recorded run, dialogcheck passed, result) for every run."""
    runs = orjson.loads(data.read_bytes())
    loaded = {path.stem: load_scenario(path) for path in sorted(scenarios.glob("*.yml"))}
    judged = []
    for run, conversation in zip(runs, iter_conversations([conversations]), strict=True):
        assert conversation.conversation_id == f"task-{run['task_id']}-trial-{run['trial']}"
        result = evaluate(loaded[f"tau-bench-task-{run['task_id']}"], conversation, no_judge=True)
        judged.append((run, result.verdict is Outcome.PASS, result))
    return judged


def command_line_verdicts(conversations: Path, scenarios: Path) -> dict[str, bool]:
    """Every run's verdict from `dialogcheck check --scenario DIR --pair`, by conversation id (True: passed)."""
    command = [str(Path(sys.executable).parent / "dialogcheck"), "check", "--no-judge", "--format", "json",
               "--scenario", str(scenarios), "--pair", PAIR, str(conversations)]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"`{' '.join(command)}` exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return {c["conversation_id"]: c["verdict"] == "pass" for c in orjson.loads(done.stdout)["conversations"]}


def same_on_the_command_line(judged: list[tuple[dict[str, Any], bool, Any]], verdicts: dict[str, bool]) -> bool:
    """Print whether the command gave each run the verdict the library gave it."""
    ours = {f"task-{run['task_id']}-trial-{run['trial']}": passed for run, passed, _ in judged}
    same = sum(verdicts.get(cid) == passed for cid, passed in ours.items())
    print(f"command line (dialogcheck check --scenario DIR --pair '{PAIR}'): the same verdict for {same}/{len(ours)} runs")
    return same == len(ours) == len(verdicts)


def report(judged: Iterable[tuple[dict[str, Any], bool, Any]], min_agreement: int) -> int:
    judged = list(judged)
    ours, theirs = defaultdict(list), defaultdict(list)
    both = {(True, True): 0, (False, False): 0, (True, False): 0, (False, True): 0}
    disagreements = []
    missed: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for run, passed, result in judged:
        rewarded = run["reward"] == 1.0
        ours[run["task_id"]].append(passed)
        theirs[run["task_id"]].append(rewarded)
        both[(passed, rewarded)] += 1
        if passed != rewarded:
            disagreements.append((run, passed, _reason(run, result, passed)))
        elif not passed:
            counts = missed[reward_reason(run)]
            counts["runs"] += 1
            for kind in failed_goals(result):
                counts[kind] += 1
    agree = both[(True, True)] + both[(False, False)]
    total = len(judged)
    print(f"runs: {total} ({len(ours)} tasks x {total // max(len(ours), 1)} trials)")
    print(f"agreement with the recorded rewards: {agree}/{total} ({agree / total:.1%})")
    print(f"  both pass {both[(True, True)]}, both fail {both[(False, False)]}, "
          f"dialogcheck pass / reward 0: {both[(True, False)]}, dialogcheck fail / reward 1: {both[(False, True)]}")
    print("agreeing failures, by tau-bench's reason and the goals dialogcheck found unmet (a run may miss several):")
    for reason, counts in sorted(missed.items(), key=lambda pair: -pair[1]["runs"]):
        goals = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()) if kind != "runs")
        print(f"  {reason}: {counts['runs']} runs; {goals or 'no goal unmet'}")
    print("disagreements:")
    for run, passed, reason in disagreements:
        verdict = "pass" if passed else "fail"
        print(f"  task {run['task_id']} trial {run['trial']}: dialogcheck {verdict}, reward {run['reward']:g}: {reason}")
    print("pass^k      dialogcheck  recorded rewards  published")
    for k in range(1, 5):
        print(f"  pass^{k}    {pass_hat_k(ours, k):.3f}        {pass_hat_k(theirs, k):.3f}             {PUBLISHED[k]:.3f}")
    return 0 if agree >= min_agreement else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="tau-bench trajectory file (default: the gpt-4o airline runs)")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "tau_bench", help="folder for the converted runs and scenarios")
    parser.add_argument("--min-agreement", type=int, default=195, help="exit 1 below this many agreeing runs")
    args = parser.parse_args(argv)
    conversations, scenarios = run_pipeline(args.data, args.out)
    judged = judge_all(args.data, conversations, scenarios)
    status = report(judged, args.min_agreement)
    return status if same_on_the_command_line(judged, command_line_verdicts(conversations, scenarios)) else 1


if __name__ == "__main__":
    sys.exit(main())
