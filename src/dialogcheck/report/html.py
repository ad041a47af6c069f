"""The HTML report: one self-contained page a person opens to read a batch.

CSS and JS (in `assets/`) are inlined and nothing is fetched, so the file can
be mailed or archived as CI output. A Content-Security-Policy admits only the
page's own style and script, by hash: even a slip in escaping could not run a
script. Escaping lives here and only here: every value that came from a
conversation or a results file goes through `_e`, attributes included, and
each message, detail, error and tool result is cut to `_shown.TEXT_LIMIT`.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import orjson

from .._shown import cut
from ..checks.base import Outcome
from ..events.model import BotMessage, Conversation, ToolRun, UserMessage, opens_turn
from ..events.values import show
from ..judge.ledger import ledger_line
from ..results.model import BatchResult, CheckKind, CheckLine, ConversationResult, Counts, Crash, RunResult, ScenarioStats, TranscriptLine

_OUTCOMES = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skip": "SKIP"}
_ID = re.compile(r"[^A-Za-z0-9_-]")
TEXT_LIMIT = 100


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _outcome(value: Any) -> str:
    """A known outcome word, safe as a class name; anything else reads as `skip`."""
    return value if value in _OUTCOMES else "skip"


def _badge(outcome: Any) -> str:
    o = _outcome(outcome)
    return f'<span class="badge {o}">{_OUTCOMES[o]}</span>'


def run_anchor(slug: str, number: Any) -> str:
    """The id of a run's section: `run-<slug>-<n>`, so `report.html#run-<slug>-<n>` links to it."""
    return f"run-{_ID.sub('-', slug)}-{_ID.sub('-', str(number))}"


def _rate(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, (int, float)) else "n/a"


