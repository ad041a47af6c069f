"""`--format text` of `check`: one line per check, readable at a glance.

Pure functions of typed results into `Styled` text: the CLI prints it in
colour on a terminal and plain when piped. Every piece of text from outside
goes through `_shown.shown` (cut to a bounded length, control characters and
line breaks written as escapes), so no agent can forge a line of this output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .._shown import counted, shown, visible
from ..checks.base import Outcome
from ..errors import LoadError
from ..results.model import Blame, CheckKind, CheckLine, ConversationResult, Counts, QualityScores, ScenarioStats, UserReview
from ..results.stats import CheckStats
from .styled import Styled

STYLES = {Outcome.PASS: "bold green", Outcome.FAIL: "bold red", Outcome.ERROR: "bold yellow", Outcome.SKIP: "dim", Outcome.SUSPECT: "bold magenta"}
WORDS = {Outcome.PASS: "PASS", Outcome.FAIL: "FAIL", Outcome.ERROR: "ERROR", Outcome.SKIP: "SKIP", Outcome.SUSPECT: "SUSPECT"}


def outcome_line(text: Styled, outcome: Outcome, label: str, detail: str, indent: str = "  ") -> None:
    """`  FAIL  label: detail`, the outcome word coloured, a failing label bold, a skipped detail dim."""
    text.append(indent)
    text.append(f"{WORDS[outcome]:<5}", STYLES[outcome])
    text.append(f" {shown(label)}", "" if outcome is Outcome.PASS else "bold")
    text.append(f": {shown(detail)}\n" if detail else "\n", "dim" if outcome is Outcome.SKIP else "")


def check_counts_text(counts: Counts) -> str:
    """`10 passed, 1 failed, 1 skipped`: passed and failed always, errored and skipped when there are some."""
    parts = [f"{counts.passed:,} passed", f"{counts.failed:,} failed"]
    parts += [f"{n:,} {word}" for n, word in ((counts.errored, "errored"), (counts.skipped, "skipped")) if n]
    return ", ".join(parts)


def render_user_review(review: UserReview, suspect_attempts: int = 0, indent: bool = False) -> Styled:
    """`simulated user: ok`, or `suspect` with a line per reason; how many attempts were suspect, when retried."""
    text = Styled("  simulated user: " if indent else "simulated user: ")
    text.append(review.verdict, "bold magenta" if review.suspect else "green")
    text.append(f" ({counted(suspect_attempts, 'suspect attempt')})\n" if suspect_attempts else "\n")
    for reason in review.reasons:
        where = f"turn {reason.turn}" if reason.turn is not None else "overall"
        text.append(f"{'    ' if indent else '  '}{where} {shown(reason.rule)}: {shown(reason.text)}\n", "magenta")
    return text


def blame_line(blame: Blame, indent: str = "  ") -> Styled:
    """`blame: agent at turn 2, event 7 (source message 9) [wrong_call]: why`: whose fault a failure was, and where."""
    where = ", ".join(part for part in (
        f"turn {blame.turn}" if blame.turn is not None else "",
        f"event {blame.event}" if blame.event is not None else "",
    ) if part)
    source = f" (source {'message' if isinstance(blame.source_index, int) else 'span'} {shown(str(blame.source_index))})" if blame.source_index is not None else ""
    text = Styled(f"{indent}blame: ")
    text.append(blame.actor, "bold")
    text.append(f"{' at ' + where if where else ''}{source} [{blame.rule}]: {shown(blame.reason)}\n")
    return text


def suspect_text(n: int) -> str:
    """`, N suspect` when some simulated users were suspect (said only then)."""
    return f", {n:,} suspect" if n else ""


def _metrics_line(metrics: QualityScores) -> str:
    if metrics.error is not None:
        return f"not scored: {metrics.error}"
    return ", ".join(
        f"{s.name} {('passed' if s.passed else 'not passed') if s.passed is not None else f'{s.score}/5'}" for s in metrics.scores
    )


def _sop_heading(result: ConversationResult) -> str:
    sop = result.sop
    score = f", score {sop.score:.2f}" if sop.score is not None else ""  # type: ignore[union-attr]  # called only for a result with an SOP
    threshold = f" (threshold {sop.threshold:g})" if sop.threshold is not None else ""  # type: ignore[union-attr]  # called only for a result with an SOP
    return f"  SOP steps{score}{threshold}:\n"


def with_citations(line: CheckLine, detail: str | None = None) -> str:
    """A judged check's detail (`detail`, when it is shown cut), then the events the judge cited; a
    deterministic check's detail names its own events already."""
    detail = line.detail if detail is None else detail
    if not line.evidence or line.kind is CheckKind.ASSERTION or not line.judged:  # a judged check's evidence is what the judge cited
        return detail
    return f"{detail} [cited: event {', '.join(map(str, line.evidence))}]"


