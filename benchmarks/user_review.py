"""How often the simulated-user review flags real simulated customers, and whether it catches planted faults.

The corpus is every recorded run of tau-bench (gpt-4o airline, 200 runs) and
tau2-bench (fine-tuned gpt-4.1, 20 airline and 40 retail runs), where an LLM
played the customer from a brief: tau-bench's `info.task.instruction`,
tau2-bench's task `user_scenario.instructions` (`reason_for_call` as the
`simulation_context`; `known_info`, `unknown_info` and `task_instructions`
beside it). Runs are read with `dialogcheck`'s importers, as `check` reads
them, and reviewed with the templates dialogcheck ships.

1. False flags: each run as recorded, nothing planted. Those simulators were
   sound enough for their benchmarks, so a flag is taken as false.
2. Planted faults: each fault kind is planted into a copy of every run that
   can hold it (a message replaced, a message repeated, the run cut short),
   in a few wordings taken in turn; a plant is caught when the rule of that
   kind flags the planted turn.
3. Margins: for each rule with a threshold, how far the real customers went
   (the longest verbatim stretch of the brief a customer repeated, ...),
   beside the threshold.

Run: .venv/bin/python benchmarks/user_review.py [--tau-bench FILE] [--tau2 FILE ...]
Exit code 1 when more than 1 in 20 real runs are flagged or a plant is missed.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from dialogcheck.importers import import_file
from dialogcheck.importers.tau_bench import trajectory_id
from dialogcheck.simulate.review import RULES, Brief, Line, Prompts, _text, review_user, transcript_of
from dialogcheck.simulate.review.model import TEMPLATE_TAG
from dialogcheck.simulate.review.rules import AgentEcho, BriefCopy, GoalUnstated, Loop, PromptWording

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402 - benchmarks/ is not a package

_DATA = Path("shared", "data")
DATA = next((up / _DATA for up in HERE.parents if (up / _DATA).exists()), HERE.parents[1] / _DATA)
TAU_BENCH = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
TAU2 = (DATA / "tau2-bench" / "ft-gpt-4.1_airline_1trial.json", DATA / "tau2-bench" / "ft-gpt-4.1_retail_1trial.json")
MAX_FLAGGED = 1 / 20
_SENTENCE_END = re.compile(r"[.:;!?]|\n\s*(?:\n|-|#)")


@dataclass(frozen=True)
class Case:
    """One recorded run: where it is from, the user's and agent's messages, and the brief the user was given."""

    dataset: str
    conversation_id: str
    transcript: tuple[Line, ...]
    brief: Brief


def tau_bench_cases(path: Path, dataset: str = "tau-bench") -> list[Case]:
    runs = orjson.loads(path.read_bytes())
    briefs = {trajectory_id(run, k): Brief(run["info"]["task"]["instruction"]) for k, run in enumerate(runs)}
    return [Case(dataset, c.conversation_id, transcript_of(c.conversation), briefs[c.conversation_id]) for c in import_file(path, "tau-bench")]


def tau2_brief(instructions: dict) -> Brief:
    """tau2's user scenario: the reason for the call is the goal, the rest is said beside it."""
    extra = tuple(text for key in ("known_info", "unknown_info", "task_instructions") if isinstance(text := instructions.get(key), str))
    return Brief(instructions.get("reason_for_call") or "", extra)


def tau2_cases(path: Path, dataset: str | None = None) -> list[Case]:
    results = orjson.loads(path.read_bytes())
    briefs = {task["id"]: tau2_brief(task["user_scenario"]["instructions"]) for task in results["tasks"]}
    task_of = {f"task-{run['task_id']}-trial-{run['trial']}": run["task_id"] for run in results["simulations"]}
    name = dataset or f"tau2 {results['info']['environment_info']['domain_name']}"
    return [Case(name, c.conversation_id, transcript_of(c.conversation), briefs[task_of[c.conversation_id]]) for c in import_file(path, "tau2")]


# --------------------------------------------------------------------------- planting


@dataclass(frozen=True)
class Planted:
    """A run with a fault planted: its new transcript and the turns the fault sits at (None: the whole run)."""

    transcript: tuple[Line, ...]
    turns: frozenset[int | None]


def _spoken(transcript: Sequence[Line]) -> list[int]:
    """Positions of the user messages that say something."""
    return [i for i, line in enumerate(transcript) if line.role == "user" and _text.words(line.text)]


