"""`check --html` opened in headless Chromium: SKIP badges on screen, the checks table opening with its failures,
a derived tau-bench scenario's two checks of one tool told apart, and each conversation's transcript shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import REPO
from tests.report.conftest import CHROMIUM, chromium, watched_tab

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (.ci/run installs it)")

SAMPLE = REPO / "tests" / "importers" / "data" / "tau_bench_airline_sample.json"
#: Where a screenshot of the page is kept to be looked at (DIALOGCHECK_SCREENSHOTS=folder), else nowhere.
SCREENSHOTS = os.environ.get("DIALOGCHECK_SCREENSHOTS")


def _invoke(*args: str, cwd: Path) -> int:
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False).exit_code
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> Path:
    """The tau-bench sample checked against its derived scenarios, with a criterion each (skipped: --no-judge)."""
    folder = tmp_path_factory.mktemp("checked")
    assert _invoke("import", "--from", "tau-bench", str(SAMPLE), "-o", "runs.jsonl", "--derive-scenarios", "scenarios", cwd=folder) == 0
    for scenario in (folder / "scenarios").glob("*.yml"):
        text = scenario.read_text()
        scenario.write_text(text.replace("    assertions:\n", "    criteria:\n      - The agent is polite\n    assertions:\n", 1))
    assert _invoke("check", "--no-judge", "--scenario", "scenarios", "--pair", r"task-(\d+)", "runs.jsonl", "--html", "check.html", cwd=folder) == 1
    return folder / "check.html"


@pytest.fixture(scope="module")
def tab(checked):
    with chromium() as browser:
        tab, problems = watched_tab(browser, height=1400)
        tab.goto(checked.as_uri())
        tab.wait_for_selector("#runs .run")
        yield tab
        assert problems == []
        tab.close()


def test_every_skip_badge_is_on_screen(tab):
    tab.locator("#runs .run").first.locator("summary").scroll_into_view_if_needed()
    badges = tab.locator('.check .badge.skip')
    assert badges.count() >= 1
    box = badges.first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["width"] > 0
    assert badges.first.inner_text() == "SKIP"
    skip_link = tab.locator("a.skip-link").bounding_box()
    assert skip_link is not None and skip_link["x"] < 0  # the link for the keyboard stays off screen until focused


def test_the_checks_table_opens_with_its_failures_first(tab):
    failed = [int(v) for v in tab.locator("#check-table tbody tr td.failed").evaluate_all("cells => cells.map(c => c.dataset.v)")]
    assert failed[:3] == [1, 1, 1] and failed == sorted(failed, reverse=True)
    labels = tab.locator("#check-table tbody tr td:nth-child(2)").all_inner_texts()
    assert "tool_executed cancel_reservation (local) with arguments" in labels[:3]
    assert "tool_executed cancel_reservation (local) times 1" in labels[:3]


def test_a_conversation_shows_its_transcript_beside_its_checks(tab):
    run = tab.locator("#runs .run").first
    transcript = run.locator(".run-timeline .msg.user").first
    assert transcript.is_visible()
    assert transcript.inner_text().startswith("USER\nHi there! I need to change my return flight")
    assert run.locator(".run-grid:not(.single) .run-checks .check").count() >= 1
    if SCREENSHOTS:
        tab.screenshot(path=str(Path(SCREENSHOTS) / "check-html.png"), full_page=True)