def _pretty(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode()
    except orjson.JSONEncodeError:  # nested past the 255 levels orjson writes (a recorded value may go to 1,024)
        return show(value, 2000)


@dataclass(frozen=True)
class Entry:
    """One run, or one checked conversation, as the page draws it."""

    slug: str
    number: int
    title: str
    verdict: Outcome
    checks: tuple[CheckLine, ...]
    facts: tuple[str, ...] = ()
    sop_score: float | None = None
    error: str | None = None
    record: Conversation | None = None
    #: The events as written, when they could not be read as events (drawn as they are).
    raw_events: Sequence[Mapping[str, Any]] = ()
    note: str | None = None
    transcript: tuple[TranscriptLine, ...] = ()
    latencies: tuple[float, ...] = ()
    whole_in: str | None = None
    crashes: tuple[Crash, ...] = ()


@dataclass(frozen=True)
class Summary:
    """What the page's summary shows: totals, a row per scenario, the failed and errored entries."""

    counts: Counts
    scenarios: list[ScenarioStats]
    failed: list[tuple[Entry, list[CheckLine]]]
    errored: list[tuple[Entry, str | None]]
    total: int
    started: str | None = None
    updated: str | None = None
    #: Repeated runs of one scenario (a batch), where pass^k and flaky mean something.
    repeated: bool = True


def _label(line: CheckLine) -> tuple[str, str]:
    """(group, label) of a check in its entry."""
    if line.kind is CheckKind.SOP:
        optional = "" if line.step.required else " (optional)"  # type: ignore[union-attr]
        return "SOP steps", f"{line.step.id} {line.step.label or line.key}{optional}"  # type: ignore[union-attr]
    if line.kind is CheckKind.CRITERION:
        return "Criteria", str(line.criterion)
    return "Assertions", line.check.label  # type: ignore[union-attr]


def check_counts(entries: Iterable[Entry]) -> Counts:
    """How many checks of all entries passed, failed, errored and were skipped."""
    return Counts(line.outcome for entry in entries for line in entry.checks)


def _check(label: str, outcome: str, evidence: Sequence[Any], detail: str, anchor: str) -> str:
    indexes = [i for i in evidence if isinstance(i, int) and not isinstance(i, bool)]
    links = ", ".join(f'<a href="#{anchor}-ev-{i}">#{i}</a>' for i in indexes)
    shown = f' <span class="check-evidence">· events {links}</span>' if links else ""
    why = f'<div class="check-detail">{_e(cut(detail))}{shown}</div>' if detail or shown else ""
    return (
        f'<li class="check" tabindex="0" data-outcome="{_outcome(outcome)}" data-ev="{" ".join(map(str, indexes))}">'
        f'{_badge(outcome)} <span class="check-label">{_e(label)}</span>{why}</li>'
    )


def _checks_html(entry: Entry, anchor: str) -> str:
    parts, group = [], None
    for line in entry.checks:
        name, label = _label(line)
        if name != group:
            if group is not None:
                parts.append("</ul>")
            score = f" · score {entry.sop_score:.2f}" if name == "SOP steps" and isinstance(entry.sop_score, (int, float)) else ""
            parts.append(f'<h4>{name}{score}</h4><ul class="checks">')
            group = name
        parts.append(_check(label, line.outcome.value, line.evidence, line.detail, anchor))
    if group is None:
        return '<p class="none">No checks were run.</p>'
    return "".join(parts) + "</ul>"


def _tool(event: ToolRun) -> str:
    line = ledger_line(event) or f"framework tool {event.tool_name}(" + ", ".join(f"{k}={show(v, 60)}" for k, v in event.arguments.items()) + ")"
    full = {"arguments": dict(event.arguments), "result": event.result}
    if event.is_error:
        full["error"] = event.error_message
    return f'{_e(line)}<details><summary>arguments and result</summary><pre class="json">{_e(cut(_pretty(full)))}</pre></details>'


def _event(event: Any, recorded: Mapping[str, Any]) -> tuple[str, str, str]:
    """(kind, extra classes, inner HTML) of one typed event (and its object as recorded) in the timeline."""
    if isinstance(event, ToolRun):
        return "tool", ("bad" if event.is_error else "" if event.counted else "dim"), _tool(event)
    if isinstance(event, UserMessage):
        return "user", "dim", _e(f"user {show(event.text, TEXT_LIMIT)}")
    if isinstance(event, BotMessage):
        template = ledger_line(event)
        said = _e(show(event.text, TEXT_LIMIT)) if event.text else ""
        return "bot", "" if template else "dim", _e(f"{template or 'bot'} ") + said
    line = ledger_line(event)
    if line is not None:
        return event.kind, "", _e(line)
    rest = {k: v for k, v in recorded.items() if k != "event"}
    return event.type, "dim", _e(f"{event.type} {show(rest, TEXT_LIMIT)}" if rest else event.type)


def _timeline(entry: Entry) -> dict[int, list[tuple[int, str, str, str]]]:
    """Event rows grouped by turn; the events as written, unread, when they could not be read as events."""
    if entry.record is None:
        rows = [(i, "event", "dim", _e(show(raw, 200))) for i, raw in enumerate(entry.raw_events)]
        return {0: rows} if rows else {}
    grouped: dict[int, list[tuple[int, str, str, str]]] = {}
    for event, recorded in zip(entry.record.events, entry.record.raw_events):
        grouped.setdefault(event.turn, []).append((event.index, *_event(event, recorded)))
    return grouped


def _transcript(entry: Entry) -> dict[int, list[str]]:
    """Transcript lines grouped by turn, counted the way events count them (a user message opens a turn)."""
    grouped: dict[int, list[str]] = {}
    turn = users = 0
    for line in entry.transcript:
        role = "user" if line.role == "user" else "agent"
        latency = ""
        if role == "user":
            users += 1
            turn += 1 if opens_turn(line.text) else 0
            if users <= len(entry.latencies):
                latency = f'<span class="latency">agent answered in {round(entry.latencies[users - 1], 4):.2f} s</span>'
        grouped.setdefault(turn, []).append(f'<div class="msg {role}"><span class="who">{role}{latency}</span>{_e(cut(line.text, entry.whole_in))}</div>')
    return grouped


def _turns_html(entry: Entry, anchor: str) -> str:
    said = _transcript(entry)
    rows = _timeline(entry)
    if not said and not rows:
        return '<p class="none">No transcript or events were recorded.</p>'
    parts = [f'<p class="why">{_e(entry.note)}</p>'] if entry.note else []
    parts.append('<div class="turns"><div class="head">Turn</div><div class="head">Transcript</div><div class="head">Events</div>')
    for turn in sorted(set(said) | set(rows)):
        items = "".join(
            f'<li class="ev k-{_ID.sub("-", kind)} {extra}" id="{anchor}-ev-{index}" tabindex="-1">'
            f'<span class="ev-i">#{index}</span><span class="ev-text">{inner}</span></li>'
            for index, kind, extra, inner in rows.get(turn, [])
        )
        parts.append(
            f'<div class="turn-no" id="{anchor}-turn-{turn}">turn {turn}</div>'
            f'<div class="said">{"".join(said.get(turn, [])) or "<span class=none>—</span>"}</div>'
            f'<ol class="events">{items or "<li class=none>no events</li>"}</ol>'
        )
    return "".join(parts) + "</div>"


def _entry_html(entry: Entry) -> str:
    anchor = run_anchor(entry.slug, entry.number)
    verdict = entry.verdict.value
    error = f'<p class="run-error"><strong>Run errored:</strong> {_e(cut(str(entry.error)))}</p>' if entry.error else ""
    error += "".join(_crash_html(crash) for crash in entry.crashes)
    return (
        f'<section class="run" id="{anchor}" data-verdict="{verdict}" data-slug="{_e(entry.slug)}">'
        f'<details{"" if verdict == "pass" else " open"}><summary>{_badge(verdict)}<h3>{_e(entry.title)}</h3>'
        f'<a class="link" href="#{anchor}" aria-label="link to {_e(entry.title)}">#</a></summary>'
        f'<div class="run-body"><p class="meta">{_e(" · ".join(f for f in entry.facts if f))}</p>{error}'
        f'<div class="run-grid"><div class="run-checks">{_checks_html(entry, anchor)}</div>'
        f'<div class="run-timeline"><h4>Transcript and events</h4>{_turns_html(entry, anchor)}</div></div></div></details></section>'
    )


def _crash_html(crash: Crash) -> str:
    """An exception that broke the run or a check, its traceback folded."""
    where = f" in {crash.where}" if crash.where else ""
    return (
        f'<details class="crash"><summary>{_e(crash.type)}{_e(where)}: {_e(cut(crash.message, limit=TEXT_LIMIT))}</summary>'
        f'<pre class="traceback">{_e(cut(crash.traceback or ""))}</pre></details>'
    )


def _summary_html(summary: Summary, entries: Sequence[Entry], noun: str) -> str:
    first: dict[str, int] = {}
    for entry in entries:
        first.setdefault(entry.slug, entry.number)
    rows = []
    for s in summary.scenarios:
        link = f'<a href="#{run_anchor(s.slug, first[s.slug])}">{_e(s.slug)}</a>' if s.slug in first else _e(s.slug)
        hats = s.pass_hat() if summary.repeated else {}
        hat_text = " ".join(f"pass^{k} {_rate(v)}" for k, v in hats.items()) if len(hats) > 1 else ""
        flaky = summary.repeated and s.flaky
        rows.append(
            f'<tr class="{"bad" if s.counts.failed else ""} {"err" if s.counts.errored else ""}" data-slug="{_e(s.slug)}">'
            f'<td>{link}<span class="scenario-name">{_e(s.name or "")}</span></td>'
            f'<td class="num">{s.runs}</td><td class="num">{s.counts.passed}</td><td class="num failed">{s.counts.failed}</td>'
            f'<td class="num errored">{s.counts.errored}</td><td class="num">{_rate(s.pass_rate)}</td><td>{hat_text}</td>'
            f'<td>{"<span class=flaky>flaky</span>" if flaky else ""}</td></tr>'
        )
    heads = "".join(f'<th class="num">{h}</th>' for h in (f"{noun.capitalize()}s", "Passed", "Failed", "Errored", "Pass rate"))
    table = [
        f"<h2>Pass rate per scenario</h2><table class=\"scenarios\"><thead><tr><th>Scenario</th>{heads}<th>pass^k</th><th></th></tr></thead>",
        f"<tbody>{''.join(rows)}</tbody></table>",
    ]
    parts = ['<section id="summary" aria-label="Summary">']
    flaky = [s for s in summary.scenarios if s.flaky] if summary.repeated else []
    if flaky:
        items = "".join(f'<li><a href="#{run_anchor(s.slug, first.get(s.slug, 1))}">{_e(s.slug)}</a>: passed {s.counts.passed} of {s.judged} judged runs</li>' for s in flaky)
        parts.append(f'<h2>Flaky scenarios</h2><div class="card"><p class="meta">Passed some {noun}s and failed others.</p><ul class="plain">{items}</ul></div>')
    if summary.failed:
        items = "".join(
            f'<li><a href="#{run_anchor(entry.slug, entry.number)}">{_e(entry.title)}</a><ul class="plain">'
            + "".join(f'<li>{_e(line.short_title)}: <span class="why">{_e(cut(line.detail))}</span></li>' for line in lines)
            + "</ul></li>"
            for entry, lines in summary.failed
        )
        parts.append(f'<h2>Failed {noun}s</h2><div class="card"><ul class="plain">{items}</ul></div>')
    if summary.errored:
        items = "".join(
            f'<li><a href="#{run_anchor(entry.slug, entry.number)}">{_e(entry.title)}</a>: <span class="why">{_e(cut(str(reason or "a check errored")))}</span></li>'
            for entry, reason in summary.errored
        )
        parts.append(f'<h2>Errored {noun}s</h2><div class="card"><ul class="plain">{items}</ul></div>')
    return "".join(parts + table) + "</section>"


def _asset(name: str) -> str:
    return files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _page(summary: Summary, entries: Sequence[Entry], *, title: str, noun: str) -> str:
    """The summary, then every entry with its checks, transcript and event timeline."""
    css, js = _asset("report.css"), _asset("report.js")
    checks = check_counts(entries)
    counts = summary.counts
    totals = (
        f"{summary.total} {noun}s: {counts.passed} passed, {counts.failed} failed, "
        f"{counts.errored} errored · checks: {checks.passed} passed, {checks.failed} failed, {checks.errored} errored"
        + (f", {checks.skipped} skipped" if checks.skipped else "")
    )
    when = " · ".join(f"{name} {_e(value)}" for name, value in (("started", summary.started), ("updated", summary.updated)) if value)
    body = "".join(_entry_html(entry) for entry in entries)
    csp = f"default-src 'none'; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; base-uri 'none'; form-action 'none'"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f'<title>{_e(title)}</title><style>{css}</style></head><body data-noun="{_e(noun)}">'
        '<a class="skip" href="#runs">Skip to runs</a>'
        f'<header class="top"><h1>{_e(title)}</h1><span class="totals" id="totals">{_e(totals)}</span>'
        '<label><input type="checkbox" id="failures-only"> Failures only</label>'
        '<span class="shown" id="shown" aria-live="polite"></span></header>'
        f'<main><p class="meta">{when} · focus or click a check to highlight the events it points to</p>'
        f'{_summary_html(summary, entries, noun)}<section id="runs" aria-labelledby="runs-h"><h2 id="runs-h">{noun.capitalize()}s</h2>{body}</section></main>'
        f"<script>{js}</script></body></html>\n"
    )


