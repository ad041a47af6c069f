"""The typed results of judging: a conversation, a run, a batch.

Every renderer (text, JSON, JUnit, HTML), the results codec, the summary and
the exit code read these, and nothing else: "every check of a result" is
`ConversationResult.checks`, and "count the outcomes" is `Counts`. A result
read back from a results file is the same type as one just judged; a check
it names is then a `CheckRef` (its key and label), not the check object.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any, Literal

from .._shown import cut, listed
from ..checks.base import CheckResult, Outcome
from ..checks.judged import JudgedResult
from ..errors import Problem
from ..events.model import Conversation
from ..events.transcript import TranscriptLine as TranscriptLine  # the one transcript type, named where results are
from ..llm.base import Usage
from ..sop.model import Step, StepSetResult
from .records import READ_AS


@dataclass(frozen=True)
class CheckRef:
    """A check known by its key and label: how a results file names it, when the check itself is not at hand."""

    key: str
    label: str


@dataclass(frozen=True)
class Crash:
    """An exception that ended a run or a check: kept whole, so a crashing agent, check or judge can be debugged."""

    type: str
    message: str
    traceback: str | None = None
    #: What raised it: a check's label, or None for the run itself (the agent, the simulator, the harness).
    where: str | None = None


@dataclass(frozen=True)
class MetricScore:
    """One quality metric: a score from 1 to 5, or passed or not, with the judge's reasoning."""

    name: str
    reasoning: str
    score: int | None = None
    passed: bool | None = None


@dataclass(frozen=True)
class QualityScores:
    """The quality metrics of a conversation; never part of the verdict. `error` says why none were scored."""

    scores: tuple[MetricScore, ...] = ()
    usage: Usage | None = None
    error: str | None = None


@dataclass(frozen=True)
class Reason:
    """Why a simulated user is suspect: the rule that saw it, the turn (None: the whole conversation), and what it saw."""

    turn: int | None
    rule: str
    text: str


@dataclass(frozen=True)
class UserReview:
    """Whether the simulated user of a conversation can be trusted: `ok`, or `suspect` with every reason found.

    A suspect user makes its run (or recorded conversation) `suspect`: neither a pass nor the agent's failure.
    """

    verdict: Literal["ok", "suspect"]
    reasons: tuple[Reason, ...] = field(default=())

    @classmethod
    def of(cls, reasons: Iterable[Reason]) -> UserReview:
        found = tuple(reasons)
        return cls("suspect" if found else "ok", found)

    @property
    def suspect(self) -> bool:
        return self.verdict == "suspect"

    def rules(self) -> Sequence[str]:
        """The rules that saw something, each once, in the order they did."""
        return tuple(dict.fromkeys(reason.rule for reason in self.reasons))

    def joined(self, more: Iterable[Reason]) -> UserReview:
        """This review with more reasons (another reviewer's) after its own."""
        return UserReview.of((*self.reasons, *more))


#: Who a failure may be blamed on, in the order counts list them (`summary.blame`).
ACTORS = ("agent", "user", "environment", "judge", "unknown")


@dataclass(frozen=True)
class Blame:
    """Who a failure was due to (`agent`, `user`, `environment`, `judge`, `unknown`), the decisive turn and event,
    the checks it explains, a one-line reason and the rule that decided (`dialogcheck.blame`)."""

    actor: str
    turn: int | None
    event: int | None
    #: The decisive event's place in the file it was imported from: the index of its message in a tau-bench
    #: `traj` or tau2 `messages` list, the span id of an OTLP span; None where the source has no such place.
    source_index: int | str | None
    checks: tuple[str, ...]
    reason: str
    rule: str


class CheckKind(str, Enum):
    ASSERTION = "assertion"
    SOP = "sop"
    CRITERION = "criterion"

    def __str__(self) -> str:
        return self.value


#: The keys of checks the LLM judge decides: a criterion and an `llm_judge` step.
JUDGED_KEYS = ("criterion", "llm_judge")
#: How every view marks a verdict the answer cache gave (a committed cache is input: it must not decide unmarked).
CACHED_MARK = " [answered from the cache]"


