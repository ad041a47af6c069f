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
from collections.abc import Mapping, Sequence
from importlib.resources import files
from typing import Any

import orjson

from .._shown import cut
from ..events.model import BotMessage, ToolRun, UserMessage, opens_turn
from ..events.parse import EventFieldError, conversation_from_dicts
from ..events.values import show
from ..judge.ledger import ledger_line

RunKey = tuple[str, int]
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


def _checks(run: Mapping[str, Any]) -> list[tuple[str, str, str, Sequence[Any], str]]:
    """(group, label, outcome, evidence, detail) for every assertion, SOP step and criterion."""
    found = [("Assertions", a.get("label") or a["key"], a["outcome"], a.get("evidence") or (), a.get("detail") or "") for a in run.get("assertions", [])]
    for s in run.get("sop", []):
        optional = "" if s.get("required", True) else " (optional)"
        found.append(("SOP steps", f"{s['id']} {s.get('label') or s['type']}{optional}", s["outcome"], s.get("evidence") or (), s.get("detail") or ""))
    found += [("Criteria", c["criterion"], c["outcome"], (), c.get("detail") or "") for c in run.get("criteria", [])]
    return found


def check_counts(runs: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many checks of all runs passed, failed, errored and were skipped."""
    counts = dict.fromkeys(_OUTCOMES, 0)
    for run in runs:
        for *_, outcome, _evidence, _detail in _checks(run):
            counts[_outcome(outcome)] += 1
    return counts


def _check(label: str, outcome: str, evidence: Sequence[Any], detail: str, anchor: str) -> str:
    indexes = [i for i in evidence if isinstance(i, int) and not isinstance(i, bool)]
    links = ", ".join(f'<a href="#{anchor}-ev-{i}">#{i}</a>' for i in indexes)
    shown = f' <span class="check-evidence">· events {links}</span>' if links else ""
    why = f'<div class="check-detail">{_e(cut(detail))}{shown}</div>' if detail or shown else ""
    return (
        f'<li class="check" tabindex="0" data-outcome="{_outcome(outcome)}" data-ev="{" ".join(map(str, indexes))}">'
        f'{_badge(outcome)} <span class="check-label">{_e(label)}</span>{why}</li>'
    )


def _checks_html(run: Mapping[str, Any], anchor: str) -> str:
    parts, group = [], None
    for name, label, outcome, evidence, detail in _checks(run):
        if name != group:
            if group is not None:
                parts.append("</ul>")
            score = f" · score {run['sop_score']:.2f}" if name == "SOP steps" and isinstance(run.get("sop_score"), (int, float)) else ""
            parts.append(f'<h4>{name}{score}</h4><ul class="checks">')
            group = name
        parts.append(_check(label, outcome, evidence, detail, anchor))
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


def _timeline(events: Sequence[Mapping[str, Any]]) -> tuple[dict[int, list[tuple[int, str, str, str]]], str | None]:
    """Event rows grouped by turn; the events as recorded, unparsed, when they do not parse."""
    try:
        conversation = conversation_from_dicts(events)
    except EventFieldError as err:
        rows = [(i, "event", "dim", _e(show(raw, 200))) for i, raw in enumerate(events)]
        return {0: rows} if rows else {}, f"events shown as recorded: event {getattr(err, 'index', '?')}: {err}"
    grouped: dict[int, list[tuple[int, str, str, str]]] = {}
    for event, recorded in zip(conversation.events, conversation.raw_events):
        grouped.setdefault(event.turn, []).append((event.index, *_event(event, recorded)))
    return grouped, None


def _transcript(run: Mapping[str, Any]) -> dict[int, list[str]]:
    """Transcript lines grouped by turn, counted the way events count them (a user message opens a turn)."""
    grouped: dict[int, list[str]] = {}
    latencies = list(run.get("latency_s") or [])
    turn = users = 0
    for line in run.get("transcript") or []:
        role = "user" if line.get("role") == "user" else "agent"
        latency = ""
        if role == "user":
            users += 1
            turn += 1 if opens_turn(line.get("text")) else 0
            if users <= len(latencies) and isinstance(latencies[users - 1], (int, float)):
                latency = f'<span class="latency">agent answered in {latencies[users - 1]:.2f} s</span>'
        grouped.setdefault(turn, []).append(
            f'<div class="msg {role}"><span class="who">{role}{latency}</span>{_e(cut(str(line.get("text", ""))))}</div>'
        )
    return grouped


def _turns_html(run: Mapping[str, Any], events: Sequence[Mapping[str, Any]], anchor: str) -> str:
    said = _transcript(run)
    rows, note = _timeline(events)
    if not said and not rows:
        return '<p class="none">No transcript or events were recorded.</p>'
    parts = [f'<p class="why">{_e(note)}</p>'] if note else []
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


def _run_html(run: Mapping[str, Any], events: Sequence[Mapping[str, Any]], noun: str) -> str:
    scenario = run["scenario"]
    anchor = run_anchor(scenario["slug"], run["run"])
    verdict = _outcome(run["verdict"])
    title = run.get("source") or f"{scenario['slug']} {noun} {run['run']}"
    facts = [scenario.get("name") or ""]
    if scenario.get("type"):
        facts.append(f"type {scenario['type']}")
    if scenario.get("tags"):
        facts.append("tags " + ", ".join(map(str, scenario["tags"])))
    if isinstance(run.get("duration_s"), (int, float)):
        facts.append(f"{run['duration_s']:.2f} s")
    if run.get("ended_because"):
        facts.append(f"ended: {run['ended_because']}")
    if run.get("conversation_id"):
        facts.append(f"conversation {run['conversation_id']}")
    error = f'<p class="run-error"><strong>Run errored:</strong> {_e(cut(str(run["error"])))}</p>' if run.get("error") else ""
    return (
        f'<section class="run" id="{anchor}" data-verdict="{verdict}" data-slug="{_e(scenario["slug"])}">'
        f'<details{"" if verdict == "pass" else " open"}><summary>{_badge(verdict)}<h3>{_e(title)}</h3>'
        f'<a class="link" href="#{anchor}" aria-label="link to {_e(title)}">#</a></summary>'
        f'<div class="run-body"><p class="meta">{_e(" · ".join(f for f in facts if f))}</p>{error}'
        f'<div class="run-grid"><div class="run-checks">{_checks_html(run, anchor)}</div>'
        f'<div class="run-timeline"><h4>Transcript and events</h4>{_turns_html(run, events, anchor)}</div></div></div></details></section>'
    )


def _summary_html(summary: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], noun: str) -> str:
    first, names = {}, {}
    for run in runs:
        first.setdefault(run["scenario"]["slug"], run["run"])
        names[(run["scenario"]["slug"], run["run"])] = run.get("source") or f"{run['scenario']['slug']} {noun} {run['run']}"
    rows = []
    for s in summary.get("scenarios", []):
        link = f'<a href="#{run_anchor(s["slug"], first[s["slug"]])}">{_e(s["slug"])}</a>' if s["slug"] in first else _e(s["slug"])
        hats = " ".join(f"pass^{_e(k)} {_rate(v)}" for k, v in (s.get("pass_hat_k") or {}).items()) if len(s.get("pass_hat_k") or ()) > 1 else ""
        rows.append(
            f'<tr class="{"bad" if s["failed"] else ""} {"err" if s["errored"] else ""}" data-slug="{_e(s["slug"])}">'
            f'<td>{link}<span class="scenario-name">{_e(s.get("name") or "")}</span></td>'
            f'<td class="num">{_e(s["runs"])}</td><td class="num">{_e(s["passed"])}</td><td class="num failed">{_e(s["failed"])}</td>'
            f'<td class="num errored">{_e(s["errored"])}</td><td class="num">{_rate(s.get("pass_rate"))}</td><td>{hats}</td>'
            f'<td>{"<span class=flaky>flaky</span>" if s.get("flaky") else ""}</td></tr>'
        )
    heads = "".join(f'<th class="num">{h}</th>' for h in (f"{noun.capitalize()}s", "Passed", "Failed", "Errored", "Pass rate"))
    table = [
        f"<h2>Pass rate per scenario</h2><table class=\"scenarios\"><thead><tr><th>Scenario</th>{heads}<th>pass^k</th><th></th></tr></thead>",
        f"<tbody>{''.join(rows)}</tbody></table>",
    ]
    parts = ['<section id="summary" aria-label="Summary">']
    flaky = [s for s in summary.get("scenarios", []) if s.get("flaky")]
    if flaky:
        items = "".join(f'<li><a href="#{run_anchor(s["slug"], first.get(s["slug"], 1))}">{_e(s["slug"])}</a>: passed {_e(s["passed"])} of {_e(s["passed"] + s["failed"])} judged runs</li>' for s in flaky)
        parts.append(f'<h2>Flaky scenarios</h2><div class="card"><p class="meta">Passed some {noun}s and failed others.</p><ul class="plain">{items}</ul></div>')
    failed = summary.get("failed_runs") or []
    if failed:
        items = "".join(
            f'<li><a href="#{run_anchor(r["slug"], r["run"])}">{_e(names.get((r["slug"], r["run"]), r["slug"]))}</a><ul class="plain">'
            + "".join(f'<li>{_e(c["check"])}: <span class="why">{_e(cut(str(c["detail"])))}</span></li>' for c in r.get("failed_checks", []))
            + "</ul></li>"
            for r in failed
        )
        parts.append(f'<h2>Failed {noun}s</h2><div class="card"><ul class="plain">{items}</ul></div>')
    errored = summary.get("errored_runs") or []
    if errored:
        items = "".join(
            f'<li><a href="#{run_anchor(r["slug"], r["run"])}">{_e(names.get((r["slug"], r["run"]), r["slug"]))}</a>: <span class="why">{_e(cut(str(r.get("error") or "a check errored")))}</span></li>'
            for r in errored
        )
        parts.append(f'<h2>Errored {noun}s</h2><div class="card"><ul class="plain">{items}</ul></div>')
    return "".join(parts + table) + "</section>"


def _asset(name: str) -> str:
    return files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def render_html(
    summary: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    events_by_run: Mapping[RunKey, Sequence[Mapping[str, Any]]],
    *,
    title: str = "dialogcheck report",
    noun: str = "run",
) -> str:
    """`report.html`: the summary, then every run with its checks, transcript and event timeline.

    `noun` names what each entry is (`run` for a batch, `conversation` for `dialogcheck check`).
    """
    css, js = _asset("report.css"), _asset("report.js")
    checks = check_counts(runs)
    totals = (
        f'{summary.get("completed_runs", len(runs))} {noun}s: {summary.get("passed", 0)} passed, {summary.get("failed", 0)} failed, '
        f'{summary.get("errored", 0)} errored · checks: {checks["pass"]} passed, {checks["fail"]} failed, {checks["error"]} errored'
        + (f', {checks["skip"]} skipped' if checks["skip"] else "")
    )
    when = " · ".join(f"{k} {_e(summary[k])}" for k in ("started", "updated") if summary.get(k))
    body = "".join(_run_html(run, events_by_run.get((run["scenario"]["slug"], run["run"]), ()), noun) for run in runs)
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
        f'{_summary_html(summary, runs, noun)}<section id="runs" aria-labelledby="runs-h"><h2 id="runs-h">{noun.capitalize()}s</h2>{body}</section></main>'
        f"<script>{js}</script></body></html>\n"
    )