def _run_entry(run: RunResult) -> Entry:
    scenario = run.scenario
    facts = [scenario.name or ""]
    if scenario.type:
        facts.append(f"type {scenario.type}")
    if scenario.tags:
        facts.append("tags " + ", ".join(scenario.tags))
    facts.append(f"{round(run.duration, 4):.2f} s")
    if run.ended_because:
        facts.append(f"ended: {run.ended_because}")
    if run.conversation_id:
        facts.append(f"conversation {run.conversation_id}")
    sop = run.conversation.sop if run.conversation is not None else None
    return Entry(
        slug=scenario.slug, number=run.number, title=f"{scenario.slug} run {run.number}", verdict=run.verdict,
        checks=tuple(run.checks()), facts=tuple(facts), sop_score=sop.score if sop is not None else None, error=run.error,
        record=run.record, raw_events=run.events if run.record is None else (), note=run.record_note,
        transcript=run.transcript, latencies=run.latencies, whole_in=f"run_{run.number}.events.jsonl", crashes=run.crashes,
    )


def render_batch_html(batch: BatchResult, *, title: str = "dialogcheck report") -> str:
    """`report.html` of a batch of runs."""
    entries = [_run_entry(run) for run in batch.runs]
    by_key = {(entry.slug, entry.number): entry for entry in entries}
    summary = Summary(
        counts=batch.counts,
        scenarios=batch.scenarios(),
        failed=[(by_key[run.key], [line for line in run.checks() if line.outcome is Outcome.FAIL]) for run in batch.failed_runs()],
        errored=[(by_key[run.key], run.error_reason()) for run in batch.errored_runs()],
        total=len(batch.runs),
        started=batch.started,
        updated=batch.updated,
    )
    return _page(summary, entries, title=title, noun="run")