@dataclass(frozen=True)
class CheckLine:
    """One check of a conversation with what every view needs of it: where it came from and how it ended.

    Everything but its place is read from its `result`, so the judge's marks (inconclusive, the samples'
    split, uncalibrated, cached) are the result's own and are listed nowhere else. Its names are all made
    here: `id` tells it apart, `name` is its own name, and `label`, `page_label`, `title` and `short_title`
    are how each view shows it.
    """

    kind: CheckKind
    #: Assertions and criteria count from 1 in file order; SOP steps have their `step`.
    index: int | None
    #: The check's result: its check is an assertion, a step's evaluator, a `Criterion` (or, read back from a
    #: file, its `CheckRef`).
    result: CheckResult
    step: Step | None = None

    @property
    def check(self) -> Any:
        return self.result.check

    @property
    def outcome(self) -> Outcome:
        return self.result.outcome

    @property
    def detail(self) -> str:
        """The result's detail; a cached verdict's ends with `CACHED_MARK`, so the text, HTML and JUnit views all show it."""
        return self.result.detail + CACHED_MARK if self.cached else self.result.detail

    @property
    def evidence(self) -> tuple[int, ...]:
        return self.result.evidence

    @property
    def inconclusive(self) -> bool:
        """A judged check the judge found inconclusive (its outcome is then `error`)."""
        return getattr(self.result, "inconclusive", False)

    @property
    def split(self) -> tuple[tuple[str, int], ...]:
        """How a judged check's samples split when they disagreed (`unstable`)."""
        return getattr(self.result, "split", ())

    @property
    def uncalibrated(self) -> bool:
        """A judged check whose judge has no calibration good enough: `error`, shown as uncalibrated."""
        return getattr(self.result, "uncalibrated", False)

    @property
    def cached(self) -> bool:
        """A judged check decided by answers from the answer cache (its detail ends with `CACHED_MARK`)."""
        return getattr(self.result, "cached", False)

    @property
    def key(self) -> str:
        return self.check.key

    @property
    def judged(self) -> bool:
        """Whether the LLM judge decides it (a criterion, an `llm_judge` step)."""
        return self.key in JUDGED_KEYS

    @property
    def step_id(self) -> str | None:
        return self.step.id if self.step is not None else None

    @property
    def id(self) -> tuple[CheckKind, int | None, str | None]:
        """What tells the check from the others of its subject, in every view, statistic and comparison: its kind,
        its number (assertions, criteria) and its step's id (SOP steps)."""
        return (self.kind, self.index, self.step_id)

    @property
    def criterion(self) -> str | None:
        """A criterion's text."""
        return self.check.text if self.kind is CheckKind.CRITERION else None

    @property
    def name(self) -> str:
        """The check's own name, as a results file holds it: an assertion's label, a step's label (else its
        evaluator's key, `step_name`), a criterion's text."""
        if self.kind is CheckKind.SOP:
            return step_name(self.step.label, self.key)  # type: ignore[union-attr]  # an SOP line has its step
        if self.kind is CheckKind.CRITERION:
            return self.check.text
        return self.check.label

    @property
    def _optional(self) -> str:
        return "" if self.step is None or self.step.required else " (optional)"

    @property
    def label(self) -> str:
        """How `check`'s text output names the check: an assertion's label, a step's id and label (else its
        evaluator's label), a quoted criterion."""
        if self.kind is CheckKind.SOP:
            return f"{self.step.id} {self.step.label or self.check.label}{self._optional}"  # type: ignore[union-attr]  # an SOP line has its step
        if self.kind is CheckKind.CRITERION:
            return f"criterion {self.criterion!r}"
        return self.check.label

    @property
    def page_label(self) -> str:
        """How the HTML report names the check, the same for a result just judged and one read back from a file:
        its `name`, a step's after its id."""
        if self.kind is CheckKind.SOP:
            return f"{self.step.id} {self.name}{self._optional}"  # type: ignore[union-attr]  # an SOP line has its step
        return self.name

    @property
    def title(self) -> str:
        """How a run's report names the check: its label, `SOP <id> <name>`, or `criterion '<text>'`."""
        if self.kind is CheckKind.SOP:
            return f"SOP {self.step.id} {self.name}"  # type: ignore[union-attr]  # an SOP line has its step
        if self.kind is CheckKind.CRITERION:
            return f"criterion {self.criterion!r}"
        return self.check.label

    @property
    def short_title(self) -> str:
        """How a summary names the check: its label, `SOP <id>`, or `criterion '<text>'`."""
        if self.kind is CheckKind.SOP:
            return f"SOP {self.step.id}"  # type: ignore[union-attr]  # an SOP line has its step
        return self.title


