"""`HtmlReport`, the page built as results go by: what its data holds, how little it holds, and what spans the batch."""

from __future__ import annotations

import re
from dataclasses import replace

import orjson
import pytest

from dialogcheck.checking import check_conversations, load_subject
from dialogcheck.report import html as html_module
from dialogcheck.report.html import BLOCK_RECORDS, HtmlReport, conversations_page, render_check_html
from dialogcheck.results.codec import stats_document
from dialogcheck.results.stats import CheckStats
from tests.conftest import EXAMPLE, bot, tool, user
from tests.report.page_data import entries, meta

CONVERSATIONS = EXAMPLE / "conversations"
SOP = EXAMPLE / "sops" / "replace_card.yml"
SCENARIOS = EXAMPLE / "eval" / "scenarios"


def _results(subject, sources=CONVERSATIONS):
    return list(check_conversations(subject, sources, no_judge=True))


def _page_of(results) -> str:
    return render_check_html(results)


def _table(page: str) -> list[list[str]]:
    """The per-check table's cells, row by row, tags taken out."""
    body = page.split('<table class="stats" id="check-table">', 1)[1].split("</tbody>", 1)[0].split("<tbody>", 1)[1]
    return [[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)] for row in body.split("</tr>") if row]


def test_the_data_gives_back_every_check_of_every_conversation():
    results = _results(SOP)
    listed = entries(_page_of(results))
    assert [e.title for e in listed] == [r.source for r in results]
    assert [e.verdict for e in listed] == [r.verdict.value for r in results]
    for entry, result in zip(listed, results):
        assert [(outcome, detail) for _, outcome, detail in entry.checks] == [(line.outcome.value, line.detail) for line in result.checks()]
        assert entry.more.get("score") == f"{result.sop.score:.2f}"


def test_conversations_of_several_scenarios_keep_their_own_checks(tmp_path):
    subject = load_subject([SCENARIOS / "card_replace_damaged.yml", SCENARIOS / "card_replace_cancel.yml"])
    named = tmp_path / "named.jsonl"
    lines = []
    for slug, source in (("card_replace_damaged", "damaged_card_ok.jsonl"), ("card_replace_cancel", "lost_card_cancelled.jsonl"),
                         ("card_replace_damaged", "damaged_card_express.jsonl")):
        events = (CONVERSATIONS / source).read_text().splitlines()
        lines.append('{"scenario": "%s", "events": [%s]}' % (slug, ",".join(events)))
    named.write_text("\n".join(lines) + "\n")
    results = _results(subject, named)
    page = _page_of(results)
    listed = entries(page)
    assert [e.group for e in listed] == ["card_replace_damaged", "card_replace_cancel", "card_replace_damaged"]
    for entry, result in zip(listed, results):
        assert [c[1:] for c in entry.checks] == [(line.outcome.value, line.detail) for line in result.checks()]
    assert [g[1] for g in meta(page)["groups"]] == ["card_replace_damaged", "card_replace_cancel"]
    assert "<th scope=\"col\"><button type=\"button\" data-col=\"3\">Scenario</button></th>" in page  # a column when there are several


def test_a_value_is_written_once_then_named_by_its_number():
    (result,) = _results(SOP, CONVERSATIONS / "sop_orders_without_confirming.jsonl")
    many = [replace(result, source=f"log.jsonl#c-{i:05d}", conversation_id=f"c-{i:05d}") for i in range(3000)]
    page = _page_of(many)
    failing = next(line.detail for line in result.checks() if line.outcome.value == "fail")
    assert page.count(orjson.dumps("f" + failing).decode()) == 1
    listed = entries(page)
    assert len(listed) == 3000 and listed[-1].title == "log.jsonl#c-02999"
    assert listed[2999].checks == listed[0].checks
    assert (len(page) - len(_page_of(many[:1]))) / 2999 < 60  # a record: its title's end, a number a check, its score


def test_past_the_remembered_values_a_value_is_written_each_time(monkeypatch):
    results = _results(SOP) * 3
    page = _page_of(results)
    monkeypatch.setattr(html_module, "REMEMBERED_CHARACTERS", 100)
    capped = _page_of(results)
    assert len(capped) > len(page)  # values past the first 100 characters written again each time they come
    assert entries(capped) == entries(page)  # the page reads the same either way


def test_records_are_held_no_longer_than_a_block():
    (result,) = _results(SOP, CONVERSATIONS / "sop_follows_procedure.jsonl")
    page = conversations_page()
    assert page.start().startswith("<!DOCTYPE html>")
    pieces = [page.add_conversation(replace(result, source=f"c{i}")) for i in range(BLOCK_RECORDS * 2 + 1)]
    written = [i for i, piece in enumerate(pieces) if piece]
    assert written == [BLOCK_RECORDS - 1, 2 * BLOCK_RECORDS - 1]
    assert all(piece.startswith('<script type="application/json" class="dc-entries">') for piece in pieces if piece)
    assert page.finish().startswith('<script type="application/json" class="dc-entries">')  # the last one


