"""The one codec of results: typed results to the JSON every results file and `--format json` hold, and back.

`check --format json` prints `conversation_document`s; `check --output` writes
them a line each in its shards; `run_N.json` is `run_document`, and
`summary.json` is `summary_document`. Reading any of them back (`report`,
`--resume`, a shard) gives the same typed results through the `decode_*`
functions, so every reader of a results file speaks the model, not dicts.

Text from outside (a judge's rationale, an agent's error, a message) is cut to
`_shown.TEXT_LIMIT` characters here, so every file and report is bounded; the
events file keeps every message whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from .._redact import redact
from .._shown import cut
from ..checks.base import CheckResult, Difference, Outcome
from ..checks.judged import Criterion, JudgedResult, Judgement
from ..errors import LoadError, Problem
from ..events.values import ABSENT
from ..llm.base import Usage
from ..sop.model import Step, StepResult, StepSetResult
from .model import (
    BatchResult,
    Blame,
    CheckKind,
    CheckRef,
    ConversationResult,
    Counts,
    Crash,
    EnvironmentInfo,
    MetricScore,
    QualityScores,
    Reason,
    RunResult,
    ScenarioInfo,
    ScenarioStats,
    SimulatorInfo,
    TranscriptLine,
    UserReview,
    scenario_stats,
)
from .records import read_record, read_usage as _usage, record_document
from .stats import CheckStat, CheckStats, SopScores, persona_stats, run_stats, runs_by_persona

INDENT = orjson.OPT_INDENT_2


# -- conversations ---------------------------------------------------------------------------------


def conversation_document(result: ConversationResult, *, with_source: bool = False) -> dict[str, Any]:
    """The `check --format json` shape of docs/results-reference.md for one conversation."""
    data: dict[str, Any] = {}
    if with_source:
        data["source"] = result.source
    data["verdict"] = result.verdict
    data["subject"] = result.subject
    if result.scenario is not None:  # one of several scenarios: its slug, which pairs conversations with it
        data["scenario"] = result.scenario
    if result.conversation_id is not None:
        data["conversation_id"] = result.conversation_id
    # Read from the results themselves, not through `ConversationResult.checks()`: its lines exist for the
    # views that mix the kinds, and the document keeps each kind in its own list.
    assertions = [
        {
            "index": index,
            "key": r.check.key,
            "label": r.check.label,
            "passed": r.outcome is Outcome.PASS,
            "outcome": r.outcome,  # a str enum: written as its value
            "detail": cut(r.detail),
            "evidence": list(r.evidence),
            **_differences_document(r.differences),
        }
        for index, r in enumerate(result.assertions, 1)
    ]
    steps = [
        {
            "id": s.step.id,
            "type": s.result.check.key,
            "label": s.step.label,
            "required": s.step.required,
            "weight": s.step.weight,
            "outcome": s.result.outcome,  # a str enum: written as its value
            "detail": cut(s.result.detail),
            "evidence": list(s.result.evidence),
            **_judge_marks(s.result),
        }
        for s in (result.sop.results if result.sop is not None else ())
    ]
    criteria = [_criterion_document(c) for c in result.criteria]
    data["assertions"] = assertions
    data["sop"] = steps
    if result.sop is not None:
        data["sop_outcome"] = result.sop.outcome.value
        data["sop_score"] = result.sop.score
    data["criteria"] = criteria
    if result.metrics is not None:
        data["metrics"] = _metrics_document(result.metrics)
    if result.usage is not None:
        data["usage"] = result.usage.to_dict()
    if result.notes:
        data["notes"] = list(result.notes)
    if result.user_review is not None:
        data["user_review"] = user_review_document(result.user_review)
    if result.blame is not None:
        data["blame"] = record_document(result.blame)
    return data


def _differences_document(differences: Sequence[Difference]) -> dict[str, Any]:
    """`differences`: each compared field that differed, its first differing path and both values whole (an
    absent `actual` is a field the event lacked), so a long value is compared outside rather than read cut."""
    if not differences:
        return {}
    return {
        "differences": [
            {"field": d.field, "path": d.path, **({} if d.actual is ABSENT else {"actual": d.actual}), "expected": d.expected}
            for d in differences
        ]
    }


def _read_differences(found: Any) -> tuple[Difference, ...]:
    """The `differences` of an assertion read back; anything not shaped as written is left out, not guessed."""
    if not isinstance(found, list):
        return ()
    return tuple(
        Difference(str(d.get("field", "")), str(d.get("path", "")), d.get("actual", ABSENT), d.get("expected"))
        for d in found
        if isinstance(d, Mapping)
    )


def user_review_document(review: UserReview) -> dict[str, Any]:
    """`{verdict: ok|suspect, reasons: [{turn, rule, text}]}`: the review of a simulated user, in every file that has one."""
    return {"verdict": review.verdict, "reasons": [{"turn": r.turn, "rule": r.rule, "text": cut(r.text)} for r in review.reasons]}


def _criterion_document(criterion: JudgedResult) -> dict[str, Any]:
    document: dict[str, Any] = {"criterion": criterion.check.text, "outcome": criterion.outcome, "detail": cut(criterion.detail), "evidence": list(criterion.evidence)}
    document.update(_judge_marks(criterion))
    if criterion.usage is not None:
        document["usage"] = criterion.usage.to_dict()
    return document


def conversation_line(result: ConversationResult) -> bytes:
    """One conversation as one line of JSON (a shard's line, an item of `{"conversations": [...]}`)."""
    return orjson.dumps(conversation_document(result, with_source=True))


def _metrics_document(metrics: QualityScores) -> dict[str, Any]:
    if metrics.error is not None:
        return {"error": metrics.error}
    scores: dict[str, Any] = {}
    for score in metrics.scores:
        value = {"passed": score.passed} if score.passed is not None else {"score": score.score}
        scores[score.name] = value | {"reasoning": score.reasoning}
    if metrics.usage is not None:
        scores["usage"] = metrics.usage.to_dict()
    return scores


def quality_scores(document: Mapping[str, Any]) -> QualityScores:
    """The judge's metric answer (`{metric: {score|passed, reasoning}}`, `usage`, or `error`) as typed scores."""
    if "error" in document:
        return QualityScores(error=str(document["error"]))
    usage = document.get("usage")
    scores = tuple(
        MetricScore(name, str(value.get("reasoning", "")), value.get("score"), value.get("passed"))
        for name, value in document.items()
        if name != "usage" and isinstance(value, Mapping)
    )
    return QualityScores(scores, _usage(usage))


class _Reader:
    """Reads one results document into typed results; every shape problem is a `LoadError` naming the file."""

    def __init__(self, where: str, line: int | None = None):
        self.where, self.line = where, line

    def fail(self, message: str) -> LoadError:
        return LoadError([Problem(message, self.where, self.line or 1, 1)])

    def get(self, document: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str, *, required: bool = True) -> Any:
        if key not in document:
            if required:
                raise self.fail(f"not a dialogcheck results file: field `{key}` is missing in {what}")
            return None
        value = document[key]
        if value is not None and not isinstance(value, kind):
            raise self.fail(f"`{key}` in {what} has the wrong type ({type(value).__name__})")
        return value

    def outcome(self, value: Any, what: str) -> Outcome:
        try:
            return Outcome(value)
        except ValueError:
            raise self.fail(f"`{value}` in {what} is not an outcome (pass, fail, skip or error)") from None

    def user_review(self, document: Mapping[str, Any]) -> UserReview | None:
        """The `user_review` of a run or conversation, when it has one."""
        review = self.get(document, "user_review", Mapping, "the result", required=False)
        if review is None:
            return None
        verdict = review.get("verdict")
        if verdict not in ("ok", "suspect"):
            raise self.fail(f"`{verdict}` in `user_review.verdict` is not a review verdict (ok or suspect)")
        reasons = self.items(review, "reasons")
        return UserReview(verdict, tuple(Reason(r.get("turn"), str(r.get("rule") or ""), str(r.get("text") or "")) for r in reasons))

    def items(self, document: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
        found = self.get(document, key, list, "the result", required=False) or []
        if not all(isinstance(item, Mapping) for item in found):
            raise self.fail(f"`{key}` must list objects")
        return found

    def conversation(self, document: Mapping[str, Any], source: str, subject: str) -> ConversationResult:
        assertions = tuple(
            CheckResult(
                CheckRef(str(a.get("key", "")), str(a.get("label") or a.get("key", ""))),
                self.outcome(a.get("outcome"), "an assertion"),
                str(a.get("detail") or ""),
                tuple(a.get("evidence") or ()),
                differences=_read_differences(a.get("differences")),
            )
            for a in self.items(document, "assertions")
        )
        steps = self.items(document, "sop")
        sop = None
        if steps or "sop_outcome" in document:
            results = tuple(self._step(s) for s in steps)
            sop = StepSetResult(results, document.get("sop_score"), None, self.outcome(document.get("sop_outcome", "pass"), "`sop_outcome`"))
        criteria = tuple(
            Criterion(str(c.get("criterion", ""))).judged(
                Judgement(
                    self.outcome(c.get("outcome"), "a criterion"), str(c.get("detail") or ""), _usage(c.get("usage")),
                    evidence=tuple(c.get("evidence") or ()), inconclusive=c.get("inconclusive") is True, split=_split(c.get("unstable")),
                    uncalibrated=c.get("uncalibrated") is True, cached=c.get("cached") is True,
                )
            )
            for c in self.items(document, "criteria")
        )
        metrics = document.get("metrics")
        return ConversationResult(
            source=str(document.get("source") or source),
            subject=str(document.get("subject") or subject),
            assertions=assertions,
            sop=sop,
            criteria=criteria,
            conversation_id=document.get("conversation_id"),
            notes=tuple(document.get("notes") or ()),
            metrics=quality_scores(metrics) if isinstance(metrics, Mapping) else None,
            usage=_usage(document.get("usage")),
            scenario=document.get("scenario"),
            user_review=self.user_review(document),
            blame=read_record(Blame, document.get("blame")),
        )

    def _step(self, s: Mapping[str, Any]) -> StepResult:
        kind = str(s.get("type", ""))
        ref = CheckRef(kind, kind)
        step = Step(str(s.get("id", "")), s.get("label"), bool(s.get("required", True)), float(s.get("weight", 1.0)), ref)  # type: ignore[arg-type]  # the document's label: a string or null
        outcome, detail, evidence = self.outcome(s.get("outcome"), "an SOP step"), str(s.get("detail") or ""), tuple(s.get("evidence") or ())
        inconclusive, uncalibrated, cached = s.get("inconclusive") is True, s.get("uncalibrated") is True, s.get("cached") is True
        if inconclusive or uncalibrated or cached or "unstable" in s:  # an llm_judge step the judge marked
            judged = JudgedResult(
                ref, outcome, detail, evidence, inconclusive=inconclusive, split=_split(s.get("unstable")), uncalibrated=uncalibrated, cached=cached
            )
            return StepResult(step, judged)
        return StepResult(step, CheckResult(ref, outcome, detail, evidence))


def _judge_marks(result: CheckResult) -> dict[str, Any]:
    """What the judge's answer marks a judged check with: `inconclusive`, `uncalibrated`, `cached` (answered from the
    answer cache), and the samples' split when `unstable`; nothing for a deterministic check."""
    if not isinstance(result, JudgedResult):
        return {}
    marks: dict[str, Any] = {"inconclusive": True} if result.inconclusive else {}
    if result.uncalibrated:
        marks["uncalibrated"] = True
    if result.cached:
        marks["cached"] = True
    if result.split:
        marks["unstable"] = dict(result.split)
    return marks


def _split(value: Any) -> tuple[tuple[str, int], ...]:
    """The `unstable` split read back: verdict by verdict, most first."""
    if not isinstance(value, Mapping):
        return ()
    return tuple(sorted(((str(k), int(n)) for k, n in value.items() if isinstance(n, int)), key=lambda item: (-item[1], item[0])))


def decode_conversation(document: Any, where: str, line: int | None = None) -> ConversationResult:
    """A conversation's result as `check --format json` and the shards hold it; `LoadError` when it is not one."""
    reader = _Reader(where, line)
    if not isinstance(document, Mapping):
        raise reader.fail("not a result: expected a JSON object")
    for key in ("verdict", "subject"):
        reader.get(document, key, str, "the result")
    return reader.conversation(document, str(document.get("source") or where), document["subject"])


# -- runs ------------------------------------------------------------------------------------------


def run_document(run: RunResult) -> dict[str, Any]:
    """`run_N.json`: verdict, every check with its detail, transcript, latency per turn, errors."""
    judged = conversation_document(run.conversation) if run.conversation is not None else {}
    for key in ("verdict", "subject", "conversation_id", "user_review", "blame"):
        judged.pop(key, None)
    scenario = run.scenario
    document = {
        "scenario": record_document(scenario),
        "run": run.number,
        **_persona_of(run),
        "verdict": run.verdict.value,
        # Harness errors quote what peers sent back (an agent's 500 page, its address): never a credential, never megabytes.
        "error": cut(redact(run.error)) if run.error else run.error,
        "conversation_id": run.conversation_id,
        "ended_because": run.ended_because,
        "duration_s": round(run.duration, 4),
        "latency_s": [round(x, 4) for x in run.latencies],
        # A message is cut to TEXT_LIMIT characters here; the events file keeps it whole.
        "transcript": [{"role": line.role, "text": cut(line.text, f"run_{run.number}.events.jsonl")} for line in run.transcript],
        **judged,
    }
    if run.user_review is not None:
        document["user_review"] = user_review_document(run.user_review)
    if run.blame is not None:
        document["blame"] = record_document(run.blame)
    if run.suspect_attempts:
        document["suspect_attempts"] = run.suspect_attempts
    if run.crashes:
        document["crashes"] = [
            {"where": crash.where, "type": crash.type, "message": cut(redact(crash.message)), "traceback": cut(redact(crash.traceback or ""))}
            for crash in run.crashes
        ]
    if run.simulator is not None:
        document["simulator"] = record_document(run.simulator)
    if run.environment is not None:
        document["environment"] = environment_document(run.environment)
    return document


def environment_document(info: EnvironmentInfo) -> dict[str, Any]:
    """`environment` of `run_N.json`: which environment, its fault seed and schedule, what it answered and changed."""
    return record_document(info)


def encode_run(run: RunResult) -> bytes:
    return orjson.dumps(run_document(run), option=INDENT)


def decode_run(document: Any, where: str) -> RunResult:
    """A run as `run_N.json` holds it; `LoadError` naming the file when it is not one."""
    reader = _Reader(where)
    if not isinstance(document, Mapping):
        raise reader.fail("expected a JSON object")
    for key in ("scenario", "run", "verdict"):
        if key not in document:
            raise reader.fail(f"not a dialogcheck results file: field `{key}` is missing")
    scenario = document["scenario"]
    if not isinstance(scenario, Mapping) or "slug" not in scenario or not isinstance(document["run"], int):
        raise reader.fail("not a run document: `scenario.slug` and `run` are needed")
    info = ScenarioInfo(
        str(scenario["slug"]), str(scenario.get("name") or scenario["slug"]), str(scenario.get("path") or ""),
        scenario.get("type"), tuple(scenario.get("tags") or ()),
    )
    verdict = reader.outcome(document["verdict"], "`verdict`")
    judged = any(key in document for key in ("assertions", "sop", "criteria"))
    conversation = reader.conversation(document, f"{info.slug}/run_{document['run']}", info.name) if judged else None
    if conversation is not None:
        # the document's `scenario` and `user_review` are the run's (below), not its checks'
        conversation = replace(conversation, scenario=None, user_review=None, blame=None)
    crashes = [c for c in document.get("crashes") or () if isinstance(c, Mapping)]
    return RunResult(
        scenario=info,
        number=document["run"],
        verdict=verdict,
        conversation=conversation,
        error=document.get("error"),
        crashes=tuple(Crash(str(c.get("type")), str(c.get("message")), c.get("traceback"), c.get("where")) for c in crashes),
        conversation_id=document.get("conversation_id"),
        ended_because=document.get("ended_because"),
        duration=float(document.get("duration_s") or 0.0),
        latencies=tuple(document.get("latency_s") or ()),
        transcript=tuple(TranscriptLine(str(t.get("role")), str(t.get("text", ""))) for t in document.get("transcript") or () if isinstance(t, Mapping)),
        user_review=reader.user_review(document),
        blame=read_record(Blame, document.get("blame")),
        suspect_attempts=int(document.get("suspect_attempts") or 0),
        persona=document["persona"] if isinstance(document.get("persona"), str) else None,
        simulator=read_record(SimulatorInfo, document.get("simulator")),
        environment=read_record(EnvironmentInfo, document.get("environment")),
    )


# -- batches ---------------------------------------------------------------------------------------


def summary_document(batch: BatchResult) -> dict[str, Any]:
    """`summary.json` of a batch of runs: totals, per-scenario rates and pass^k, failed and errored runs."""
    counts = batch.counts
    document: dict[str, Any] = {
        "started": batch.started,
        "updated": batch.updated,
        "planned_runs": batch.planned,
        "completed_runs": len(batch.runs),
        "passed": counts.passed,
        "failed": counts.failed,
        "errored": counts.errored,
        "suspect": counts.suspect,
        **({"blame": blame} if any((blame := batch.blame_counts()).values()) else {}),
        "scenarios": [_scenario_row(s) for s in batch.scenarios()],
        "failed_runs": [
            {
                "slug": run.slug,
                "run": run.number,
                **_persona_of(run),
                "failed_checks": [{"check": line.short_title, "detail": cut(line.detail)} for line in run.checks() if line.outcome is Outcome.FAIL],
            }
            for run in batch.failed_runs()
        ],
        "errored_runs": [{"slug": run.slug, "run": run.number, **_persona_of(run), "error": run.error_reason()} for run in batch.errored_runs()],
        "suspect_runs": [
            {"slug": run.slug, "run": run.number, "attempts": run.suspect_attempts, "user_review": user_review_document(run.user_review)}
            for run in batch.suspect_runs()
            if run.user_review is not None
        ],
        "retried_runs": [
            {"slug": run.slug, "run": run.number, "suspect_attempts": run.suspect_attempts, "verdict": run.verdict.value}
            for run in batch.runs
            if run.suspect_attempts
        ],
    }
    document |= stats_document(run_stats(batch.runs))
    if personas := runs_by_persona(batch.runs):
        document["personas"] = [_persona_document(name, runs) for name, runs in personas.items()]
    if any(run.simulator is not None for run in batch.runs):
        document["usage"] = _usage_document(batch.runs)
    if batch.interrupted is not None:
        document["interrupted"] = batch.interrupted
    if batch.unfinished:  # read back from a folder: the planned runs it does not hold
        document["unfinished_runs"] = [{"slug": slug, "run": number} for slug, number in batch.unfinished]
    return document


def _scenario_row(s: ScenarioStats) -> dict[str, Any]:
    return {
        "slug": s.slug,
        "name": s.name,
        "runs": s.runs,
        "passed": s.counts.passed,
        "failed": s.counts.failed,
        "errored": s.counts.errored,
        "suspect": s.counts.suspect,
        "pass_rate": s.pass_rate,
        "pass_hat_k": {str(k): v for k, v in s.pass_hat().items()},
        "flaky": s.flaky,
    }


def _persona_of(run: RunResult) -> dict[str, str]:
    return {"persona": run.persona} if run.persona is not None else {}


def _persona_document(name: str, runs: Sequence[RunResult]) -> dict[str, Any]:
    """One persona trait's part of a batch: its runs counted, per scenario, and its per-check statistics."""
    (stats,) = persona_stats(runs)
    return {
        "persona": name,
        "runs": stats.runs,
        "passed": stats.counts.passed,
        "failed": stats.counts.failed,
        "errored": stats.counts.errored,
        "pass_rate": stats.pass_rate,
        "scenarios": [_scenario_row(s) for s in scenario_stats(runs)],
        **stats_document(run_stats(runs)),
    }


def _usage_document(runs: Sequence[RunResult]) -> dict[str, Any]:
    """The tokens (and cost, where the provider said) of the simulated users and of the judge, apart.

    The agent's own model calls happen inside the agent, where dialogcheck does not see them.
    """
    simulator = sum((run.simulator.usage for run in runs if run.simulator is not None), Usage())
    judge = sum((run.conversation.usage for run in runs if run.conversation is not None and run.conversation.usage is not None), Usage())
    return {"simulator": simulator.to_dict(), "judge": judge.to_dict()}


def encode_summary(batch: BatchResult) -> bytes:
    return orjson.dumps(summary_document(batch), option=INDENT)


# -- checks of recorded conversations --------------------------------------------------------------


def check_summary_document(
    counts: Counts, stats: CheckStats | None = None, warnings: Sequence[Mapping[str, Any]] = (), unfinished: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """How many conversations passed, failed and errored (`check`'s summary), each check's statistics, the
    probable typos met, and the planned runs of the results folders judged that never finished."""
    document: dict[str, Any] = {"conversations": counts.total, "passed": counts.passed, "failed": counts.failed, "errored": counts.errored}
    if counts.suspect:
        document["suspect"] = counts.suspect
    if stats is not None and any(stats.blame.values()):
        document["blame"] = dict(stats.blame)
    if stats is not None:
        # per scenario, the same rows as a run's summary.json: its conversations are its repeats
        document["scenarios"] = [_scenario_row(s) for s in stats.scenarios()]
        document |= stats_document(stats)
    if warnings:
        document["warnings"] = list(warnings)
    if unfinished:
        document["unfinished_runs"] = list(unfinished)
    return document


# -- per-check statistics --------------------------------------------------------------------------


def stats_document(stats: CheckStats) -> dict[str, Any]:
    """`checks`: each check's outcome counts, failure rate and failing examples; `sop_scores` when SOP scores were met."""
    checks = []
    for row in stats:
        entry: dict[str, Any] = {"kind": row.kind.value, "label": row.label}
        if row.scenario is not None:
            entry["scenario"] = row.scenario
        entry |= {"id": row.id} if row.kind is CheckKind.SOP else {"index": row.index}
        entry |= {outcome.value: row.counts.by_outcome[outcome] for outcome in (Outcome.PASS, Outcome.FAIL, Outcome.SKIP, Outcome.ERROR)}
        if row.uncalibrated:  # said only then: of the errors, those of a judge below --require-calibration's floor
            entry["uncalibrated"] = row.uncalibrated
        entry["failure_rate"] = row.failure_rate
        entry["examples"] = row.examples
        checks.append(entry)
    document: dict[str, Any] = {"checks": checks}
    if stats.sop_scores.conversations:
        document["sop_scores"] = _sop_scores_document(stats.sop_scores)
    return document


def check_stats_of(document: Mapping[str, Any]) -> CheckStats | None:
    """The per-check statistics and per-scenario rows a summary holds (`check_summary_document` read back), so
    `report` of a `check --output` folder prints what `check` printed; None for a summary without them (written
    before they were). A field of the wrong shape raises KeyError, TypeError or ValueError."""
    checks, scenarios = document.get("checks"), document.get("scenarios")
    if not isinstance(checks, list) or not isinstance(scenarios, list):
        return None
    rows = []
    for entry in checks:
        counts = Counts()
        for outcome in (Outcome.PASS, Outcome.FAIL, Outcome.SKIP, Outcome.ERROR):
            counts.add(outcome, int(entry[outcome.value]))
        rows.append(CheckStat(
            CheckKind(entry["kind"]), str(entry["label"]), entry.get("index"), entry.get("id"), entry.get("scenario"), counts,
            [str(example) for example in entry["examples"]], int(entry.get("uncalibrated", 0)),
        ))
    verdicts = [(str(row["slug"]), str(row["name"]), verdict_counts_of(row)) for row in scenarios]
    blame = document.get("blame")
    blamed = {str(actor): int(n) for actor, n in blame.items()} if isinstance(blame, Mapping) else {}
    return CheckStats.restored(rows, _sop_scores_of(document.get("sop_scores")), verdicts, blamed)


def verdict_counts_of(document: Mapping[str, Any]) -> Counts:
    """The verdicts a summary (or one of its per-scenario rows) counts in `passed`, `failed`, `errored`, `suspect`."""
    counts = Counts()
    for outcome, key in ((Outcome.PASS, "passed"), (Outcome.FAIL, "failed"), (Outcome.ERROR, "errored"), (Outcome.SUSPECT, "suspect")):
        counts.add(outcome, int(document.get(key) or 0))
    return counts


def _sop_scores_of(document: Mapping[str, Any] | None) -> SopScores:
    scores = SopScores()
    if document is None:
        return scores
    scores.conversations = int(document["conversations"])
    scores.total = float(document["mean"] or 0) * scores.conversations
    scores.lowest, scores.highest = document["min"], document["max"]
    scores.with_threshold, scores.below_threshold = int(document["with_threshold"]), int(document["below_threshold"])
    scores.buckets = [int(n) for n in document["histogram"]]
    return scores


def _sop_scores_document(scores: SopScores) -> dict[str, Any]:
    return {
        "conversations": scores.conversations,
        "mean": scores.mean,
        "min": scores.lowest,
        "max": scores.highest,
        "with_threshold": scores.with_threshold,
        "below_threshold": scores.below_threshold,
        "histogram": scores.buckets,
    }