def step_name(label: str | None, key: str) -> str:
    """An SOP step's name: the label written in its file, else its evaluator's key (what a results file holds of both)."""
    return label or key


#: Every outcome, in declaration order (iterating the enum itself is slow, and counters are made per result).
OUTCOMES = tuple(Outcome)


def worst(outcomes: Collection[Outcome]) -> Outcome:
    """FAIL if anything failed; else ERROR if anything errored; else SUSPECT if any was (a run whose simulated
    user failed its review); else PASS (skips decide nothing)."""
    if Outcome.FAIL in outcomes:
        return Outcome.FAIL
    if Outcome.ERROR in outcomes:
        return Outcome.ERROR
    return Outcome.SUSPECT if Outcome.SUSPECT in outcomes else Outcome.PASS


class Counts:
    """How many of something passed, failed, errored and were skipped: the one counter of outcomes."""

    __slots__ = ("by_outcome",)

    def __init__(self, outcomes: Iterable[Outcome] = ()) -> None:
        self.by_outcome = dict.fromkeys(OUTCOMES, 0)
        for outcome in outcomes:
            self.by_outcome[outcome] += 1

    def add(self, outcome: Outcome, n: int = 1) -> None:
        self.by_outcome[outcome] += n

    def update(self, other: Counts) -> None:
        for outcome, n in other.by_outcome.items():
            self.by_outcome[outcome] += n

    @property
    def passed(self) -> int:
        return self.by_outcome[Outcome.PASS]

    @property
    def failed(self) -> int:
        return self.by_outcome[Outcome.FAIL]

    @property
    def errored(self) -> int:
        return self.by_outcome[Outcome.ERROR]

    @property
    def skipped(self) -> int:
        return self.by_outcome[Outcome.SKIP]

    @property
    def suspect(self) -> int:
        return self.by_outcome[Outcome.SUSPECT]

    @property
    def total(self) -> int:
        return sum(self.by_outcome.values())

    @property
    def worst(self) -> Outcome:
        """The `worst` of the outcomes counted."""
        return worst([outcome for outcome, n in self.by_outcome.items() if n])

    def verdicts_text(self) -> str:
        """`720 passed, 480 failed, 0 errored` (and `, 3 suspect` when some are): verdicts as every text output says them."""
        suspect = f", {self.suspect:,} suspect" if self.suspect else ""
        return f"{self.passed:,} passed, {self.failed:,} failed, {self.errored:,} errored{suspect}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Counts) and other.by_outcome == self.by_outcome

    def __repr__(self) -> str:
        return f"Counts(pass={self.passed}, fail={self.failed}, error={self.errored}, skip={self.skipped})"