def test_text_in_the_data_cannot_end_its_block_or_open_a_tag():
    (result,) = _results(SOP, CONVERSATIONS / "sop_follows_procedure.jsonl")
    hostile = "</script><script>window.__pwned=1</script><!--"
    result = replace(result, source=hostile, conversation_id="<b>id</b>")
    page = _page_of([result])
    assert hostile not in page and "<b>" not in page and "<!--" not in page
    (entry,) = entries(page)
    assert entry.title == hostile and entry.more["id"] == "<b>id</b>"


def test_a_held_secret_is_masked_in_the_data_however_the_data_spells_it():
    from dialogcheck._redact import MASK, hold

    secret = "pw<held>-5e6f7a8b"
    hold(secret)
    (result,) = _results(SOP, CONVERSATIONS / "sop_follows_procedure.jsonl")
    page = _page_of([replace(result, source=f"agent said {secret}")])
    assert "held>-5e6f7a8b" not in page
    assert entries(page)[0].title == f"agent said {MASK}"


def test_the_check_table_counts_what_the_statistics_count():
    results = _results(SOP)
    stats = CheckStats()
    for result in results:
        stats.add(result, result.source)
    document = stats_document(stats)
    checks = sorted(document["checks"], key=lambda c: (-c["fail"], -c["error"]))  # most failures first, as the text's table
    rows = _table(_page_of(results))
    assert [row[1] for row in rows] == [f"{c['id']} {c['label'].split(' ', 1)[1]}" for c in checks]
    assert [[int(n.replace(",", "")) for n in row[3:7]] for row in rows] == [[c["pass"], c["fail"], c["error"], c["skip"]] for c in checks]
    assert [row[7] for row in rows] == [f"{c['failure_rate']:.0%}" if c["failure_rate"] is not None else "n/a" for c in checks]
    linked = re.findall(r'<a href="#check-(\d+)"', _page_of(results))
    positions = {id(c): i for i, c in enumerate(document["checks"])}
    assert [int(i) for i in linked] == [positions[id(c)] for c in checks if c["fail"]]


def test_the_sop_score_spread():
    results = _results(SOP)
    scores = sorted(r.sop.score for r in results)
    page = _page_of(results)
    spread = page.split('<section id="sop-scores"', 1)[1].split("</section>", 1)[0]
    mean = sum(scores) / len(scores)
    assert f"{len(scores)} conversations scored: mean {mean:.2f}, lowest {scores[0]:.2f}, highest {scores[-1]:.2f}" in spread
    counted = [int(n) for n in re.findall(r'<td class="num">([\d,]+)</td>', spread)]
    assert len(counted) == 10 and sum(counted) == len(scores)
    assert counted[-1] == sum(score >= 0.9 for score in scores)
    assert '<section id="sop-scores"' not in _page_of(_results(SCENARIOS / "card_replace_damaged.yml", CONVERSATIONS / "damaged_card_ok.jsonl"))


@pytest.mark.parametrize(
    ("events", "status", "line"),
    [
        ([user("hi"), bot("done", utter="utter_done")], "pass", "0 of 1 conversation failed, 0 errored, 1 passed"),
        ([user("hi")], "fail", "1 of 1 conversation failed, 0 errored, 0 passed"),
    ],
)
def test_the_banner_says_the_verdict_at_a_glance(tmp_path, events, status, line):
    scenario = tmp_path / "s.yml"
    scenario.write_text("scenario:\n  name: S\n  simulation_context: c\n  goals:\n    assertions:\n      - bot_uttered: {utter_name: utter_done}\n")
    page = _page_of(list(check_conversations(scenario, [events])))
    word = {"pass": "Passed", "fail": "Failed"}[status]
    assert f'<section id="banner" class="banner {status}" role="status"><strong class="status">{word}</strong> <span>{line}</span></section>' in page


def test_an_errored_batch_and_an_empty_one(tmp_path):
    scenario = tmp_path / "s.yml"
    scenario.write_text("scenario:\n  name: S\n  simulation_context: c\n  goals:\n    criteria: [The agent is polite]\n")
    page = _page_of(list(check_conversations(scenario, [[user("hi"), tool("x")]])))  # no judge: the criterion errors
    assert '<section id="banner" class="banner error" role="status"><strong class="status">Errored</strong>' in page
    empty = HtmlReport(title="t", noun="run", repeated=True)
    assert '<strong class="status">Nothing to show</strong> <span>no runs finished</span>' in empty.start() + empty.finish()


def test_the_first_conversations_that_did_not_pass_carry_their_transcript_and_no_more(monkeypatch):
    from dialogcheck.results.model import TranscriptLine

    said = (TranscriptLine("user", "where is my <card>"), TranscriptLine("agent", "on its way"))
    results = [replace(r, transcript=said) for r in _results(SOP)]
    failing = [i for i, r in enumerate(results) if r.verdict.value != "pass"]
    assert len(failing) >= 2 and len(failing) < len(results)
    monkeypatch.setattr(html_module, "TRANSCRIPTS_SHOWN", len(failing) - 1)
    page = _page_of(results)
    shown = [int(i) for i in re.findall(r'<template id="dc-t-(\d+)"><div class="run-timeline">', page)]
    assert shown == failing[:-1]
    assert "where is my &lt;card&gt;" in page and "<card>" not in page
