"""`check --html` of 100,000 conversations, opened in headless Chromium: the banner, the per-check table and its
links, the filters, paging, and a failing conversation's detail, against what `check --output` wrote of the same run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report.conftest import BROWSER_BOUND_MS, CHROMIUM, HOSTILE, chromium, watched_tab

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (.ci/run installs it)")

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
N = 100_000
SCENARIO = """
scenario:
  name: Look up, remember, order once
  simulation_context: c
  goals:
    assertions:
      - tool_executed: {tool_name: lookup, source: local}
      - memory_was_set: [{name: card.id}]
      - tool_executed: {tool_name: order, source: local, times: 1}
      - bot_uttered: {utter_name: utter_found}
"""
#: Of every ten conversations: 1, 2 and 3 forget to remember the card, 3 and 4 order twice; the rest pass.
FORGETS, ORDERS_TWICE = {1, 2, 3}, {3, 4}
FAILED = N // 10 * len(FORGETS | ORDERS_TWICE)


def _conversation(i: int) -> str:
    kind = i % 10
    events = [
        {"event": "user", "text": f"card please {HOSTILE}"},
        {"event": "tool_executed", "tool_name": "lookup", "arguments": {"q": HOSTILE}, "source": "local", "result": "ok"},
        {"event": "bot", "text": "found it", "metadata": {"utter_action": "utter_found"}},
    ]
    if kind not in FORGETS:
        events.append({"event": "memory_set", "key": "card.id", "value": f"card_{i % 997}"})
    order = {"event": "tool_executed", "tool_name": "order", "arguments": {"n": i % 7}, "source": "local", "result": "ok"}
    events += [order, order] if kind in ORDERS_TWICE else [order]
    return json.dumps({"conversation_id": f"conv-{i:06d}", "events": events})


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """One `check` of 100,000 conversations writing both the HTML report and the results folder."""
    root = tmp_path_factory.mktemp("scale")
    (root / "s.yml").write_text(SCENARIO)
    (root / "log.jsonl").write_text("\n".join(_conversation(i) for i in range(N)) + "\n")
    done = subprocess.run(
        [str(DIALOGCHECK), "check", "--no-judge", "--scenario", "s.yml", "log.jsonl", "--html", "report.html", "--output", "out"],
        cwd=root, capture_output=True, timeout=600, check=False,
    )
    assert done.returncode == 1, done.stderr.decode()[-2000:]
    return root


@pytest.fixture(scope="module")
def browser(checked):
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser, checked):
    """The report opened in a new tab, its list drawn; (tab, problems: console errors and page errors)."""
    tab, problems = watched_tab(browser, height=900)
    tab.goto((checked / "report.html").as_uri())
    _wait_for_shown(tab, f"showing {N} of {N} conversations")
    yield tab, problems
    tab.close()


def _shown(tab) -> str:
    return tab.locator("#shown").inner_text()


def _wait_for_shown(tab, text: str) -> None:
    from playwright.sync_api import expect

    expect(tab.locator("#shown")).to_have_text(text, timeout=BROWSER_BOUND_MS)


def _result_of(folder: Path, conversation_id: str) -> dict:
    for shard in sorted(folder.glob("part-*.jsonl")):
        for line in shard.open():
            if f'"conversation_id":"{conversation_id}"' in line:
                return json.loads(line)
    raise AssertionError(conversation_id)


def test_the_report_of_100000_conversations_is_small(checked):
    assert (checked / "report.html").stat().st_size < 25 * 2**20
    assert not [p.name for p in checked.iterdir() if p.name.startswith(".report.html")]  # no temporary part left


def test_the_banner_says_failed_and_the_list_starts_with_failures(page):
    tab, problems = page
    assert tab.locator("#banner").get_attribute("class") == "banner fail"
    assert tab.locator("#banner").inner_text().split() == f"Failed {FAILED:,} of {N:,} conversations failed, 0 errored, {N - FAILED:,} passed".split()
    assert _shown(tab) == f"showing {N} of {N} conversations"
    assert tab.locator("#entries .run").count() == 100  # one page drawn, not 100,000 sections
    assert tab.locator('#entries .run[data-verdict="fail"]').count() == 100
    assert tab.evaluate("typeof window.__pwned") == "undefined"
    assert problems == []


def test_the_check_table_counts_what_the_summary_counts_and_links_to_the_failures(page, checked):
    tab, problems = page
    summary = json.loads((checked / "out" / "summary.json").read_text())
    rows = tab.locator("#check-table tbody tr")
    assert rows.count() == len(summary["checks"]) == 4
    for i, check in enumerate(sorted(summary["checks"], key=lambda c: (-c["fail"], -c["error"]))):  # failures first
        assert rows.nth(i).locator("td.failed").inner_text() == f"{check['fail']:,}"
    tab.locator('#check-table a[href="#check-2"]').click()  # ordered twice
    _wait_for_shown(tab, f"showing {summary['checks'][2]['fail']} of {N} conversations")
    failing = tab.locator("#entries .run").evaluate_all(
        "runs => runs.map(r => Array.from(r.querySelectorAll('.check[data-outcome=fail] .check-label'), l => l.textContent))")
    assert len(failing) == 100 and all("tool_executed order (local) times 1" in labels for labels in failing)
    tab.locator('#check-table th button:text("Failed")').click()
    tab.locator('#check-table th button:text("Failed")').click()  # most failures first
    assert tab.locator("#check-table tbody tr").first.locator("td").nth(1).inner_text() == "memory_was_set card.id"
    assert problems == []


def test_filters_search_and_pages(page):
    tab, problems = page
    tab.locator("#f-verdict").select_option("pass")
    assert _shown(tab) == f"showing {N - FAILED} of {N} conversations"
    assert tab.locator("#entries .run > details[open]").count() == 0  # passing: compact, folded
    tab.locator(".pager .next").first.click()
    assert tab.locator(".pager .page-no").first.inner_text().strip() == f"page 2 of {(N - FAILED) // 100}"
    tab.locator("#f-verdict").select_option("")
    tab.locator("#f-text").fill("conv-054321")
    _wait_for_shown(tab, f"showing 1 of {N} conversations")
    assert tab.locator("#entries .run h3").inner_text() == "log.jsonl#conv-054321"
    assert problems == []


def test_a_failing_conversation_shows_every_check_and_why_it_failed(page, checked):
    tab, problems = page
    tab.goto((checked / "report.html").as_uri() + "#run-conversations-43212")  # the 43,212th: conv-043211, forgot the card
    section = tab.locator("#run-conversations-43212")
    section.wait_for()
    assert section.get_attribute("data-verdict") == "fail" and section.locator("> details").get_attribute("open") is not None
    result = _result_of(checked / "out", "conv-043211")
    checks = section.locator(".check")
    assert checks.count() == len(result["assertions"])
    for i, assertion in enumerate(result["assertions"]):
        assert checks.nth(i).get_attribute("data-outcome") == assertion["outcome"]
        assert checks.nth(i).locator(".check-label").inner_text() == assertion["label"]
        assert checks.nth(i).locator(".check-detail").inner_text() == assertion["detail"]
    assert [a["outcome"] for a in result["assertions"]] == ["pass", "fail", "pass", "pass"]
    assert problems == []