@dataclass(frozen=True)
class ConversationResult:
    """Everything decided about one conversation: its assertions, SOP steps and criteria, and its metrics."""

    source: str
    #: The name of the scenario or SOP it was judged against.
    subject: str
    assertions: tuple[CheckResult, ...] = ()
    sop: StepSetResult | None = None
    criteria: tuple[JudgedResult, ...] = ()
    conversation_id: str | None = None
    notes: tuple[str, ...] = ()
    #: Quality metric scores, when asked for; never part of the verdict.
    metrics: QualityScores | None = None
    #: Token counts and cost of every judge call made for this conversation.
    usage: Usage | None = None
    #: The slug of its scenario, when it was judged as one of several.
    scenario: str | None = None
    #: Probable typos in the names of its record (file, line, column), as warnings.
    warnings: tuple[Problem, ...] = ()
    #: The exceptions of checks that crashed (each such check is an `error`).
    crashes: tuple[Crash, ...] = ()
    #: The review of its `user` messages (`check --review-user`); a suspect one makes the verdict SUSPECT.
    user_review: UserReview | None = None
    #: Whose fault it was that it did not pass, and where (`dialogcheck.blame`); None when it passed.
    blame: Blame | None = None
    #: (trace id, root span id) of the trace the conversation was imported from, where verdicts exported as
    #: telemetry hang; None for a conversation not read from traces. Not written to results files.
    trace: tuple[str, str] | None = None
    #: What the user and the agent said, for a page that shows it (`check --html`); empty unless asked for, and
    #: not written to results files (the conversation's own file holds it).
    transcript: tuple[TranscriptLine, ...] = field(default=(), repr=False, compare=False)

    def checks(self) -> list[CheckLine]:
        """Every check in the order it is reported: assertions, SOP steps, criteria (a new list each call, the caller's own)."""
        return list(self._lines)

    @cached_property
    def _lines(self) -> tuple[CheckLine, ...]:
        """The checks as lines, made once: the encoder, the statistics and the reports all read them."""
        lines = [CheckLine(CheckKind.ASSERTION, i, r) for i, r in enumerate(self.assertions, 1)]
        if self.sop is not None:
            lines += [CheckLine(CheckKind.SOP, None, s.result, s.step) for s in self.sop.results]
        lines += [CheckLine(CheckKind.CRITERION, i, c) for i, c in enumerate(self.criteria, 1)]
        return tuple(lines)

    def uncalibrated_at(self, position: int) -> bool:
        """Whether the check at `position` of `checks()` was left to a judge without a good enough calibration;
        found without making the lines (judged checks are SOP steps and criteria, which come last)."""
        position -= len(self.assertions)
        steps = self.sop.results if self.sop is not None else ()
        if position < 0:
            return False
        result = steps[position].result if position < len(steps) else self.criteria[position - len(steps)]
        return isinstance(result, JudgedResult) and result.uncalibrated

    def check_counts(self) -> Counts:
        """The outcome of every single check, optional SOP steps included."""
        return Counts(self.outcomes)

    @cached_property
    def outcomes(self) -> tuple[Outcome, ...]:
        """Every check's outcome, in the order of `checks()`: what counting needs, without making the lines."""
        outcomes = [r.outcome for r in self.assertions]
        if self.sop is not None:
            outcomes += [s.result.outcome for s in self.sop.results]
        outcomes += [c.outcome for c in self.criteria]
        return tuple(outcomes)

    @cached_property
    def verdict(self) -> Outcome:
        """SUSPECT if its user is; else the `worst` of its checks, SOP steps counting as their set's verdict."""
        if self.user_review is not None and self.user_review.suspect:
            return Outcome.SUSPECT
        decisive = [r.outcome for r in self.assertions] + [c.outcome for c in self.criteria]
        if self.sop is not None:
            decisive.append(self.sop.outcome)
        return worst(decisive)

    @cached_property
    def any_error(self) -> bool:
        """Whether some single check came out `error` (an optional step too), whatever the verdict."""
        return Outcome.ERROR in self.outcomes


@dataclass(frozen=True)
class ScenarioInfo:
    """The scenario a run played, as its results name it."""

    slug: str
    name: str
    path: str
    type: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class SimulatorInfo:
    """How a run's simulated user was played (what a rerun needs to ask the same) and the tokens it spent."""

    model: str
    temperature: float | None = None
    #: The seed the provider was sent; None when none was (none given, or a provider without one: Anthropic).
    seed: int | None = None
    #: The sha256 of the simulator's prompt as first rendered (its system prompt, before any conversation).
    prompt_sha256: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class FaultMet:
    """A fault the environment fired on one call of a run: its kind, its tool, its place in the file's
    `faults` (`index`, from 1) and the event that carried it to the agent (`event`, its index)."""

    kind: str
    tool: str = field(metadata={READ_AS: ""})
    index: int = field(metadata={READ_AS: 0})
    event: int | None = None


