"""What the HTML report shows of a whole batch: the status banner, the per-check table, the SOP score spread,
the scenarios, and the list's filters (the list itself the page's script draws from the data).

Drawn once the batch is done, from what `HtmlReport` counted as the results went by; every value from a
result goes through `esc`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._shown import counted
from ..results.model import CheckKind, Counts, ScenarioStats
from ..results.stats import SCORE_BUCKETS, CheckStat, SopScores
from .html_run import esc

_KIND_NAME = {CheckKind.ASSERTION: "assertion", CheckKind.SOP: "SOP step", CheckKind.CRITERION: "criterion"}


def _rate(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, (int, float)) else "n/a"


@dataclass
class Group:
    """A scenario (or, for `check`, the scenario or SOP the conversations were judged against)."""

    index: int
    slug: str
    name: str
    anchor: str
    #: The number of its first entry, which its row in the scenario table links to.
    first: int
    tags: tuple[str, ...] = ()
    counts: Counts = field(default_factory=Counts)


@dataclass
class CheckRow:
    """One check across the batch: where it stands in the page's table, the key of its row in `CheckStats`, and the
    values its records name."""

    position: int
    label: str
    group: int
    #: `(scenario, *CheckLine.id)`, as `CheckStats` keys its rows.
    key: tuple
    kind: CheckKind
    values: dict[str, int] = field(default_factory=dict)
    written: int = 0


def banner(counts: Counts, noun: str) -> str:
    """Passed, failed or errored, at a glance."""
    total = counts.total
    if total == 0:
        status, word, line = "skip", "Nothing to show", f"no {noun}s finished"
    else:
        status = counts.worst.value
        word = {"pass": "Passed", "fail": "Failed", "error": "Errored", "suspect": "Suspect"}[status]
        line = f"{counts.failed:,} of {counted(total, noun)} failed, {counts.errored:,} errored, {counts.passed:,} passed"
        line += f", {counts.suspect:,} suspect (the simulated user, not the agent)" if counts.suspect else ""
    return f'<section id="banner" class="banner {status}" role="status"><strong class="status">{word}</strong> <span>{esc(line)}</span></section>'


_TABLE_HEADS = (("#", True), ("Check", False), ("Kind", False), ("Scenario", False), ("Passed", True), ("Failed", True),
                ("Errored", True), ("Skipped", True), ("Failure rate", True))
_SORTED, _NUMERIC = ' aria-sort="descending"', ' data-num="1"'


def checks_table(rows: Iterable[CheckRow], stats: Mapping[tuple, CheckStat], groups: list[Group], *, noun: str) -> str:
    """Each assertion, SOP step and criterion, most failures first (then most errors, then the order they were met,
    as the text's table): its counts (`stats`, the rows of `CheckStats`; a check met only in suspect entries has
    none) and failure rate, sortable; a check that failed links to the list filtered to the entries that failed it."""
    body, several = [], len(groups) > 1
    held = [(row, stats.get(row.key) or CheckStat(row.kind, row.label)) for row in rows]
    for row, stat in sorted(held, key=lambda pair: (-pair[1].counts.failed, -pair[1].counts.errored, pair[0].position)):
        group, position = groups[row.group], row.position
        counts = stat.counts
        label = esc(row.label)
        if counts.failed:
            label = f'<a href="#check-{position}" title="show the {noun}s that failed it">{label}</a>'
        cells = [
            f'<td class="num" data-v="{position + 1}">{position + 1}</td>', f"<td>{label}</td>", f"<td>{_KIND_NAME[stat.kind]}</td>",
            f"<td>{esc(group.slug)}</td>" if several else "",
            *(f'<td class="num{cls}" data-v="{n}">{n:,}</td>' for n, cls in ((counts.passed, ""), (counts.failed, " failed"))),
            f'<td class="num errored" data-v="{counts.errored}">{counts.errored:,}{_uncalibrated(stat.uncalibrated)}</td>',
            f'<td class="num" data-v="{counts.skipped}">{counts.skipped:,}</td>',
            f'<td class="num" data-v="{stat.failure_rate if stat.failure_rate is not None else -1}">{_rate(stat.failure_rate)}</td>',
        ]
        body.append(f'<tr data-check="{position}" class="{"bad" if counts.failed else ""} {"err" if counts.errored else ""}">{"".join(cells)}</tr>')
    if not body:
        return '<section id="check-stats"><h2>Checks</h2><p class="none">No checks were run.</p></section>'
    heads = "".join(
        f'<th scope="col"{_SORTED if name == "Failed" else ""}><button type="button" data-col="{i}"{_NUMERIC if num else ""}>{name}</button></th>'
        for i, (name, num) in enumerate(h for h in _TABLE_HEADS if several or h[0] != "Scenario")
    )
    return (
        '<section id="check-stats" aria-labelledby="check-stats-h"><h2 id="check-stats-h">Checks</h2>'
        f'<p class="meta">Each assertion, SOP step and criterion across the {noun}s; sort by a column, follow a check to the {noun}s that failed it.</p>'
        f'<div class="scroll"><table class="stats" id="check-table"><thead><tr>{heads}</tr></thead><tbody>{"".join(body)}</tbody></table></div></section>'
    )


def _uncalibrated(n: int) -> str:
    """Of a check's errors, those its judge was not calibrated well enough to decide (counted apart)."""
    return f' <span class="uncal" title="left to a judge below --require-calibration\'s floor">({n:,} uncalibrated)</span>' if n else ""