def render_conversation(result: ConversationResult, *, failing_only: bool = False) -> Styled:
    """One conversation: every check, its quality scores and notes, its verdict. With `failing_only`, only the
    checks that failed or errored (and nothing at all for a conversation that passed): how a batch shows it."""
    if failing_only and result.verdict is Outcome.PASS and not result.any_error:
        return Styled()
    text = Styled(shown(str(result.source)), "bold")
    scenario = f" ({shown(result.scenario)})" if result.scenario is not None else ""
    text.append(f"  {shown(result.subject)}{scenario}\n", "cyan")
    previous = None
    for line in result.checks():
        if failing_only and line.outcome in (Outcome.PASS, Outcome.SKIP):
            continue
        if line.kind is CheckKind.SOP and previous is not CheckKind.SOP:
            text.append(_sop_heading(result))
        outcome_line(text, line.outcome, line.label, with_citations(line), "    " if line.kind is CheckKind.SOP else "  ")
        previous = line.kind
    if result.metrics and not failing_only:
        text.append("  quality (not part of the verdict): ", "dim")
        text.append(shown(_metrics_line(result.metrics)) + "\n", "dim")
    for note in () if failing_only else result.notes:
        text.append(f"  {shown(note)}\n", "dim")
    if result.user_review is not None and (result.user_review.suspect or not failing_only):
        text.extend(render_user_review(result.user_review, indent=True))
    if result.blame is not None:
        text.extend(blame_line(result.blame))
    verdict = result.verdict
    text.append("  verdict: ")
    text.append(WORDS[verdict], STYLES[verdict])
    text.append(f" ({check_counts_text(result.check_counts())})\n")
    return text


def plain_conversation(result: ConversationResult) -> bytes:
    """One conversation's text block, plain, as UTF-8 (what a worker sends back for piped output)."""
    return render_conversation(result).plain.encode("utf-8")


def plain_failing_checks(result: ConversationResult) -> bytes:
    """One conversation's failing checks as a plain block; empty for a conversation that passed."""
    return render_conversation(result, failing_only=True).plain.encode("utf-8")


def render_more_failures(hidden: int, where: str) -> Styled:
    """The line after the failing conversations shown: how many more there are, and where to see them."""
    return Styled(f"{hidden:,} more failing or errored: see {where}\n", "bold")


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def render_scenario_rows(rows: Iterable[ScenarioStats]) -> Styled:
    """`slug  2/4 passed, 2 failed, 0 errored  pass rate 50%  pass^1 50% pass^2 17%  flaky` a scenario: the
    per-scenario table of `run`'s summary, and of `check` where a scenario was judged on several conversations."""
    text = Styled()
    for row in rows:
        counts = row.counts
        style = "green" if counts.failed == 0 and counts.errored == 0 and counts.suspect == 0 else "red" if counts.failed else "yellow"
        text.append(f"{shown(row.slug):<32}", style)
        hats = " ".join(f"pass^{k} {rate(v)}" for k, v in row.pass_hat().items()) if row.runs > 1 else ""
        text.append(
            f" {counts.passed:,}/{row.runs:,} passed, {counts.failed:,} failed, {counts.errored:,} errored{suspect_text(counts.suspect)}"
            f"  pass rate {rate(row.pass_rate)}  {hats}".rstrip()
        )
        text.append("  flaky\n" if row.flaky else "\n", "bold yellow")
    return text


def render_check_scenarios(stats: CheckStats) -> Styled:
    """`check`'s per-scenario table, headed, when some scenario was judged on more than one conversation (its
    repeats); nothing otherwise."""
    if not stats.repeated:
        return Styled()
    return Styled("per scenario:\n", "bold").extend(render_scenario_rows(stats.scenarios())).append("\n")


