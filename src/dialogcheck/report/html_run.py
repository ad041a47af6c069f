"""What the HTML report draws of a run besides its checks: facts, errors, crashes, transcript and event timeline.

Escaping lives here and only here: every value that came from a conversation
or a results file goes through `esc`, attributes included, and each message,
detail, error and tool result is cut to `_shown.TEXT_LIMIT`. The page's
script draws the checks from data with `textContent`, so it never parses
text as markup; what it takes as markup is what this module escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from .._shown import counted, cut
from ..events.model import BotMessage, ToolRun, UserMessage, opens_turn
from ..events.values import show
from ..judge.ledger import ledger_line
from ..results.model import Crash, RunResult, TranscriptLine, UserReview
from .world import world_lines

_ID = re.compile(r"[^A-Za-z0-9_-]")
#: Characters of a message or event shown in one timeline row.
TEXT_LIMIT = 100


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def anchor_part(value: Any) -> str:
    """A value as it may stand in an element id: anything but letters, digits, `_` and `-` becomes `-`."""
    return _ID.sub("-", str(value))


def run_anchor(slug: str, number: Any) -> str:
    """The id of a run's section: `run-<slug>-<n>`, so `report.html#run-<slug>-<n>` links to it."""
    return f"run-{anchor_part(slug)}-{anchor_part(number)}"


