"""Per-check statistics of a batch: for each assertion, SOP step and criterion, how its conversations ended.

A batch of thousands of conversations is read by its checks, not one
conversation at a time: which step of the SOP fails most, which assertion
never passes. `CheckStats` counts them as results go by (flat memory: one row
per distinct check, a few examples each) and merges across chunks checked in
other processes, so `--jobs 1` and `--jobs N` give the same rows in the same
order: the order each check was first met, which for one scenario or SOP is
file order.

A conversation whose simulated user is suspect (its `user_review`) is left
out of every row: its checks judged a conversation the agent was not really
given, so they say nothing about the agent, as an errored run's say nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..checks.base import Outcome
from .model import ACTORS, CheckKind, CheckLine, ConversationResult, Counts, RunResult, ScenarioStats

#: How many failing conversations (or runs) each check names as examples.
EXAMPLES = 3
#: The SOP score histogram's buckets: [0, 0.1), [0.1, 0.2), ... [0.9, 1.0].
SCORE_BUCKETS = 10


@dataclass
class CheckStat:
    """One check across a batch: what it is, how often each outcome came, and a few conversations it failed."""

    kind: CheckKind
    #: How the text output names it: an assertion's label, a step's id and label, `criterion '<text>'`.
    label: str
    #: Assertions and criteria, from 1 in file order.
    index: int | None = None
    #: SOP steps.
    id: str | None = None
    #: The scenario's slug, when the batch judged against several.
    scenario: str | None = None
    counts: Counts = field(default_factory=Counts)
    examples: list[str] = field(default_factory=list)
    #: Of its errors, those of a judge without a good enough calibration (`--require-calibration`): counted apart.
    uncalibrated: int = 0

    @property
    def failure_rate(self) -> float | None:
        """Failures over the conversations the check decided (passed or failed); None when it decided none."""
        decided = self.counts.passed + self.counts.failed
        return self.counts.failed / decided if decided else None

    def merge(self, other: CheckStat) -> None:
        self.counts.update(other.counts)
        self.uncalibrated += other.uncalibrated
        self.examples.extend(other.examples[: EXAMPLES - len(self.examples)])


@dataclass
class SopScores:
    """How the SOP scores of a batch spread: their mean, and how many fell below their threshold."""

    conversations: int = 0
    total: float = 0.0
    lowest: float | None = None
    highest: float | None = None
    #: Of the conversations whose SOP has a threshold, how many there were and how many scored below it.
    with_threshold: int = 0
    below_threshold: int = 0
    buckets: list[int] = field(default_factory=lambda: [0] * SCORE_BUCKETS)

    @property
    def mean(self) -> float | None:
        return self.total / self.conversations if self.conversations else None

    def add(self, score: float, threshold: float | None) -> None:
        self.conversations += 1
        self.total += score
        self.lowest = score if self.lowest is None else min(self.lowest, score)
        self.highest = score if self.highest is None else max(self.highest, score)
        if threshold is not None:
            self.with_threshold += 1
            self.below_threshold += score < threshold
        self.buckets[min(int(score * SCORE_BUCKETS), SCORE_BUCKETS - 1)] += 1

    def merge(self, other: SopScores) -> None:
        if not other.conversations:
            return
        self.conversations += other.conversations
        self.total += other.total
        self.lowest = other.lowest if self.lowest is None else min(self.lowest, other.lowest)  # type: ignore[type-var]  # set together with `conversations`, so set in `other` too
        self.highest = other.highest if self.highest is None else max(self.highest, other.highest)  # type: ignore[type-var]  # set together with `conversations`, so set in `other` too
        self.with_threshold += other.with_threshold
        self.below_threshold += other.below_threshold
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets)]


class CheckStats:
    """The per-check rows of a batch, counted as results go by; small and picklable, so chunks merge.

    The conversations of a batch end in few patterns of outcomes (most pass everything, many fail the
    same checks), so a result is counted as its pattern, one tally a conversation, and the patterns are
    spread over the rows' counts when the rows are read (or every `PATTERNS_HELD` patterns, which keeps
    memory flat). Examples and uncalibrated errors are noted as they come, at the positions of the pattern
    that hold them.
    """

    #: How many distinct patterns are held before they are counted into the rows.
    PATTERNS_HELD = 1024

    def __init__(self) -> None:
        self._rows: dict[tuple, CheckStat] = {}
        self.sop_scores = SopScores()
        #: Per scenario and number of checks, the rows in the order its results list their checks (which
        #: every such result shares), so a result is counted without looking each check up.
        self._in_order: dict[tuple[str | None, int], list[CheckStat]] = {}
        #: How many conversations ended in each pattern of outcomes (per scenario), not yet in the rows.
        self._patterns: dict[tuple[str | None, tuple[Outcome, ...]], int] = {}
        #: Per pattern, the positions of its failures and of its errors.
        self._marks: dict[tuple[Outcome, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}
        #: The verdicts of each scenario's conversations (its repeats), by slug: (name, counts).
        self._scenarios: dict[str, tuple[str, Counts]] = {}
        #: How many conversations that did not pass were blamed on each actor (`summary.blame`).
        self.blame: dict[str, int] = dict.fromkeys(ACTORS, 0)

    @property
    def rows(self) -> dict[tuple, CheckStat]:
        """Each check's row by `(scenario, kind, index, step id)`, in the order the checks were first met."""
        self._count_patterns()
        return self._rows

    def add(self, result: ConversationResult, example: str, scenario: str | None = None, *, slug: str | None = None) -> None:
        """Count every check of one result; `example` is how a failure names it (its source, or `slug run N`);
        `scenario` (else the result's own) tells apart the checks of different scenarios. `slug` keys its scenario's
        row when the checks are not told apart by scenario (a lone scenario's slug, an SOP's id). A suspect one is not
        counted in the rows, only in its scenario's verdicts."""
        key = scenario or result.scenario or slug or result.subject
        self._scenarios.setdefault(key, (result.subject, Counts()))[1].add(result.verdict)
        if result.blame is not None:
            self.blame[result.blame.actor] = self.blame.get(result.blame.actor, 0) + 1
        if result.verdict is Outcome.SUSPECT:
            return
        scenario = scenario or result.scenario
        outcomes = result.outcomes
        rows = self._in_order.get((scenario, len(outcomes)))
        if rows is None:
            rows = self._in_order[scenario, len(outcomes)] = [self._row(line, scenario) for line in result.checks()]
        pattern = (scenario, outcomes)
        self._patterns[pattern] = self._patterns.get(pattern, 0) + 1
        failures, errors = self._marks_of(outcomes)
        for position in failures:
            examples = rows[position].examples
            if len(examples) < EXAMPLES:
                examples.append(example)
        for position in errors:
            if result.uncalibrated_at(position):
                rows[position].uncalibrated += 1
        if len(self._patterns) >= self.PATTERNS_HELD:
            self._count_patterns()
        sop = result.sop
        if sop is not None and sop.score is not None:
            self.sop_scores.add(sop.score, sop.threshold)

    def _marks_of(self, outcomes: tuple[Outcome, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        marks = self._marks.get(outcomes)
        if marks is None:
            if len(self._marks) >= self.PATTERNS_HELD:
                self._marks.clear()
            failures = tuple(i for i, outcome in enumerate(outcomes) if outcome is Outcome.FAIL)
            errors = tuple(i for i, outcome in enumerate(outcomes) if outcome is Outcome.ERROR)
            marks = self._marks[outcomes] = (failures, errors)
        return marks

    def _count_patterns(self) -> None:
        """Spread the patterns held over the rows' counts."""
        for (scenario, outcomes), n in self._patterns.items():
            for row, outcome in zip(self._in_order[scenario, len(outcomes)], outcomes):
                row.counts.add(outcome, n)
        self._patterns.clear()

    def _row(self, line: CheckLine, scenario: str | None) -> CheckStat:
        key = (scenario, *line.id)
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = CheckStat(line.kind, line.label, line.index, line.step_id, scenario)
        return row

    def scenarios(self) -> list[ScenarioStats]:
        """Per scenario (its slug; a lone scenario's or SOP's name), how its conversations ended, in the order the
        scenarios were first met: the pass rate and pass^k of its repeats, as `run` gives them per scenario."""
        return [ScenarioStats(slug, name, counts) for slug, (name, counts) in self._scenarios.items()]

    @property
    def repeated(self) -> bool:
        """Whether some scenario was judged on more than one conversation."""
        return any(counts.total > 1 for _, counts in self._scenarios.values())

    def merge(self, other: CheckStats) -> None:
        for actor, n in other.blame.items():
            self.blame[actor] = self.blame.get(actor, 0) + n
        rows = self.rows  # its patterns counted once, before the other's rows join them
        for key, row in other.rows.items():
            mine = rows.get(key)
            if mine is None:
                mine = rows[key] = CheckStat(row.kind, row.label, row.index, row.id, row.scenario)
            mine.merge(row)
        self.sop_scores.merge(other.sop_scores)
        for slug, (name, counts) in other._scenarios.items():
            self._scenarios.setdefault(slug, (name, Counts()))[1].update(counts)

    @classmethod
    def restored(cls, rows: Iterable[CheckStat], sop_scores: SopScores, scenarios: Iterable[tuple[str, str, Counts]],
                 blame: Mapping[str, int] | None = None) -> CheckStats:
        """The statistics a summary recorded, read back: its rows in their order, its SOP scores, per scenario
        (slug, name, counts of its verdicts), and how many were blamed on each actor."""
        stats = cls()
        stats._rows = {(row.scenario, row.kind, row.index, row.id): row for row in rows}
        stats.sop_scores = sop_scores
        stats._scenarios = {slug: (name, counts) for slug, name, counts in scenarios}
        stats.blame.update(blame or {})
        return stats

    def __getstate__(self) -> dict:
        # the order index is rebuilt where it is needed
        return {"rows": self.rows, "sop_scores": self.sop_scores, "scenarios": self._scenarios, "blame": self.blame}

    def __setstate__(self, state: dict) -> None:
        self._rows, self.sop_scores, self._scenarios = state["rows"], state["sop_scores"], state["scenarios"]
        self.blame = state["blame"]
        self._in_order, self._patterns, self._marks = {}, {}, {}

    def __iter__(self):
        return iter(self.rows.values())

    def __len__(self) -> int:
        return len(self.rows)


def run_stats(runs: Iterable[RunResult]) -> CheckStats:
    """The per-check statistics of a batch of runs, by scenario; a run that errored before it was judged has none,
    and a suspect run's checks are not counted."""
    stats = CheckStats()
    for run in runs:
        if run.conversation is not None and run.verdict is not Outcome.SUSPECT:
            stats.add(run.conversation, f"{run.slug} run {run.number}", run.slug)
    return stats


def runs_by_persona(runs: Iterable[RunResult]) -> dict[str, list[RunResult]]:
    """The runs that played a persona trait, by trait, in the order the traits first appear (none: empty).

    A batch run as a persona matrix reads its statistics per trait: each group is a batch of its own for
    `scenario_stats` and `run_stats`.
    """
    grouped: dict[str, list[RunResult]] = {}
    for run in runs:
        if run.persona is not None:
            grouped.setdefault(run.persona, []).append(run)
    return grouped


def persona_stats(runs: Iterable[RunResult]) -> list[ScenarioStats]:
    """Per persona trait, its runs counted the way a scenario's are (`slug` and `name` are the trait)."""
    return [ScenarioStats(name, name, Counts(run.verdict for run in group)) for name, group in runs_by_persona(runs).items()]