@dataclass(frozen=True)
class EnvironmentInfo:
    """What the environment of a run did: which one, its fault seed and whether the schedule was on, the calls
    it answered, the faults it fired, and the state the run began and ended with.

    `unanswered` are the events of tool calls the agent reported that the environment never answered (a tool of
    the environment's, called somewhere else); `unreported` those the environment answered that the agent, which
    reports its tool calls, never reported.
    """

    name: str
    seed: int = field(metadata={READ_AS: 0})
    faults_on: bool = field(metadata={READ_AS: True})
    calls: int = field(metadata={READ_AS: 0})
    faults: tuple[FaultMet, ...] = ()
    unanswered: tuple[int, ...] = ()
    unreported: tuple[int, ...] = ()
    initial_state: Any = None
    final_state: Any = None
    #: The sha256 of the environment the run had (`Environment.digest`), to tell it from another of the same name.
    digest: str = ""

    @property
    def fault_kinds(self) -> tuple[str, ...]:
        """The kinds of fault the run met, each once, in the order first met."""
        return tuple(dict.fromkeys(fault.kind for fault in self.faults))


@dataclass(frozen=True)
class RunResult:
    """One run of one scenario: its verdict, what was said, and how it was judged.

    `verdict` is ERROR for a harness failure (`error` says which); `crashes` keeps
    every exception that ended the run or one of its checks. `conversation` is
    the judged conversation when the run got that far. `events` are the recorded
    events as written to `run_N.events.jsonl`.
    """

    scenario: ScenarioInfo
    number: int
    verdict: Outcome
    conversation: ConversationResult | None = None
    error: str | None = None
    crashes: tuple[Crash, ...] = ()
    conversation_id: str | None = None
    ended_because: str | None = None
    duration: float = 0.0
    latencies: tuple[float, ...] = ()
    transcript: tuple[TranscriptLine, ...] = ()
    #: The recorded events as received, written to `run_N.events.jsonl`.
    events: Sequence[Mapping[str, Any]] = field(default=(), repr=False, compare=False)
    #: The same events read as the typed record the checks judged; None when they could not be read.
    record: Conversation | None = field(default=None, repr=False, compare=False)
    #: Why `record` is None though there are events (shown beside them in the HTML report).
    record_note: str | None = None
    #: The review of the simulated user, once the simulation ended (None: a scripted user, or a run cut short).
    user_review: UserReview | None = None
    #: Whose fault it was that the run did not pass, and where (`dialogcheck.blame`); None when it passed.
    blame: Blame | None = None
    #: How many attempts of this run were suspect (`--retry-suspect`); this result is the last attempt.
    suspect_attempts: int = 0
    #: The persona trait the simulated user played on this run (`--persona`, a scenario's `personas`), if any.
    persona: str | None = None
    #: How an LLM simulated the user on this run; None for a scripted run.
    simulator: SimulatorInfo | None = None
    #: What the run's environment (`eval/environments/NAME.yml`) answered and changed; None without one.
    environment: EnvironmentInfo | None = None

    @property
    def slug(self) -> str:
        return self.scenario.slug

    @property
    def key(self) -> tuple[str, int]:
        return (self.scenario.slug, self.number)

    def checks(self) -> list[CheckLine]:
        """The checks of the run's conversation (none for a run that errored before it had one)."""
        return self.conversation.checks() if self.conversation is not None else []

    def error_reason(self) -> str | None:
        """Why an errored run errored: the harness error, else what its errored checks say (a judge failure, say)."""
        if self.error:
            return cut(self.error)
        return "; ".join(f"{line.short_title}: {cut(line.detail)}" for line in self.checks() if line.outcome is Outcome.ERROR) or None


#: pass^k is reported for k up to this many runs (a summary line stays readable).
MAX_K = 8


