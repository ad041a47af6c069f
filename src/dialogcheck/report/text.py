"""`--format text`: one line per check, readable at a glance.

Renders to a `rich.text.Text` (plain data with styles): the CLI prints it in
colour on a terminal and plain when piped; `str()` of it is the plain form.
Conversation text is never read as markup, and every piece of it goes through
`_shown.shown` (cut to a bounded length, control characters and line breaks
written as escapes), so no agent can forge a line of this output.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Span, Text

from .._shown import shown, visible
from ..checks.base import Outcome
from ..errors import LoadError
from ..evaluate import ConversationResult
from .data import tally

STYLES = {Outcome.PASS: "bold green", Outcome.FAIL: "bold red", Outcome.ERROR: "bold yellow", Outcome.SKIP: "dim"}
WORDS = {Outcome.PASS: "PASS", Outcome.FAIL: "FAIL", Outcome.ERROR: "ERROR", Outcome.SKIP: "SKIP"}

#: Read once: an enum member read through its class costs a descriptor call, and each line reads two.
_PASS, _SKIP = Outcome.PASS, Outcome.SKIP
#: `f"{WORDS[outcome]:<5}"` and its style, per outcome.
_WORD_CELLS = {outcome: (f"{word:<5}", STYLES[outcome]) for outcome, word in WORDS.items()}


class _Styled:
    """Builds a `Text` from styled pieces with few `str.translate` calls.

    rich strips control codes from every string it is given with `str.translate`, which costs a
    dictionary miss per distinct character per call on ASCII text, and per character on other
    text: ~130 µs a conversation when appended piece by piece. Here each run of ASCII pieces
    becomes one `Text` with its spans placed by hand, any other piece is appended alone, and
    `append_text` joins them without stripping again. The result equals appending each piece.
    """

    def __init__(self) -> None:
        self.done = Text()
        self.run: list[tuple[str, str]] = []  # ASCII pieces not yet in `done`

    def add(self, piece: str, style: str = "") -> None:
        if not piece:
            return
        if piece.isascii():
            self.run.append((piece, style))
            return
        self._flush()
        self.done.append(piece, style)

    def _flush(self) -> None:
        if not self.run:
            return
        spans, start = [], 0
        for piece, style in self.run:
            end = start + len(piece)
            if style:
                spans.append(Span(start, end, style))
            start = end
        run = Text("".join(piece for piece, _ in self.run), spans=spans)
        if len(run) != start:  # control codes were stripped, so the spans are off: append as rich would
            run = Text()
            for piece, style in self.run:
                run.append(piece, style)
        self.done.append_text(run)
        self.run.clear()

    def text(self) -> Text:
        self._flush()
        return self.done


def _line(text: _Styled, outcome: Outcome, label: str, detail: str, indent: str = "  ") -> None:
    text.add(indent)
    text.add(*_WORD_CELLS[outcome])
    text.add(f" {shown(label)}", "bold" if outcome is not _PASS else "")
    text.add(f": {shown(detail)}\n" if detail else "\n", "" if outcome is not _SKIP else "dim")


def _counts(outcomes: Sequence[Outcome]) -> str:
    parts = []
    for outcome, word in ((Outcome.PASS, "passed"), (Outcome.FAIL, "failed"), (Outcome.ERROR, "errored"), (Outcome.SKIP, "skipped")):
        n = outcomes.count(outcome)
        if n or outcome in (Outcome.PASS, Outcome.FAIL):
            parts.append(f"{n} {word}")
    return ", ".join(parts)


def _metrics_line(metrics) -> str:
    if "error" in metrics:
        return f"not scored: {metrics['error']}"
    parts = []
    for name, value in metrics.items():
        if name == "usage" or not isinstance(value, dict):
            continue
        shown = ("passed" if value["passed"] else "not passed") if "passed" in value else f"{value['score']}/5"
        parts.append(f"{name} {shown}")
    return ", ".join(parts)


def render_conversation(result: ConversationResult) -> Text:
    text = _Styled()
    text.add(f"{shown(str(result.source))}", "bold")
    text.add(f"  {shown(result.subject)}" + (f" ({shown(result.scenario)})" if result.scenario is not None else "") + "\n", "cyan")
    outcomes: list[Outcome] = []
    for r in result.assertions:
        _line(text, r.outcome, r.check.label, r.detail)
        outcomes.append(r.outcome)
    if result.sop is not None:
        sop = result.sop
        score = f", score {sop.score:.2f}" if sop.score is not None else ""
        threshold = f" (threshold {sop.threshold:g})" if sop.threshold is not None else ""
        text.add(f"  SOP steps{score}{threshold}:\n")
        for s in sop.results:
            optional = " (optional)" if not s.step.required else ""
            _line(text, s.outcome, f"{s.step.id} {s.step.label or s.result.check.label}{optional}", s.result.detail, "    ")
            outcomes.append(s.outcome)
    for c in result.criteria:
        _line(text, c.outcome, f"criterion {c.criterion!r}", c.detail)
        outcomes.append(c.outcome)
    if result.metrics:
        text.add("  quality (not part of the verdict): ", "dim")
        text.add(shown(_metrics_line(result.metrics)) + "\n", "dim")
    for note in result.notes:
        text.add(f"  {shown(note)}\n", "dim")
    verdict = result.verdict
    text.add("  verdict: ")
    text.add(WORDS[verdict], STYLES[verdict])
    text.add(f" ({_counts(outcomes)})\n")
    return text.text()


def render_check(results: Sequence[ConversationResult]) -> Text:
    text = Text()
    for i, result in enumerate(results):
        if i:
            text.append("\n")
        text.append_text(render_conversation(result))
    if len(results) > 1:
        text.append_text(render_tally([r.verdict for r in results]))
    return text


def render_tally(verdicts: Sequence[Outcome]) -> Text:
    counts = tally(verdicts)
    return Text(
        f"\n{counts['conversations']} conversations: {counts['passed']} passed, "
        f"{counts['failed']} failed, {counts['errored']} errored\n",
        style="bold",
    )


def render_load_error(error: LoadError) -> Text:
    text = Text()
    for problem in error.problems:
        text.append(f"{visible(problem.file)}:{problem.line}:{problem.column}:", style="bold red")
        text.append(f" {visible(problem.message)}\n")
    return text
