"""The HTML report: one self-contained page a person opens to read a batch, of ten conversations or of 100,000.

CSS and JS (in `assets/`) are inlined and nothing is fetched, so the file can
be mailed or archived as CI output. A Content-Security-Policy admits only the
page's own style and script, by hash: even a slip in escaping could not run a
script.

`HtmlReport` builds the page as the results go by, in one pass from top to
bottom, holding nothing per conversation: each conversation (or run) becomes
a compact record in the page's data blocks, and the page's script lists them
(failing and flaky first, a page at a time), filters and searches them and
draws a record's checks when it is shown. A record names each check's
outcome and detail by their number in that check's table of values, which
the page builds as it reads the records (a value is written out the first
time it comes), so 100,000 conversations that fail the same ways stay a few
megabytes. What spans the batch (the status banner, the per-check table, the
SOP score spread, the scenarios) is drawn at the end, after the data blocks
in the file but first on the page. A run also gets a `<template>` with its
transcript, event timeline and errors, drawn here (`html_run`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from importlib.resources import files
from typing import Any

import orjson

from .._redact import mask_bytes
from .._shown import counted, cut
from ..checks.base import Outcome
from ..results.model import BatchResult, CheckKind, CheckLine, ConversationResult, Counts, RunResult, unfinished_text
from ..results.stats import CheckStats
from .html_overview import CheckRow, Group, banner, checks_table, list_section, personas, scenarios, sop_spread
from .html_run import anchor_part, esc, run_anchor, run_body, transcript_html, user_review_html

__all__ = ["HtmlReport", "conversations_page", "render_batch_html", "render_check_html", "run_anchor"]

_OUTCOME_CODE = {Outcome.PASS: "p", Outcome.FAIL: "f", Outcome.ERROR: "e", Outcome.SKIP: "s", Outcome.SUSPECT: "u"}
_KIND_CODE = {CheckKind.ASSERTION: "a", CheckKind.SOP: "s", CheckKind.CRITERION: "c"}
#: Records per data block: what the report holds before writing them out.
BLOCK_RECORDS = 1000
#: Characters of distinct (outcome, detail) values remembered, all checks together. Past it a new value is
#: written out each time it comes, so memory stays flat even on a log whose details never repeat.
REMEMBERED_CHARACTERS = 16 * 2**20
#: Conversations of a `check` page shown with their transcript: the first this many that did not pass.
TRANSCRIPTS_SHOWN = 1000
#: A title shares at least this much with the one before to be written as the rest of it.
SHARED_TITLE_CHARS = 8


def _evidence(line: CheckLine) -> str:
    """The event indexes a check points to, space-separated; anything but an integer is dropped."""
    return " ".join(str(i) for i in line.evidence if isinstance(i, int) and not isinstance(i, bool))


def _data(value: Any) -> str:
    """JSON for a `<script type="application/json">` block: no `<`, so nothing in it can end the block or open a tag.

    Held secrets are masked first, in the JSON form the masker knows, before `<` is spelt another way."""
    return mask_bytes(orjson.dumps(value)).replace(b"<", b"\\u003c").decode()


class HtmlReport:
    """The page of one batch, built as results go by: `start`, then `add_conversation` or `add_run` for
    each, then `finish`; each returns the next piece of the page, to be written in that order."""

    def __init__(self, *, title: str, noun: str, repeated: bool, started: str | None = None, updated: str | None = None, unfinished: str | None = None):
        self.title, self.noun, self.repeated, self.started, self.updated = title, noun, repeated, started, updated
        #: What a batch read back from its folder lacks (`1 of 2 planned runs never finished (...)`): said under the banner.
        self.unfinished = unfinished
        self.counts = Counts()
        #: Every check's counts and the SOP scores: what `check` and `run` count, counted by the same `CheckStats`.
        self.stats = CheckStats()
        self._groups: dict[tuple, Group] = {}
        #: The verdicts of the runs of each persona trait, when the batch was a persona matrix.
        self._personas: dict[str, Counts] = {}
        self._rows: dict[tuple, CheckRow] = {}
        self._shapes: dict[tuple[int, ...], int] = {}
        self._pending: list[list[Any]] = []
        self._entries = 0
        self._last_title = ""
        self._remembered = 0
        self._transcripts = 0

    # -- the pieces, in the order they are written ----------------------------------------------

    def start(self) -> str:
        css, js = _asset("report.css"), _asset("report.js")
        csp = f"default-src 'none'; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; base-uri 'none'; form-action 'none'"
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f'<title>{esc(self.title)}</title><style>{css}</style></head><body data-noun="{esc(self.noun)}">\n'
        )

    def add_conversation(self, result: ConversationResult) -> str:
        """A conversation `check` judged: its record (the data block's, when one is full)."""
        group = self._group((result.scenario, result.subject), result.scenario or result.subject, result.subject,
                            anchor_part(result.scenario or "conversations"), self._entries + 1)
        more: dict[str, Any] = {}
        if result.conversation_id and result.conversation_id not in result.source:
            more["id"] = result.conversation_id
        # its review (`check --review-user`) and its transcript, drawn from a template as a run's body is
        body = user_review_html(result.user_review) if result.user_review is not None else ""
        if result.transcript and result.verdict is not Outcome.PASS and self._transcripts < TRANSCRIPTS_SHOWN:
            body += transcript_html(result.transcript)  # of the first conversations that did not pass: the page stays small
            self._transcripts += 1
        if body:
            more["t"] = 1
        index = self._add(result.source, result.verdict, group, result.scenario, list(result.checks()), more, result.sop)
        self.stats.add(result, result.source, result.scenario)
        template = f'<template id="dc-t-{index}">{body}</template>\n' if body else ""
        return template + self._block(full_only=True)

    def add_run(self, run: RunResult) -> str:
        """A run of a batch: its record, and a template with its transcript, event timeline and errors."""
        scenario = run.scenario
        group = self._group((scenario.slug, None), scenario.slug, scenario.name, anchor_part(scenario.slug), run.number, scenario.tags)
        lines = list(run.checks())
        more: dict[str, Any] = {"n": run.number}
        evidence = [_evidence(line) for line in lines]
        if any(evidence):
            more["ev"] = evidence
        persona = ""
        if run.persona is not None:
            self._personas.setdefault(run.persona, Counts()).add(run.verdict)
            persona = f" ({run.persona})"
        index = self._add(f"{run.slug} run {run.number}{persona}", run.verdict, group, run.slug, lines, more, run.conversation.sop if run.conversation else None)
        if run.conversation is not None and run.verdict is not Outcome.SUSPECT:  # as `run_stats` counts a batch's runs
            self.stats.add(run.conversation, f"{run.slug} run {run.number}", run.slug)
        template = f'<template id="dc-t-{index}">{run_body(run, run_anchor(run.slug, run.number))}</template>\n'
        return template + self._block(full_only=True)

    def finish(self) -> str:
        """The records still held, then what spans the batch, the page's index of checks, and its script."""
        meta = {
            "noun": self.noun,
            "repeated": self.repeated,
            "groups": [[g.anchor, g.slug, g.name, list(g.tags)] for g in self._groups.values()],
            "checks": [[_KIND_CODE[row.kind], row.label, row.group] for row in self._rows.values()],
            "shapes": [list(shape) for shape in self._shapes],
        }
        return (
            self._block(full_only=False)
            + '<a class="skip-link" href="#runs">Skip to the list</a>'
            + f'<header class="top"><h1>{esc(self.title)}</h1><span class="totals" id="totals">{esc(self._totals())}</span>'
            + '<label><input type="checkbox" id="failures-only"> Failures only</label>'
            + '<span class="shown" id="shown" aria-live="polite"></span></header><main>'
            + banner(self.counts, self.noun)
            + (f'<p class="meta unfinished" role="status"><strong>Unfinished:</strong> {esc(self.unfinished)}</p>' if self.unfinished else "")
            + self._when()
            + checks_table(self._rows.values(), self.stats.rows, list(self._groups.values()), noun=self.noun)
            + sop_spread(self.stats.sop_scores, self.noun)
            + scenarios(list(self._groups.values()), self.repeated, self.noun)
            + personas(self._personas)
            + list_section(self.noun)
            + f'</main>\n<script type="application/json" id="dc-meta">{_data(meta)}</script>\n'
            + f"<script>{_asset('report.js')}</script></body></html>\n"
        )

    # -- records --------------------------------------------------------------------------------

    def _group(self, key: tuple, slug: str, name: str, anchor: str, number: int, tags: tuple[str, ...] = ()) -> Group:
        """The entry's group, made when its first entry (`number`) comes."""
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = Group(len(self._groups), slug, name, anchor, number, tags)
        return group

    def _add(self, title: str, verdict: Outcome, group: Group, scenario: str | None, lines: list[CheckLine], more: dict[str, Any], sop) -> int:
        """Hold the entry's record and count its verdict (its checks are counted by `stats`); its index among the page's entries."""
        shape, tokens = [], []
        for line in lines:
            row = self._row(line, scenario, group.index)
            shape.append(row.position)
            tokens.append(self._token(row, _OUTCOME_CODE[line.outcome] + cut(line.detail)))
        if sop is not None and sop.score is not None:
            more["score"] = f"{sop.score:.2f}"
        shape_id = self._shapes.setdefault(tuple(shape), len(self._shapes))
        record: list[Any] = [self._title(title), _OUTCOME_CODE[verdict], group.index, shape_id, tokens]
        if more:
            record.append(more)
        self._pending.append(record)
        self.counts.add(verdict)
        group.counts.add(verdict)
        self._entries += 1
        return self._entries - 1

    def _title(self, title: str) -> str | list[Any]:
        """The title, or [how many characters it shares with the one before, the rest]: sources of one file differ
        at the end (`log.jsonl#conv-000123`)."""
        shared = _shared_prefix(self._last_title, title)
        self._last_title = title
        return [shared, title[shared:]] if shared >= SHARED_TITLE_CHARS else title

    def _row(self, line: CheckLine, scenario: str | None, group: int) -> CheckRow:
        key = (scenario, *line.id)  # as `CheckStats` keys its rows
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = CheckRow(len(self._rows), line.page_label, group, key, line.kind)
        return row

    def _token(self, row: CheckRow, value: str) -> int | str:
        """The number of `value` in the row's table, or the value itself the first time (the page adds it to the table)."""
        number = row.values.get(value)
        if number is not None:
            return number
        if self._remembered < REMEMBERED_CHARACTERS:
            row.values[value] = row.written
            self._remembered += len(value)
        row.written += 1
        return value

    def _block(self, *, full_only: bool) -> str:
        if not self._pending or (full_only and len(self._pending) < BLOCK_RECORDS):
            return ""
        block, self._pending = self._pending, []
        return f'<script type="application/json" class="dc-entries">{_data(block)}</script>\n'

    # -- what spans the batch -------------------------------------------------------------------

    def _totals(self) -> str:
        counts, checks = self.counts, Counts()
        for row in self.stats:
            checks.update(row.counts)
        return (
            f"{counted(counts.total, self.noun)}: {counts.verdicts_text()} · checks: {checks.passed:,} passed, {checks.failed:,} failed, {checks.errored:,} errored"
            + (f", {checks.skipped:,} skipped" if checks.skipped else "")
        )

    def _when(self) -> str:
        when = " · ".join(f"{name} {esc(value)}" for name, value in (("started", self.started), ("updated", self.updated)) if value)
        return f'<p class="meta">{when + " · " if when else ""}focus or click a check to highlight the events it points to</p>' if self.noun == "run" else ""



def _shared_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their start (a bisection of slices, each compared in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _asset(name: str) -> str:
    return files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def render_batch_html(batch: BatchResult, *, title: str = "dialogcheck report") -> str:
    """`report.html` of a batch of runs."""
    unfinished = f"{unfinished_text(batch.unfinished, batch.planned)}: finish the batch with dialogcheck run --resume" if batch.unfinished else None
    page = HtmlReport(title=title, noun="run", repeated=True, started=batch.started, updated=batch.updated, unfinished=unfinished)
    return page.start() + "".join(page.add_run(run) for run in batch.runs) + page.finish()


def conversations_page() -> HtmlReport:
    """The page of the conversations `check` judges (`check --html`, and `report --html` of a `check --output` folder):
    the conversations of one scenario are its repeats, with pass^k and flaky as a batch's runs."""
    return HtmlReport(title="dialogcheck check", noun="conversation", repeated=True)


def render_check_html(results: Iterable[ConversationResult]) -> str:
    """The page `check --html` writes, of results at hand (the command itself writes it as they go by)."""
    page = conversations_page()
    return page.start() + "".join(page.add_conversation(result) for result in results) + page.finish()