@dataclass(frozen=True)
class ScenarioStats:
    slug: str
    name: str
    counts: Counts

    @property
    def runs(self) -> int:
        return self.counts.total

    @property
    def judged(self) -> int:
        return self.counts.passed + self.counts.failed

    @property
    def pass_rate(self) -> float | None:
        """Passed over judged runs; errored and suspect runs say nothing about the agent and are counted apart."""
        return self.counts.passed / self.judged if self.judged else None

    @property
    def flaky(self) -> bool:
        return self.counts.passed > 0 and self.counts.failed > 0

    def pass_hat(self, most: int = MAX_K) -> dict[int, float]:
        """pass^1 .. pass^min(n, most): the chance that k runs drawn from these all pass, C(c, k) / C(n, k)."""
        values: dict[int, float] = {}
        product = 1.0
        for k in range(1, min(self.judged, most) + 1):
            product *= max(self.counts.passed - (k - 1), 0) / (self.judged - (k - 1))
            values[k] = product
        return values


def scenario_stats(runs: Iterable[RunResult]) -> list[ScenarioStats]:
    """Per scenario, in the order the scenarios first appear."""
    grouped: dict[str, tuple[str, Counts]] = {}
    for run in runs:
        _, counts = grouped.setdefault(run.scenario.slug, (run.scenario.name, Counts()))
        counts.add(run.verdict)
    return [ScenarioStats(slug, name, counts) for slug, (name, counts) in grouped.items()]


def unfinished_text(unfinished: Sequence[tuple[str, int]], planned: int | None) -> str:
    """`1 of 2 planned runs never finished (a run 2)`: what every output says of a batch cut short."""
    of = f" of {planned:,}" if planned is not None else ""
    noun = "run" if planned == 1 or (planned is None and len(unfinished) == 1) else "runs"
    return f"{len(unfinished):,}{of} planned {noun} never finished ({listed([f'{slug} run {number}' for slug, number in unfinished], 5)})"


@dataclass(frozen=True)
class BatchResult:
    """A batch of runs: what was planned, what finished, and how each ended.

    `passed`, `failed` and `errored` count runs; the summary, the reports and
    the exit code are all made from this.
    """

    runs: tuple[RunResult, ...]
    planned: int | None = None
    started: str | None = None
    updated: str | None = None
    #: Whether Ctrl-C or SIGTERM cut it short; None while it runs.
    interrupted: bool | None = None
    #: Where the batch's results folder is, when it has one.
    folder: str | None = None
    #: Read back from a folder: the planned runs that never finished, as (slug, number), in plan order.
    unfinished: tuple[tuple[str, int], ...] = ()

    @property
    def counts(self) -> Counts:
        return Counts(run.verdict for run in self.runs)

    def blame_counts(self) -> dict[str, int]:
        """How many runs that did not pass were blamed on each actor (`summary.blame`), every actor listed."""
        counts = dict.fromkeys(ACTORS, 0)
        for run in self.runs:
            if run.blame is not None:
                counts[run.blame.actor] = counts.get(run.blame.actor, 0) + 1
        return counts

    @property
    def worst(self) -> Outcome:
        """What the exit code says of the batch: its runs' worst outcome, and an error for a planned run that never
        finished (it decided nothing, so the batch cannot pass)."""
        return worst([self.counts.worst, *([Outcome.ERROR] if self.unfinished else [])])

    @property
    def passed(self) -> int:
        return self.counts.passed

    @property
    def failed(self) -> int:
        return self.counts.failed

    @property
    def errored(self) -> int:
        return self.counts.errored

    @property
    def suspect(self) -> int:
        return self.counts.suspect

    def scenarios(self) -> list[ScenarioStats]:
        return scenario_stats(self.runs)

    def failed_runs(self) -> list[RunResult]:
        return [run for run in self.runs if run.verdict is Outcome.FAIL]

    def errored_runs(self) -> list[RunResult]:
        return [run for run in self.runs if run.verdict is Outcome.ERROR]

    def suspect_runs(self) -> list[RunResult]:
        return [run for run in self.runs if run.verdict is Outcome.SUSPECT]
