"""Why a run or a conversation did not pass, as a test framework shows a failing test.

A pytest report, an assertion message and the MCP `explain` tool show what
`run_N.txt` shows of a failure and nothing else: the verdict, the harness
error, each failed or errored check with its detail (what was found instead,
the closest miss) and the end of the transcript. Pure functions of the typed
results, built from the pieces of the text and batch renderers.
"""

from __future__ import annotations

from .._shown import counted, cut, shown, visible
from ..checks.base import Outcome
from ..results.model import ConversationResult, RunResult
from .check_text import STYLES, WORDS, check_counts_text, outcome_line, render_conversation, render_user_review
from .styled import Styled
from .world import world_text

#: Transcript lines an explanation shows: the last ones, where a conversation usually went wrong.
EXCERPT_LINES = 12


def render_run_explanation(run: RunResult) -> Styled:
    """A run's verdict, its harness error, a suspect simulated user's review, its failed and errored checks, and the end of its transcript."""
    text = Styled(f"{shown(run.slug)} run {run.number}: ", "bold")
    text.append(WORDS[run.verdict], STYLES[run.verdict])
    counts = f" ({check_counts_text(run.conversation.check_counts())})" if run.conversation is not None else ""
    text.append(f"{counts}\nscenario: {shown(str(run.scenario.name))}")
    text.append(f"; ended: {shown(run.ended_because)}\n" if run.ended_because else "\n")
    if run.error:
        text.append(f"error: {shown(run.error)}\n", "bold yellow")
    if run.environment is not None:
        text.extend(world_text(run.environment))
    if run.user_review is not None and run.user_review.suspect:
        text.extend(render_user_review(run.user_review, run.suspect_attempts))
    for line in run.checks():
        if line.outcome in (Outcome.FAIL, Outcome.ERROR):
            outcome_line(text, line.outcome, line.title, cut(line.detail), "  ")
    return text.extend(_excerpt(run))


def _excerpt(run: RunResult) -> Styled:
    """The last `EXCERPT_LINES` lines of the transcript, saying how many came before."""
    if not run.transcript:
        return Styled()
    shown_lines = run.transcript[-EXCERPT_LINES:]
    earlier = len(run.transcript) - len(shown_lines)
    text = Styled("\ntranscript" + (f" (last {len(shown_lines):,} of {counted(len(run.transcript), 'line')}):\n" if earlier else ":\n"), "bold")
    for said in shown_lines:
        who = "USER " if said.role == "user" else "AGENT"
        text.append(f"  {who} {visible(cut(said.text, f'run_{run.number}.events.jsonl'))}\n")
    return text


def render_result_explanation(result: ConversationResult | RunResult) -> Styled:
    """A run's explanation, or a judged conversation's failed and errored checks (as `check` shows them in a batch)."""
    if isinstance(result, RunResult):
        return render_run_explanation(result)
    return render_conversation(result, failing_only=True)
