"""report.html without a browser: self-contained, everything escaped, one script of our own (and its data), links and anchors."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.report.html import render_batch_html, run_anchor
from dialogcheck.results.codec import decode_run
from dialogcheck.results.load import with_events
from dialogcheck.results.model import BatchResult
from tests.conftest import EXAMPLE
from tests.report.conftest import HOSTILE, load
from tests.report.page_data import entries


def test_the_page_is_self_contained(hostile_batch):
    page = (hostile_batch / "report.html").read_text()
    assert page.count("<script>") == 1 and page.count("<style") == 1
    assert page.count("<script") == 1 + page.count('<script type="application/json"')  # the rest is data, never run
    for outside in ("http://", "https://", "url(", "@import", "<link", "<iframe", "<img"):
        assert outside not in page, outside
    assert not re.search(r"<[^>]*\s(src|srcset|action|formaction)=", page)  # no tag loads anything


def test_csp_admits_only_the_pages_own_script_and_style(hostile_batch):
    page = (hostile_batch / "report.html").read_text()
    (csp,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    script = page.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp


def test_everything_from_the_conversation_is_escaped(hostile_batch):
    page = (hostile_batch / "report.html").read_text()
    assert HOSTILE not in page
    assert "<b>bold</b>" not in page and "</script><b>" not in page
    assert html.escape(HOSTILE) in page  # in the transcript
    assert "no such card &lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in page  # the errored run's error
    assert "onerror=&quot;window.__pwned=2&quot;" in page


def test_values_in_attributes_and_ids_are_escaped():
    slug = 'x" onmouseover="alert(1)'
    run = {
        "scenario": {"slug": slug, "name": "<i>n</i>", "type": "t", "tags": ["<t>"]},
        "run": 1, "verdict": "fail", "error": None, "duration_s": 0.1,
        "transcript": [{"role": "user", "text": "hi"}],
        "assertions": [{"key": "k", "label": '"><script>x</script>', "outcome": "fail", "detail": "d", "evidence": [0, "1\"><x>"]}],
    }
    run["assertions"][0]["detail"] = "<d>"
    events = [{"event": "user", "text": "<u>hi</u>"}, {"event": "weird", "x": "<w>"}]
    page = render_batch_html(BatchResult((with_events(decode_run(run, "run_1.json"), events),)))
    assert run_anchor(slug, 1) == "run-x--onmouseover--alert-1--1"
    assert f'id="{run_anchor(slug, 1)}-ev-0"' in page  # the run's events, in its template
    assert 'onmouseover="' not in page and "<i>n</i>" not in page and "<t>" not in page and "<d>" not in page and "<u>" not in page and "<w>" not in page
    (entry,) = entries(page)
    assert entry.checks == [('"><script>x</script>', "fail", "<d>")]  # as text, for the script's textContent
    assert entry.more["ev"] == ["0"]  # a non-integer evidence index is dropped, not written into the page
    assert page.count("<script>") == 1


def test_events_that_do_not_parse_are_shown_as_recorded():
    run = {"scenario": {"slug": "s", "name": "S"}, "run": 1, "verdict": "pass", "transcript": []}
    events = [{"event": "user", "text": "hi"}, {"no_type": "<x>"}]
    page = render_batch_html(BatchResult((with_events(decode_run(run, "run_1.json"), events),)))
    assert "events shown as recorded: event 1" in page and "&lt;x&gt;" in page


def test_runs_have_anchors_and_the_summary_links_to_them(example_batch):
    page = (example_batch / "report.html").read_text()
    summary = load(example_batch / "summary.json")
    listed = entries(page)
    for row in summary["scenarios"]:
        assert [e.more["n"] for e in listed if e.group == row["slug"]] == list(range(1, row["runs"] + 1))  # run-<slug>-<n>
        assert f'href="#run-{row["slug"]}-1"' in page
    assert 'id="run-run_stolen_card-1-ev-9"' in page  # the event the SOP failure points to
    (stolen,) = [e for e in listed if e.title == "run_stolen_card run 1"]
    failed = [i for i, (_, outcome, _) in enumerate(stolen.checks) if outcome == "fail"]
    assert "9" in [stolen.more["ev"][i] for i in failed]


def test_check_writes_an_html_report(tmp_path):
    out = tmp_path / "check.html"
    conversations = sorted((EXAMPLE / "conversations").glob("damaged_card_*.jsonl"))
    result = CliRunner().invoke(cli, ["check", "--no-judge", "--scenario", str(EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"), *map(str, conversations), "--html", str(out)])
    assert result.exit_code == 1, result.output
    page = out.read_text()
    assert "4 conversations: 2 passed, 2 failed, 0 errored" in page
    listed = entries(page)
    assert [Path(e.title).name for e in listed] == [c.name for c in conversations]
    assert [e.verdict for e in listed] == ["fail", "fail", "pass", "pass"]


def test_an_agent_that_raises_leaves_its_traceback_in_the_run_file_and_the_report(hostile_batch):
    document = json.loads((hostile_batch / "gamma" / "run_1.json").read_text())
    (crash,) = document["crashes"]
    assert (crash["where"], crash["type"]) == (None, "LookupError")
    assert crash["message"] == "no such card </script><b>bold</b>"
    assert crash["traceback"].startswith("Traceback (most recent call last):")
    assert 'raise LookupError("no such card </script><b>bold</b>")' in crash["traceback"]
    assert "crashes" not in json.loads((hostile_batch / "alpha" / "run_1.json").read_text())  # none when nothing crashed
    page = (hostile_batch / "report.html").read_text()
    assert '<details class="crash"><summary>LookupError: no such card &lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;</summary>' in page
    assert "raise LookupError(&quot;no such card &lt;/script&gt;" in page
