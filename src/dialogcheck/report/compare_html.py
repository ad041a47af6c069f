"""`compare --html`: the comparison as one self-contained page, the verdict first.

A banner with the verdict, the change and the test; the two sides; the checks
that flipped, each linking to the keys it flipped at; every key with its
status, rates and interval, filtered by status and by text; for a faulted
batch against its baseline, a robustness table (overall, per fault kind, per
key, the lowest ratio first). Keys that changed
come first; past `MAX_KEY_ROWS` rows the page says how many more the JSON
holds, so the page stays small at any size. As in the batch report, nothing is
fetched, a Content-Security-Policy admits only the page's own style and
script by hash, and every value from a file is escaped here.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

from .._shown import counted
from ..compare.model import NEW, STATUS_ORDER, CheckFlips, CheckId, Comparison, KeyChange, RateRatio, Robustness, SideSummary
from .compare_text import confidence_text, interval_text, p_text, percent, points, ratio_interval_text, ratio_text

#: Key rows the page draws; the rest are counted and left to `--format json`.
MAX_KEY_ROWS = 10_000
#: Check rows the page draws (most flips to a failure first).
MAX_CHECK_ROWS = 2_000
#: Keys each "only in" list shows.
MAX_LISTED = 200
_ID = re.compile(r"[^A-Za-z0-9_-]")
_TESTS = {"mcnemar": "exact McNemar test", "permutation": "paired permutation test on per-key pass rates", "none": "no test"}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def key_anchor(key: str, number: int) -> str:
    """A key row's id: readable, and unique through its position (two keys may escape alike)."""
    return f"key-{number}-{_ID.sub('-', key)[:60]}"


def _asset(name: str) -> str:
    return files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _banner(comparison: Comparison) -> str:
    verdict = comparison.verdict
    return (
        f'<section class="banner {_ID.sub("-", verdict.value)}" id="banner" aria-label="Verdict">'
        f'<span class="verdict">{_e(verdict.value)}</span>'
        f"pass rate {percent(comparison.base.pass_rate)} → {percent(comparison.new.pass_rate)} · "
        f"{points(comparison.change)} points (95% interval {interval_text(comparison.interval)}) over {counted(len(comparison.keys), 'key')} · "
        f"{_TESTS[comparison.test]}: p = {p_text(comparison.p_value)} · alpha {comparison.alpha:g}</section>"
    )


def _side(name: str, side: SideSummary) -> str:
    return (
        f'<div class="card"><strong>{name}</strong> {_e(side.source)}<div class="meta">{_e(side.form)} · '
        f"{side.runs:,} runs or conversations · {counted(side.keys, 'key')} · {side.errored:,} errored (left out of the pass rates)</div></div>"
    )


def _check_name(check: CheckId, several: bool) -> str:
    where = f'<span class="meta">{_e(check.subject)}:</span> ' if several else ""
    judge = '<span class="judge">judge flip</span>' if check.judged else ""
    return f"{where}{_e(check.title)}{judge}"


def _examples(keys: Sequence[str], anchors: dict[str, str]) -> str:
    return ", ".join(f'<a href="#{anchors[key]}">{_e(key)}</a>' if key in anchors else _e(key) for key in keys)


def _checks(checks: Sequence[CheckFlips], anchors: dict[str, str]) -> str:
    if not checks:
        return '<h2>Checks that flipped</h2><p class="meta">No check flipped at any key.</p>'
    several = len({flips.check.subject for flips in checks}) > 1
    rows = "".join(
        f'<tr><td class="num down">{f.pass_to_fail}</td><td class="num up">{f.fail_to_pass}</td><td>{_check_name(f.check, several)}</td>'
        f"<td>{_examples(f.examples_pass_to_fail, anchors)}</td><td>{_examples(f.examples_fail_to_pass, anchors)}</td></tr>"
        for f in checks[:MAX_CHECK_ROWS]
    )
    more = f'<p class="meta">{len(checks) - MAX_CHECK_ROWS} more checks: see --format json.</p>' if len(checks) > MAX_CHECK_ROWS else ""
    return (
        '<h2>Checks that flipped</h2><p class="meta">At how many keys each check\'s pass rate fell and rose '
        "(with one run a side: its flips). A judge flip is a criterion or llm_judge step: the LLM judge decided it.</p>"
        '<table id="checks"><thead><tr><th class="num">Fell</th><th class="num">Rose</th><th>Check</th>'
        f"<th>Fell at</th><th>Rose at</th></tr></thead><tbody>{rows}</tbody></table>{more}"
    )


def _key_row(key: KeyChange, anchor: str) -> str:
    noisy = '<span class="noisy">too noisy to call</span>' if key.noisy else ""
    moved = "".join(f'<li class="down">broke: {_e(c.title)}</li>' for c in key.broke) + "".join(
        f'<li class="up">mended: {_e(c.title)}</li>' for c in key.mended
    )
    status = key.status.value
    return (
        f'<tr id="{anchor}" data-status="{_e(status)}"><td>{_e(key.key)}{noisy}</td><td class="status {_ID.sub("-", status)}">{_e(status)}</td>'
        f'<td class="num">{key.base}</td><td class="num">{key.new}</td><td class="num">{points(key.change)}</td>'
        f'<td class="num">{interval_text(key.interval)}</td><td><ul class="plain">{moved}</ul></td></tr>'
    )


