"""report.html opened in headless Chromium (Debian's package, driven by Playwright): content, filter, keyboard, no script injection."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.conftest import CHROMIUM, HOSTILE, chromium, load, run_documents, watched_tab
from tests.report.page_data import entries

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (.ci/run installs it)")


@pytest.fixture(scope="module")
def browser(example_batch, hostile_batch):
    """Chromium through Playwright's sync API; the batches are made first, as that API holds this thread's event loop."""
    with chromium() as browser:
        yield browser


@pytest.fixture
def open_report(browser):
    """Open a report; yields (page, problems): console errors, page errors and any request beyond the file itself."""
    pages = []

    def go(path: Path, fragment: str = ""):
        page, problems = watched_tab(browser)
        page.on("request", lambda r: problems.append(f"request: {r.url}") if r.url.split("#")[0] != path.as_uri() else None)
        page.goto(path.as_uri() + fragment)
        pages.append(page)
        return page, problems

    yield go
    for page in pages:
        page.close()


def _count(page, selector: str) -> int:
    return page.locator(selector).count()


def _checks(runs, outcome):
    return sum(1 for run in runs for group in ("assertions", "sop", "criteria") for c in run.get(group, []) if c["outcome"] == outcome)


@pytest.mark.parametrize("batch", ["example_batch", "hostile_batch"])
def test_counts_in_the_page_match_the_results(batch, request, open_report):
    results = request.getfixturevalue(batch)
    summary = load(results / "summary.json")
    page, problems = open_report(results / "report.html")
    for verdict, key in (("pass", "passed"), ("fail", "failed"), ("error", "errored")):
        assert _count(page, f'.run[data-verdict="{verdict}"]') == summary[key]
    failed_checks = sum(len(r["failed_checks"]) for r in summary["failed_runs"])
    assert _count(page, '.check[data-outcome="fail"]') == failed_checks
    assert _count(page, '.check[data-outcome="pass"]') == _checks(run_documents(results), "pass")
    assert _count(page, "#summary tbody tr") == len(summary["scenarios"])
    for run in run_documents(results):
        assert _count(page, f'#run-{run["scenario"]["slug"]}-{run["run"]}[data-verdict="{run["verdict"]}"]') == 1
    assert problems == []


def test_the_hostile_message_did_not_run_and_is_shown_as_text(hostile_batch, open_report, tmp_path):
    page, problems = open_report(hostile_batch / "report.html")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert _count(page, "main img") == 0 and _count(page, "script:not([type])") == 1
    assert _count(page, "script") == 1 + _count(page, 'script[type="application/json"]')  # the rest is data, never run
    first = page.locator("#run-beta-1 .msg.agent").first
    assert first.inner_text().endswith("Hi! " + HOSTILE)
    assert HOSTILE in page.locator("#run-beta-1 .ev").first.inner_text()
    assert "raised LookupError: no such card </script><b>bold</b>" in page.locator("#run-gamma-1 .run-error").inner_text()
    page.screenshot(path=tmp_path / "hostile.png", full_page=True)
    assert problems == []


def test_failures_only_hides_passing_runs_and_is_reached_by_keyboard(hostile_batch, open_report, tmp_path):
    page, _ = open_report(hostile_batch / "report.html")
    for _ in range(3):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "failures-only":
            break
    assert page.evaluate("document.activeElement.id") == "failures-only"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"  # focus is visible
    passing = page.locator('.run[data-verdict="pass"]')
    assert passing.count() == 3
    page.keyboard.press("Space")
    assert page.locator("#failures-only").is_checked()
    assert passing.count() == 0  # not listed
    assert all(page.locator(f'.run[data-verdict="{v}"]').first.is_visible() for v in ("fail", "error"))
    assert page.locator("#shown").inner_text() == "showing 5 of 8 runs"
    page.screenshot(path=tmp_path / "failures-only.png")
    page.keyboard.press("Space")
    assert passing.count() == 3 and passing.first.is_visible()


def test_a_check_highlights_the_events_it_points_to(example_batch, open_report, tmp_path):
    page, _ = open_report(example_batch / "report.html", "#run-run_stolen_card-1")
    sop = page.locator('#run-run_stolen_card-1 .check[data-outcome="fail"]', has_text="confirm_before_ordering")
    assert sop.get_attribute("data-ev") == "9"
    sop.focus()  # reachable by Tab: checks have tabindex 0
    assert page.locator("#run-run_stolen_card-1 .ev.hl").evaluate_all("rows => rows.map(r => r.id)") == ["run-run_stolen_card-1-ev-9"]
    assert "tool order_replacement(" in page.locator("#run-run_stolen_card-1-ev-9").inner_text()
    page.keyboard.press("Shift+Tab")  # back to the check before it: tool_sequence over events 5 and 9
    page.keyboard.press("Shift+Tab")
    ids = page.locator("#run-run_stolen_card-1 .ev.hl").evaluate_all("rows => rows.map(r => r.id)")
    assert ids == ["run-run_stolen_card-1-ev-5", "run-run_stolen_card-1-ev-9"]
    page.screenshot(path=tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_a_link_to_a_passing_run_opens_it(example_batch, open_report):
    page, problems = open_report(example_batch / "report.html", "#run-run_cancel-2")
    assert page.locator("#run-run_cancel-2 > details").get_attribute("open") is not None
    assert page.locator("#run-run_cancel-2 .check").first.is_visible()
    assert page.locator("#run-run_cancel-1 .check").first.is_hidden()  # passing runs start folded
    assert problems == []


def test_failing_and_flaky_runs_come_first(hostile_batch, open_report):
    page, problems = open_report(hostile_batch / "report.html")
    runs = {(d["scenario"]["slug"], d["run"]): d["verdict"] for d in run_documents(hostile_batch)}
    flaky = {slug for slug, _ in runs if {"pass", "fail"} <= {v for (s, _), v in runs.items() if s == slug}}
    assert flaky == {"delta"}
    listed = [e.title for e in entries((hostile_batch / "report.html").read_text())]  # plan order
    rank = {"fail": 0, "error": 1, "pass": 3}

    def key(title):
        slug, _, number = title.split(" ")
        verdict = runs[(slug, int(number))]
        return 2 if verdict == "pass" and slug in flaky else rank[verdict]

    expected = [f"run-{t.split(' ')[0]}-{t.split(' ')[2]}" for t in sorted(listed, key=key)]
    assert page.locator("#entries .run").evaluate_all("runs => runs.map(r => r.id)") == expected
    assert problems == []


def test_filter_by_scenario_tag_verdict_and_text(hostile_batch, open_report):
    from playwright.sync_api import expect

    page, problems = open_report(hostile_batch / "report.html")
    page.locator("#f-tag").select_option("beta")
    assert page.locator("#shown").inner_text() == "showing 2 of 8 runs"
    assert page.locator("#entries .run").evaluate_all("runs => runs.map(r => r.dataset.slug)") == ["beta", "beta"]
    page.locator("#f-clear").click()
    page.locator("#f-group").select_option(label="gamma (Gamma)")
    page.locator("#f-verdict").select_option("error")
    assert page.locator("#entries .run").evaluate_all("runs => runs.map(r => r.id)") == ["run-gamma-1", "run-gamma-2"]
    page.locator("#f-verdict").select_option("pass")
    assert page.locator("#shown").inner_text() == "showing 0 of 8 runs" and page.locator("#entries").inner_text() == "No runs match."
    page.locator("#f-clear").click()
    page.locator("#f-text").fill("q was 'nope'")  # in a check's detail
    expect(page.locator("#shown")).to_have_text("showing 1 of 8 runs")
    assert page.locator("#entries .run").evaluate_all("runs => runs.map(r => r.id)") == ["run-delta-2"]
    page.locator("#f-text").fill("NO SUCH CARD </script>")  # in the errored runs' errors, whatever the case
    expect(page.locator("#shown")).to_have_text("showing 2 of 8 runs")
    assert page.locator("#entries .run").evaluate_all("runs => runs.map(r => r.dataset.slug)") == ["gamma", "gamma"]
    page.locator("#f-text").fill("<script>window.__pwned=1</script>")  # the agent's greeting, searched as text
    expect(page.locator("#shown")).to_have_text("showing 8 of 8 runs")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert problems == []
