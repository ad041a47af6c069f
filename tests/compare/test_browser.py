"""The `compare --html` page in headless Chromium: the banner, the key filter and search, links from checks to keys."""

from __future__ import annotations

import pytest

from tests.compare.builders import document, simple, write_batch
from tests.compare.test_cli import compare
from tests.report.conftest import CHROMIUM, chromium, watched_tab

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (.ci/run installs it)")

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    """Seven keys regress, two are fixed, one is flaky (so the permutation test), one still fails; one key's name is hostile markup."""
    folder = tmp_path_factory.mktemp("compare_html")
    base = [document(f"r{i}", "pass", [("tool_executed lookup", "pass")]) for i in range(7)]
    new = [document(f"r{i}", "fail", [("tool_executed lookup", "fail")]) for i in range(7)]
    base += [simple("f1", "fail"), simple("f2", "fail"), simple("flaky", "pass"), simple("flaky", "fail"), simple(HOSTILE, "fail")]
    new += [simple("f1", "pass"), simple("f2", "pass"), simple("flaky", "fail"), simple("flaky", "fail"), simple(HOSTILE, "fail")]
    path = folder / "compare.html"
    done = compare(write_batch(folder / "base.json", base), write_batch(folder / "new.json", new), "--html", path)
    assert done.returncode == 0, done.stderr
    assert "paired permutation test on per-key pass rates: p = 0.109" in done.stdout  # what the banner must say
    return path


@pytest.fixture(scope="module")
def browser(page_path):
    with chromium() as browser:
        yield browser


@pytest.fixture
def opened(browser, page_path):
    page, problems = watched_tab(browser)
    page.on("request", lambda r: problems.append(f"request: {r.url}") if r.url.split("#")[0] != page_path.as_uri() else None)
    page.goto(page_path.as_uri())
    yield page, problems
    page.close()


def visible_keys(page) -> list[str]:
    return page.eval_on_selector_all("#keys tbody tr:not(.hidden) td:first-child", "cells => cells.map(c => c.textContent)")


def test_the_banner_says_the_verdict_and_the_test(opened):
    page, problems = opened
    banner = page.locator("#banner")
    assert banner.locator(".verdict").inner_text() == "no significant change"
    assert "-50.0 points (95% interval -100.0 to +4.2) over 11 keys · paired permutation test on per-key pass rates: p = 0.109" in banner.inner_text()
    assert page.locator("#keys tbody tr").count() == 11
    assert page.locator("#shown").inner_text() == "11 of 11 keys shown"
    assert problems == []


def test_the_status_buttons_and_the_search_filter_the_keys(opened):
    page, problems = opened
    page.get_by_role("button", name="regressed (7)").click()
    assert visible_keys(page) == [f"r{i}" for i in range(7)]
    assert page.locator("#shown").inner_text() == "7 of 11 keys shown"
    page.fill("#search", "r3")
    assert visible_keys(page) == ["r3"]
    page.get_by_role("button", name="fixed (2)").click()
    assert visible_keys(page) == []
    page.fill("#search", "")
    assert visible_keys(page) == ["f1", "f2"]
    page.get_by_role("button", name="all").click()
    assert len(visible_keys(page)) == 11
    assert problems == []


def test_a_checks_key_link_shows_that_key_even_when_filtered_out(opened):
    page, problems = opened
    page.get_by_role("button", name="fixed (2)").click()
    row = page.locator("#checks tbody tr", has_text="tool_executed lookup")
    assert row.locator("td").nth(0).inner_text() == "7"
    row.get_by_role("link", name="r2").click()
    target = page.locator("#keys tbody tr:target")
    assert target.locator("td").first.inner_text() == "r2" and target.is_visible()
    assert problems == []


def test_a_hostile_key_is_text_and_runs_nothing(opened):
    page, problems = opened
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("main img").count() == 0 and page.locator("script").count() == 1
    assert HOSTILE in visible_keys(page)
    assert problems == []