def sop_spread(scores: SopScores, noun: str) -> str:
    """The SOP scores: mean, lowest, highest, and how many fell in each tenth."""
    if not scores.conversations:
        return ""
    most = max(scores.buckets)
    width = 1 / SCORE_BUCKETS
    bars = "".join(
        f'<tr><th scope="row">{i * width:.1f}–{(i + 1) * width:.1f}</th><td><meter min="0" max="{most}" value="{n}"></meter></td><td class="num">{n:,}</td></tr>'
        for i, n in enumerate(scores.buckets)
    )
    return (
        '<section id="sop-scores" aria-labelledby="sop-scores-h"><h2 id="sop-scores-h">SOP scores</h2><div class="card">'
        f'<p>{scores.conversations:,} {noun}s scored: mean {scores.mean:.2f}, lowest {scores.lowest:.2f}, highest {scores.highest:.2f}</p>'
        f'<table class="histogram">{bars}</table></div></section>'
    )


def scenarios(groups: list[Group], repeated: bool, noun: str) -> str:
    """Pass rate per scenario (pass^k and flaky for repeated runs), each linking to its first entry; flaky ones listed.
    A column of suspect entries (whose simulated user failed its review) when there are some."""
    rows, flaky = [], []
    any_suspect = any(group.counts.suspect for group in groups)
    for group in groups:
        s = ScenarioStats(group.slug, group.name, group.counts)
        link = f'<a href="#run-{group.anchor}-{group.first}">{esc(group.slug)}</a>'
        name = f'<span class="scenario-name">{esc(s.name)}</span>' if s.name and s.name != s.slug else ""
        hats = s.pass_hat() if repeated else {}
        hat_text = " ".join(f"pass^{k} {_rate(v)}" for k, v in hats.items()) if len(hats) > 1 else ""
        is_flaky = repeated and s.flaky
        if is_flaky:
            flaky.append(f"<li>{link}: passed {s.counts.passed:,} of {counted(s.judged, 'judged run')}</li>")
        rows.append(
            f'<tr class="{"bad" if s.counts.failed else ""} {"err" if s.counts.errored else ""}" data-slug="{esc(s.slug)}">'
            f"<td>{link}{name}</td>"
            f'<td class="num">{s.runs}</td><td class="num">{s.counts.passed}</td><td class="num failed">{s.counts.failed}</td>'
            f'<td class="num errored">{s.counts.errored}</td>'
            + (f'<td class="num suspect">{s.counts.suspect}</td>' if any_suspect else "")
            + f'<td class="num">{_rate(s.pass_rate)}</td><td>{hat_text}</td>'
            f'<td>{"<span class=flaky>flaky</span>" if is_flaky else ""}</td></tr>'
        )
    names = (f"{noun.capitalize()}s", "Passed", "Failed", "Errored", *(("Suspect",) if any_suspect else ()), "Pass rate")
    heads = "".join(f'<th class="num">{h}</th>' for h in names)
    parts = ['<section id="summary" aria-label="Summary">']
    if flaky:
        parts.append(f'<h2>Flaky scenarios</h2><div class="card"><p class="meta">Passed some {noun}s and failed others.</p><ul class="plain">{"".join(flaky)}</ul></div>')
    parts.append(f'<h2>Pass rate per scenario</h2><table class="scenarios"><thead><tr><th>Scenario</th>{heads}<th>pass^k</th><th></th></tr></thead>')
    parts.append(f"<tbody>{''.join(rows)}</tbody></table></section>")
    return "".join(parts)


def personas(by_trait: dict[str, Counts]) -> str:
    """Pass rate per persona trait of a persona matrix; nothing for a batch without one."""
    if not by_trait:
        return ""
    rows = []
    for name, counts in by_trait.items():
        s = ScenarioStats(name, name, counts)
        rows.append(
            f'<tr class="{"bad" if counts.failed else ""} {"err" if counts.errored else ""}"><td>{esc(name)}</td>'
            f'<td class="num">{counts.total}</td><td class="num">{counts.passed}</td><td class="num failed">{counts.failed}</td>'
            f'<td class="num errored">{counts.errored}</td><td class="num">{_rate(s.pass_rate)}</td></tr>'
        )
    heads = "".join(f'<th class="num">{h}</th>' for h in ("Runs", "Passed", "Failed", "Errored", "Pass rate"))
    return (
        '<section id="personas" aria-labelledby="personas-h"><h2 id="personas-h">Pass rate per persona</h2>'
        f'<table class="scenarios"><thead><tr><th>Persona</th>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
    )


def list_section(noun: str) -> str:
    """Where the page's script lists the entries, with the filters and the pages."""
    return (
        f'<section id="runs" aria-labelledby="runs-h"><h2 id="runs-h">{noun.capitalize()}s</h2>'
        '<div class="filters" role="search">'
        '<label>Verdict <select id="f-verdict"><option value="">any</option><option value="fail">failed</option>'
        '<option value="error">errored</option><option value="suspect">suspect</option><option value="pass">passed</option></select></label>'
        '<label id="f-group-label">Scenario <select id="f-group"><option value="">any</option></select></label>'
        '<label>Failed check <select id="f-check"><option value="">any</option></select></label>'
        '<label id="f-tag-label">Tag <select id="f-tag"><option value="">any</option></select></label>'
        f'<label>Search <input type="search" id="f-text" placeholder="text in a {noun}, a detail, an id"></label>'
        '<button type="button" id="f-clear">Clear filters</button></div>'
        '<nav class="pager" aria-label="pages"></nav><div id="entries"></div><nav class="pager" aria-label="pages"></nav>'
        f"<noscript><p class=\"none\">The list of {noun}s is drawn by the page's script; the tables above need none.</p></noscript></section>"
    )