def _swap(transcript: Sequence[Line], i: int, text: str) -> Planted:
    lines = list(transcript)
    lines[i] = replace(lines[i], text=text)
    return Planted(tuple(lines), frozenset({lines[i].turn}))


def _middle(case: Case) -> int | None:
    """The user message in the middle of the run, one that more user messages follow."""
    spoken = _spoken(case.transcript)
    return spoken[(len(spoken) - 1) // 2] if len(spoken) >= 2 else None


def plant_prompt_wording(case: Case, k: int, prompts: Prompts) -> Planted | None:
    """The template's words as a message: a sentence, a sentence's last words alone ("Your next message."), the
    JSON answer, a placeholder."""
    i = _middle(case)
    if i is None:
        return None
    sentences = [said for source in prompts.sources for part in TEMPLATE_TAG.split(source) for piece in _SENTENCE_END.split(part)
                 if len(said := piece.split()) >= PromptWording.min_whole]
    sentence = sentences[k % len(sentences)]
    variable = sorted(prompts.variables)[k % len(prompts.variables)]
    wordings = [
        " ".join(sentence[: PromptWording.min_span + 3]),
        " ".join(sentence[-PromptWording.min_whole :]).capitalize() + ".",
        orjson.dumps({"message": case.transcript[i].text, "done": False}).decode(),
        f"{{{{ {variable} }}}}",
    ]
    return _swap(case.transcript, i, wordings[k % len(wordings)])


def plant_agent_echo(case: Case, k: int, prompts: Prompts) -> Planted | None:
    t = case.transcript
    answered = [i for i in _spoken(t) if i > 0 and t[i - 1].role == "agent" and len(_text.words(t[i - 1].text)) >= AgentEcho.min_words]
    if not answered:
        return None
    i = answered[len(answered) // 2]
    agent = t[i - 1].text
    sentences = [s for s in agent.replace("?", "?.").replace("!", "!.").split(".") if len(_text.words(s)) >= AgentEcho.min_words]
    return _swap(t, i, agent if k % 2 == 0 or not sentences else sentences[-1].strip())


_AS_AGENT = ["Hi! How can I help you today?", "Agent: {said}", "Is there anything else I can help you with?", "Thank you for contacting us. {said}"]
_OUT_OF_CHARACTER = [
    "As an AI language model, I cannot share personal details.",
    "{said} (This is a test conversation, by the way.)",
    "User: {said}",
    "Sorry, I'm a simulated customer and can't decide that.",
]


def _wording(wordings: list[str]) -> Callable[[Case, int, Prompts], Planted | None]:
    def plant(case: Case, k: int, prompts: Prompts) -> Planted | None:
        i = _middle(case)
        return None if i is None else _swap(case.transcript, i, wordings[k % len(wordings)].format(said=case.transcript[i].text))

    return plant


def plant_brief_copy(case: Case, k: int, prompts: Prompts) -> Planted | None:
    """The brief itself as a message: its first words (a long leak), or one of its "you" sentences (a short one)."""
    i = _middle(case)
    if i is None:
        return None
    passage = _text.unquoted_parts(case.brief.simulation_context)[0]
    if k % 2 == 0:
        tokens = passage.split()
        return _swap(case.transcript, i, " ".join(tokens[: BriefCopy.min_words + 5])) if len(tokens) >= BriefCopy.min_words else None
    sentences = [s.strip() for s in passage.split(".") if len(_text.words(s)) >= BriefCopy.min_words_as_you and _text.SECOND_PERSON & set(_text.words(s))]
    return _swap(case.transcript, i, sentences[0] + ".") if sentences else None


def plant_empty(case: Case, k: int, prompts: Prompts) -> Planted | None:
    i = _middle(case)
    return None if i is None else _swap(case.transcript, i, ["", " ", "...", "\n"][k % 4])


def plant_loop(case: Case, k: int, prompts: Prompts) -> Planted | None:
    """One message sent again at the user's next two turns (the second time with a word added, every other run)."""
    spoken = _spoken(case.transcript)
    starts = [n for n, i in enumerate(spoken[:-2]) if len(_text.words(case.transcript[i].text)) >= Loop.min_words]
    if not starts:
        return None
    first = spoken[starts[len(starts) // 2]]
    said = case.transcript[first].text
    lines = list(case.transcript)
    later = spoken[spoken.index(first) + 1 : spoken.index(first) + 3]
    for n, i in enumerate(later):
        lines[i] = replace(lines[i], text=said + (" Please." if n == 1 and k % 2 else ""))
    return Planted(tuple(lines), frozenset(lines[i].turn for i in (first, *later)))


def plant_goal_unstated(case: Case, k: int, prompts: Prompts) -> Planted | None:
    """The run cut after the agent's answer to a greeting: the user never said what it came for."""
    t = case.transcript
    spoken = _spoken(t)
    if not spoken:
        return None
    first = spoken[0]
    end = next((i for i in range(first + 1, len(t)) if t[i].role == "user"), len(t))
    greeting = ["Hi!", "Hello, I need some help.", "Good morning!", "Hi, can you help me with something?"][k % 4]
    lines = [*t[:first], replace(t[first], text=greeting), *t[first + 1 : end]]
    return Planted(tuple(lines), frozenset({None}))


Plant = Callable[[Case, int, Prompts], "Planted | None"]
#: Each fault kind, by the rule that should catch it.
PLANTS: dict[str, Plant] = {
    "prompt_wording": plant_prompt_wording,
    "agent_echo": plant_agent_echo,
    "speaks_as_agent": _wording(_AS_AGENT),
    "breaks_character": _wording(_OUT_OF_CHARACTER),
    "brief_copy": plant_brief_copy,
    "empty": plant_empty,
    "loop": plant_loop,
    "goal_unstated": plant_goal_unstated,
}
assert set(PLANTS) == {rule.name for rule in RULES}


def caught(case: Case, planted: Planted, rule: str, prompts: Prompts) -> bool:
    review = review_user(planted.transcript, case.brief, prompts)
    return any(reason.rule == rule and reason.turn in planted.turns for reason in review.reasons)


def planted_faults(cases: Sequence[Case], prompts: Prompts) -> dict[str, tuple[int, int, list[str]]]:
    """Per fault kind: how many runs it was planted into, how many were caught, and the ids of those missed."""
    found = {}
    for rule, plant in PLANTS.items():
        planted = caught_count = 0
        missed = []
        for k, case in enumerate(cases):
            fault = plant(case, k, prompts)
            if fault is None:
                continue
            planted += 1
            if caught(case, fault, rule, prompts):
                caught_count += 1
            else:
                missed.append(case.conversation_id)
        found[rule] = (planted, caught_count, missed)
    return found


# --------------------------------------------------------------------------- margins


def margins(cases: Iterable[Case], prompts: Prompts) -> list[tuple[str, float, str]]:
    """(what, the most real customers did, the threshold a rule fires at) for each measured threshold."""
    brief_span = you_span = template_span = covered = alike = loop_alike = 0.0
    running = 1
    least_shared = math.inf
    you = _text.SECOND_PERSON
    for case in cases:
        runs = [tuple(run) for run in _brief_runs(case.brief)]
        agent: list[str] = []
        previous: tuple[str, ...] = ()
        shared, run_alike = 0, 1
        goal = _text.content_stems(case.brief.simulation_context)
        for line in case.transcript:
            if line.role == "agent":
                agent.extend(_text.words(line.text))
                continue
            said = _text.words(line.text)
            if not said:
                continue
            for run in runs:
                brief_span = max(brief_span, len(_text.longest_common_span(said, run)))
                you_span = max(you_span, _longest_with(said, run, you))
            for run in prompts.literal_runs:
                template_span = max(template_span, len(_text.longest_common_span(said, run)))
            if agent and len(said) >= AgentEcho.min_words:
                covered = max(covered, len(_text.longest_common_span(said, agent)) / len(said))
                alike = max(alike, _text.likeness(said, agent))
            if previous and len(said) >= Loop.min_words:
                loop_alike = max(loop_alike, _text.likeness(previous, said))
            alike_before = bool(previous) and len(said) >= Loop.min_words and _text.likeness(previous, said) >= Loop.min_likeness
            run_alike = run_alike + 1 if alike_before else 1
            running = max(running, run_alike)
            shared = max(shared, len(goal & _text.content_stems(line.text)))
            agent, previous = [], said
        if goal:
            least_shared = min(least_shared, shared)
    return [
        ("words in a row copied from the brief", brief_span, f">= {BriefCopy.min_words}"),
        ('... of them a stretch keeping a "you"', you_span, f">= {BriefCopy.min_words_as_you}"),
        ("words in a row of the prompt template", template_span, f">= {PromptWording.min_span}"),
        (f"share of a message (>= {AgentEcho.min_words} words) copied from the agent", covered, f">= {AgentEcho.min_covered}"),
        ("likeness of a message to the agent's before it", alike, f">= {AgentEcho.min_likeness}"),
        ("likeness of a message to the user's previous one", loop_alike, f">= {Loop.min_likeness}"),
        (f"messages running that alike (>= {Loop.min_words} words)", running, f">= {Loop.repeats}"),
        ("fewest goal words the best message of a run states", least_shared, f"< {GoalUnstated.min_shared}"),
    ]


def _brief_runs(brief: Brief) -> list[tuple[str, ...]]:
    return [run for passage in brief.passages for part in _text.unquoted_parts(passage) if (run := _text.words(part))]


def _longest_with(said: Sequence[str], run: Sequence[str], marks: frozenset[str]) -> int:
    """The longest stretch `said` and `run` share that holds one of `marks`."""
    from difflib import SequenceMatcher

    blocks = SequenceMatcher(None, said, run, autojunk=False).get_matching_blocks()
    return max((b.size for b in blocks if marks.intersection(said[b.a : b.a + b.size])), default=0)


# --------------------------------------------------------------------------- report


def false_flags(cases: Sequence[Case], prompts: Prompts) -> dict[str, tuple[int, int, Counter[str], list[str]]]:
    """Per dataset: runs, runs flagged, reasons by rule, and each flagged run's reasons."""
    found: dict[str, tuple[int, int, Counter[str], list[str]]] = {}
    for case in cases:
        runs, flagged, rules, notes = found.get(case.dataset, (0, 0, Counter(), []))
        review = review_user(case.transcript, case.brief, prompts)
        if review.verdict == "suspect":
            flagged += 1
            rules.update(review.rules())
            notes.extend(f"{case.conversation_id}: turn {r.turn}: {r.rule}: {r.text}" for r in review.reasons)
        found[case.dataset] = (runs + 1, flagged, rules, notes)
    return found


def report(cases: Sequence[Case], prompts: Prompts) -> tuple[bool, dict]:
    flags = false_flags(cases, prompts)
    total = sum(f[0] for f in flags.values())
    total_flagged = sum(f[1] for f in flags.values())
    names = [rule.name for rule in RULES]
    rows = [[name, str(n), str(f), f"{f / n:.3f}", *(str(rules[r]) for r in names)] for name, (n, f, rules, _) in flags.items()]
    rows.append(["all", str(total), str(total_flagged), f"{total_flagged / total:.3f}", *(str(sum(f[2][r] for f in flags.values())) for r in names)])
    print("Real runs, nothing planted (runs flagged by each rule):\n")
    print(common.table(["dataset", "runs", "flagged", "rate", *names], rows))
    for _, _, _, notes in flags.values():
        for note in notes:
            print("  " + note)
    plants = planted_faults(cases, prompts)
    print("\nPlanted faults (one kind per copy of a run):\n")
    print(common.table(["fault", "planted", "caught", "rate"], [[k, str(p), str(c), f"{c / p:.3f}" if p else "-"] for k, (p, c, _) in plants.items()]))
    for kind, (_, _, missed) in plants.items():
        for cid in missed:
            print(f"  missed {kind}: {cid}")
    print("\nHow far real customers went, against each rule's threshold:\n")
    measured = margins(cases, prompts)
    print(common.table(["measure", "real customers (most, or least for goal words)", "rule fires at"], [[what, f"{value:.3g}", at] for what, value, at in measured]))
    ok = total_flagged <= MAX_FLAGGED * total and all(p == c for p, c, _ in plants.values())
    figures = {
        "runs": total,
        "flagged": total_flagged,
        "by_dataset": {name: {"runs": n, "flagged": f, "by_rule": dict(rules)} for name, (n, f, rules, _) in flags.items()},
        "planted": {kind: {"planted": p, "caught": c} for kind, (p, c, _) in plants.items()},
        "margins": {what: value for what, value, _ in measured},
    }
    return ok, figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tau-bench", type=Path, default=TAU_BENCH, help="tau-bench trajectories (default: the gpt-4o airline runs)")
    parser.add_argument("--tau2", type=Path, nargs="*", default=list(TAU2), help="tau2-bench results files")
    args = parser.parse_args(argv)
    cases = [*tau_bench_cases(args.tau_bench), *(case for path in args.tau2 for case in tau2_cases(path))]
    ok, figures = report(cases, Prompts.bundled())
    common.save("user_review", figures)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