def render_check_html(results: Sequence[ConversationResult], records: Sequence[Conversation | None], subject: Any = None) -> str:
    """`check --html`: each checked conversation drawn as an entry of its scenario or SOP.

    `records` are the conversations judged (None where only the result is at hand, as for a
    `check --output` folder read back: its shards keep the checks, not the events).
    """
    several = getattr(subject, "scenarios", None)  # a ScenarioSet: each conversation's own scenario
    entries, scenario_of = [], {}
    for number, (result, record) in enumerate(zip(results, records), 1):
        one = several[result.scenario] if several is not None else subject
        slug = getattr(one, "slug", None) or getattr(one, "id", None) or result.scenario or (result.subject if subject is None else "conversations")
        facts = [result.subject]
        if getattr(one, "type", None):
            facts.append(f"type {one.type}")
        if getattr(one, "tags", ()):
            facts.append("tags " + ", ".join(one.tags))
        if result.conversation_id:
            facts.append(f"conversation {result.conversation_id}")
        said = tuple(
            TranscriptLine("user" if e.kind == "user" else "agent", e.text) for e in (record.events if record is not None else ()) if e.kind in ("user", "bot") and e.text
        )
        sop = result.sop
        entries.append(
            Entry(
                slug=slug, number=number, title=result.source, verdict=result.verdict, checks=tuple(result.checks()), facts=tuple(facts),
                sop_score=sop.score if sop is not None else None, record=record, transcript=said,
            )
        )
        scenario_of[number] = (slug, result.subject)
    groups: dict[str, tuple[str, Counts]] = {}
    for entry in entries:
        _, counts = groups.setdefault(entry.slug, (scenario_of[entry.number][1], Counts()))
        counts.add(entry.verdict)
    summary = Summary(
        counts=Counts(entry.verdict for entry in entries),
        scenarios=[ScenarioStats(slug, name, counts) for slug, (name, counts) in groups.items()],
        failed=[(entry, [line for line in entry.checks if line.outcome is Outcome.FAIL]) for entry in entries if entry.verdict is Outcome.FAIL],
        errored=[(entry, _errored(entry)) for entry in entries if entry.verdict is Outcome.ERROR],
        total=len(entries),
        repeated=False,
    )
    return _page(summary, entries, title="dialogcheck check", noun="conversation")


def _errored(entry: Entry) -> str | None:
    return "; ".join(f"{line.short_title}: {cut(line.detail)}" for line in entry.checks if line.outcome is Outcome.ERROR) or None