def render_check_table(stats: CheckStats, *, examples: bool = True) -> Styled:
    """Each check of a batch that failed or errored somewhere, most failures first: its counts, failure rate and
    a few conversations it failed; the checks that never did, in one line."""
    rows = sorted((row for row in stats if row.counts.failed or row.counts.errored), key=lambda row: (-row.counts.failed, -row.counts.errored))
    text = Styled("checks, most failures first:\n" if rows else "", "bold")
    if rows:
        text.append(f"  {'fail':>7} {'pass':>7} {'skip':>6} {'error':>6} {'fail rate':>9}  check\n", "dim")
    for row in rows:
        c = row.counts
        text.append(f"  {c.failed:>7,}", "red" if c.failed else "")
        text.append(f" {c.passed:>7,} {c.skipped:>6,}")
        text.append(f" {c.errored:>6,}", "yellow" if c.errored else "")
        scenario = f"{shown(row.scenario)}: " if row.scenario is not None else ""
        number = f"#{row.index} " if row.kind is CheckKind.ASSERTION else ""
        text.append(f" {_rate(row.failure_rate):>9}  {scenario}{number}{shown(row.label)}")
        if examples and row.examples:
            text.append(f"  e.g. {shown(row.examples[0])}", "dim")
        text.append("\n")
    quiet = len(stats) - len(rows)
    if quiet:
        text.append(f"{counted(quiet, 'check')} never failed or errored\n", "green" if rows else "")
    uncalibrated = [row for row in stats if row.uncalibrated]
    for row in uncalibrated:  # counted apart: errors that no calibrated judge decided (--require-calibration)
        scenario = f"{shown(row.scenario)}: " if row.scenario is not None else ""
        text.append(f"uncalibrated: {scenario}{shown(row.label)} left undecided {counted(row.uncalibrated, 'time')}\n", "yellow")
    scores = stats.sop_scores
    if scores.conversations:
        below = f"; {scores.below_threshold:,} of {scores.with_threshold:,} below their threshold" if scores.with_threshold else ""
        text.append(f"SOP score: mean {scores.mean:.2f} (lowest {scores.lowest:.2f}, highest {scores.highest:.2f}) over {counted(scores.conversations, 'conversation')}{below}\n")
    return text


def conversations_line(counts: Counts) -> str:
    """`1,200 conversations: 720 passed, 480 failed, 0 errored`: the counts of a check of many conversations."""
    return f"{counted(counts.total, 'conversation')}: {counts.verdicts_text()}"


def blame_counts_line(blame: Mapping[str, int]) -> str:
    """`whose fault: 87 agent, 21 user, 8 environment`: the actors blamed, each that was at least once; "" for none."""
    named = [f"{n:,} {actor}" for actor, n in blame.items() if n]
    return f"whose fault: {', '.join(named)}\n" if named else ""


def render_tally(counts: Counts, blame: Mapping[str, int] | None = None) -> Styled:
    """The batch line after several conversations, and whose fault the ones that did not pass were."""
    return Styled(f"\n{conversations_line(counts)}\n", "bold").append(blame_counts_line(blame or {}))


def render_output_summary(counts: Counts, stats: CheckStats, shards: int, folder: str) -> Styled:
    """What `check --output` (and `report` of its folder) prints: the per-check table, the counts and where the
    shards are."""
    table = render_check_scenarios(stats).extend(render_check_table(stats))
    return table.append("\n" if table.pieces else "").append(
        f"{conversations_line(counts)}\n{blame_counts_line(stats.blame)}"
        f"results: {counted(shards, 'shard')} in {folder}\n"
    )


def render_load_error(error: LoadError) -> Styled:
    text = Styled()
    for problem in error.problems:
        text.append(f"{visible(problem.file)}:{problem.line}:{problem.column}:", "bold red")
        text.append(f" {visible(problem.message)}\n")
    return text


def render_warnings(warnings: Iterable[Mapping[str, object]]) -> Styled:
    """Probable typos, a `file:line:col: warning: ...` line each, with how often each recurs in its file."""
    text = Styled()
    for w in warnings:
        again = f" ({int(w['count']) - 1:,} more like it in this file)" if int(w["count"]) > 1 else ""  # type: ignore[call-overload]  # a warning document's count is an int
        text.append(f"{visible(str(w['file']))}:{w['line']}:{w['column']}: warning: {visible(str(w['message']))}{again}\n")
    return text