def _keys(comparison: Comparison, drawn: Sequence[tuple[KeyChange, str]]) -> str:
    counts = comparison.status_counts()
    buttons = '<button type="button" data-status="" aria-pressed="true">all</button>' + "".join(
        f'<button type="button" data-status="{_e(status.value)}" aria-pressed="false">{_e(status.value)} ({counts[status]})</button>'
        for status in STATUS_ORDER
    )
    hidden = len(comparison.keys) - len(drawn)
    more = f'<p class="meta">{counted(hidden, "more key")} (still failing or still passing): see --format json.</p>' if hidden else ""
    rows = "".join(_key_row(key, anchor) for key, anchor in drawn)
    return (
        f'<h2>Keys</h2><div class="statuses" role="group" aria-label="Show keys by status">{buttons}</div>'
        '<div class="controls"><input id="search" type="search" placeholder="Filter keys and checks" aria-label="Filter keys and checks">'
        '<span class="meta" id="shown" aria-live="polite"></span></div>'
        '<table id="keys"><thead><tr><th>Key</th><th>Status</th><th class="num">BASE</th><th class="num">NEW</th>'
        f'<th class="num">Change (points)</th><th class="num">95% interval</th><th>Checks that moved</th></tr></thead><tbody>{rows}</tbody></table>{more}'
    )


def _left_out(comparison: Comparison) -> str:
    parts = []
    for label, keys in (
        ("Only in BASE", comparison.only_base),
        ("Only in NEW", comparison.only_new),
        ("Not compared: every run errored on a side", comparison.not_judged),
    ):
        if keys:
            listed = ", ".join(_e(key) for key in keys[:MAX_LISTED]) + (f" and {len(keys) - MAX_LISTED} more" if len(keys) > MAX_LISTED else "")
            parts.append(f'<h2>{label} ({len(keys)})</h2><p class="card">{listed}</p>')
    return "".join(parts)


def _ratio_row(label: str, ratio: RateRatio) -> str:
    return (
        f'<tr><td>{label}</td><td class="num">{ratio.faulted}</td><td class="num">{ratio.baseline}</td>'
        f'<td class="num">{_e(ratio_text(ratio))}</td><td class="num">{ratio_interval_text(ratio.interval)}</td></tr>'
    )


def _robustness(robustness: Robustness) -> str:
    """The pass rate under faults over the rate without: overall, per kind of fault, per key (worst first)."""
    faulted, baseline = ("NEW", "BASE") if robustness.faulted == NEW else ("BASE", "NEW")
    rows = _ratio_row("overall", robustness.overall) if robustness.overall is not None else ""
    rows += "".join(_ratio_row(f"fault {_e(kind.kind)}", kind.ratio) for kind in robustness.kinds)
    rows += "".join(_ratio_row(_e(key.key), key.ratio) for key in robustness.keys[:MAX_KEY_ROWS])
    hidden = len(robustness.keys) - MAX_KEY_ROWS
    more = f'<p class="meta">{counted(hidden, "more key")}: see --format json.</p>' if hidden > 0 else ""
    left_out = [
        f"{counted(len(keys), 'key')} {why} (" + ", ".join(_e(key) for key in keys[:MAX_LISTED]) + (f" and {len(keys) - MAX_LISTED} more" if len(keys) > MAX_LISTED else "") + ")"
        for why, keys in robustness.left_out()
    ]
    notes = [f"{counted(robustness.met_no_fault, 'run')} under faults met no fault: counted in the overall and per-key rows only."] if robustness.met_no_fault else []
    if left_out:
        notes.append("Left out: " + "; ".join(left_out) + ".")
    return (
        f'<h2>Robustness</h2><p class="meta">{faulted} ran with its environment\'s faults on, {baseline} with them off: '
        "the pass rate under faults over the pass rate without (errored runs left out). A fault kind's row is the runs "
        f"that met it against the baseline runs of the same keys.</p>"
        f'<table id="robustness"><thead><tr><th></th><th class="num">Under faults ({faulted})</th><th class="num">Without ({baseline})</th>'
        f'<th class="num">Ratio</th><th class="num">{confidence_text(robustness.confidence)} interval</th></tr></thead><tbody>{rows}</tbody></table>'
        f"{more}" + "".join(f'<p class="meta">{note}</p>' for note in notes)
    )


def _drawn(keys: Sequence[KeyChange]) -> list[tuple[KeyChange, str]]:
    """The keys the page draws, those that changed first, each with its row's id."""
    order = {status: rank for rank, status in enumerate(STATUS_ORDER)}
    numbered = sorted(enumerate(keys), key=lambda item: order[item[1].status])[:MAX_KEY_ROWS]
    return [(key, key_anchor(key.key, number)) for number, key in numbered]


def render_comparison_html(comparison: Comparison, *, title: str = "dialogcheck compare") -> str:
    css, js = _asset("compare.css"), _asset("compare.js")
    drawn = _drawn(comparison.keys)
    anchors = {key.key: anchor for key, anchor in drawn}
    csp = f"default-src 'none'; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; base-uri 'none'; form-action 'none'"
    match = f'<p class="meta">Keys: what --match /{_e(comparison.match)}/ captures.</p>' if comparison.match else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>{_e(title)}</title><style>{css}</style></head><body><main>"
        f"<h1>{_e(title)}</h1>{_banner(comparison)}"
        f'<div class="sides">{_side("BASE", comparison.base)}{_side("NEW", comparison.new)}</div>{match}'
        f"{_keys(comparison, drawn)}{_checks(comparison.checks, anchors)}{_left_out(comparison)}"
        f"{_robustness(comparison.robustness) if comparison.robustness is not None else ''}"
        f"</main><script>{js}</script></body></html>\n"
    )