def _pretty(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode()
    except orjson.JSONEncodeError:  # nested past the 255 levels orjson writes (a recorded value may go to 1,024)
        return show(value, 2000)


def _tool(event: ToolRun) -> str:
    line = ledger_line(event) or f"framework tool {event.tool_name}(" + ", ".join(f"{k}={show(v, 60)}" for k, v in event.arguments.items()) + ")"
    full = {"arguments": dict(event.arguments), "result": event.result}
    if event.is_error:
        full["error"] = event.error_message
    return f'{esc(line)}<details><summary>arguments and result</summary><pre class="json">{esc(cut(_pretty(full)))}</pre></details>'


def _event(event: Any, recorded: Mapping[str, Any]) -> tuple[str, str, str]:
    """(kind, extra classes, inner HTML) of one typed event (and its object as recorded) in the timeline."""
    if isinstance(event, ToolRun):
        return "tool", ("bad" if event.is_error else "" if event.counted else "dim"), _tool(event)
    if isinstance(event, UserMessage):
        return "user", "dim", esc(f"user {show(event.text, TEXT_LIMIT)}")
    if isinstance(event, BotMessage):
        template = ledger_line(event)
        said = esc(show(event.text, TEXT_LIMIT)) if event.text else ""
        return "bot", "" if template else "dim", esc(f"{template or 'bot'} ") + said
    line = ledger_line(event)
    if line is not None:
        return event.kind, "", esc(line)
    rest = {k: v for k, v in recorded.items() if k != "event"}
    return event.type, "dim", esc(f"{event.type} {show(rest, TEXT_LIMIT)}" if rest else event.type)


def _timeline(run: RunResult) -> dict[int, list[tuple[int, str, str, str]]]:
    """Event rows grouped by turn; the events as written, unread, when they could not be read as events."""
    if run.record is None:
        rows = [(i, "event", "dim", esc(show(raw, 200))) for i, raw in enumerate(run.events)]
        return {0: rows} if rows else {}
    grouped: dict[int, list[tuple[int, str, str, str]]] = {}
    for event, recorded in zip(run.record.events, run.record.raw_events):
        grouped.setdefault(event.turn, []).append((event.index, *_event(event, recorded)))
    return grouped


def _with_turns(lines: Sequence[TranscriptLine]) -> Iterator[tuple[int, str, TranscriptLine]]:
    """(turn, role, line) for each line: its own turn where it was counted, else counted the way events count them
    (a user message opens a turn); a role other than `user` is the agent's."""
    turn = 0
    for line in lines:
        role = "user" if line.role == "user" else "agent"
        if role == "user":
            turn += 1 if opens_turn(line.text) else 0
        yield (turn if line.turn is None else line.turn), role, line


def _transcript(run: RunResult) -> dict[int, list[str]]:
    """Transcript lines grouped by turn, each user message with how long the agent took to answer it."""
    grouped: dict[int, list[str]] = {}
    users = 0
    whole_in = f"run_{run.number}.events.jsonl"
    for turn, role, line in _with_turns(run.transcript):
        latency = ""
        if role == "user":
            users += 1
            if users <= len(run.latencies):
                latency = f'<span class="latency">agent answered in {round(run.latencies[users - 1], 4):.2f} s</span>'
        grouped.setdefault(turn, []).append(f'<div class="msg {role}"><span class="who">{role}{latency}</span>{esc(cut(line.text, whole_in))}</div>')
    return grouped


def _turns(run: RunResult, anchor: str) -> str:
    said = _transcript(run)
    rows = _timeline(run)
    if not said and not rows:
        return '<p class="none">No transcript or events were recorded.</p>'
    parts = [f'<p class="why">{esc(run.record_note)}</p>'] if run.record_note else []
    parts.append('<div class="turns"><div class="head">Turn</div><div class="head">Transcript</div><div class="head">Events</div>')
    for turn in sorted(set(said) | set(rows)):
        items = "".join(
            f'<li class="ev k-{anchor_part(kind)} {extra}" id="{anchor}-ev-{index}" tabindex="-1">'
            f'<span class="ev-i">#{index}</span><span class="ev-text">{inner}</span></li>'
            for index, kind, extra, inner in rows.get(turn, [])
        )
        parts.append(
            f'<div class="turn-no" id="{anchor}-turn-{turn}">turn {turn}</div>'
            f'<div class="said">{"".join(said.get(turn, [])) or "<span class=none>—</span>"}</div>'
            f'<ol class="events">{items or "<li class=none>no events</li>"}</ol>'
        )
    return "".join(parts) + "</div>"


def transcript_html(lines: Sequence[TranscriptLine]) -> str:
    """A recorded conversation's transcript beside its checks (`check --html`), its messages by turn as a run's are."""
    if not lines:
        return ""
    grouped: dict[int, list[str]] = {}
    for turn, role, line in _with_turns(lines):
        grouped.setdefault(turn, []).append(f'<div class="msg {role}"><span class="who">{role}</span>{esc(cut(line.text))}</div>')
    parts = ['<div class="run-timeline"><h4>Transcript</h4><div class="turns said-only"><div class="head">Turn</div><div class="head">Transcript</div>']
    parts += [f'<div class="turn-no">turn {turn}</div><div class="said">{"".join(said)}</div>' for turn, said in grouped.items()]
    return "".join(parts) + "</div></div>"


def crash_html(crash: Crash) -> str:
    """An exception that broke the run or a check, its traceback folded."""
    where = f" in {crash.where}" if crash.where else ""
    return (
        f'<details class="crash"><summary>{esc(crash.type)}{esc(where)}: {esc(cut(crash.message, limit=TEXT_LIMIT))}</summary>'
        f'<pre class="traceback">{esc(cut(crash.traceback or ""))}</pre></details>'
    )


def _facts(run: RunResult) -> str:
    scenario = run.scenario
    facts = [scenario.name or ""]
    if scenario.type:
        facts.append(f"type {scenario.type}")
    if scenario.tags:
        facts.append("tags " + ", ".join(scenario.tags))
    if run.persona is not None:
        facts.append(f"persona {run.persona}")
    facts.append(f"{round(run.duration, 4):.2f} s")
    if run.ended_because:
        facts.append(f"ended: {run.ended_because}")
    if run.conversation_id:
        facts.append(f"conversation {run.conversation_id}")
    return " · ".join(f for f in facts if f)


def user_review_html(review: UserReview, suspect_attempts: int = 0) -> str:
    """The review of the simulated user: ok, or suspect with each reason linked to its turn; the suspect attempts."""
    attempts = f" ({counted(suspect_attempts, 'suspect attempt')}, the last one shown)" if suspect_attempts else ""
    head = f'<strong>Simulated user: {esc(review.verdict)}</strong>{esc(attempts)}'
    if review.suspect:
        head += " · this run says nothing of the agent: it is counted apart, neither passed nor failed"
    reasons = "".join(
        f"<li>{esc(f'turn {reason.turn}' if reason.turn is not None else 'overall')} <code>{esc(reason.rule)}</code>: {esc(cut(reason.text))}</li>"
        for reason in review.reasons
    )
    return f'<div class="user-review {esc(review.verdict)}">{head}{f"<ul>{reasons}</ul>" if reasons else ""}</div>'


def run_body(run: RunResult, anchor: str) -> str:
    """A run's section body with an empty `.run-checks`, which the page's script fills from the data."""
    error = f'<p class="run-error"><strong>Run errored:</strong> {esc(cut(str(run.error)))}</p>' if run.error else ""
    error += "".join(crash_html(crash) for crash in run.crashes)
    if run.user_review is not None:
        error += user_review_html(run.user_review, run.suspect_attempts)
    if run.environment is not None:
        lines = world_lines(run.environment)
        more = "".join(f"<li>{esc(line)}</li>" for line in lines[1:])
        error += f'<div class="environment"><p>{esc(lines[0])}</p>{f"<ul>{more}</ul>" if more else ""}</div>'
    return (
        f'<p class="meta">{esc(_facts(run))}</p>{error}'
        '<div class="run-grid"><div class="run-checks"></div>'
        f'<div class="run-timeline"><h4>Transcript and events</h4>{_turns(run, anchor)}</div></div>'
    )
