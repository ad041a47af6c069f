"""The events a judge cited are a criterion's evidence: read back from a results folder, shown in the text
summary, and highlighted in report.html (headless Chromium) like a deterministic check's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report.conftest import BROWSER_BOUND_MS, CHROMIUM, chromium

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
RUN = "run_stolen_card"


@pytest.fixture
def judged_batch(example_batch, tmp_path) -> Path:
    """The example batch with criteria in one run as a judge decided them: one failed citing event 9, one inconclusive."""
    results = tmp_path / "results"
    shutil.copytree(example_batch, results)
    path = results / RUN / "run_1.json"
    run = json.loads(path.read_text())
    run["criteria"] = [{"criterion": "The agent asks first", "outcome": "fail", "detail": "it ordered before asking", "evidence": [9]}]
    run["criteria"].append({"criterion": "The agent says which card", "outcome": "error", "detail": "inconclusive: never said", "evidence": [], "inconclusive": True})
    run["verdict"] = "fail"
    path.write_text(json.dumps(run))
    return results


def report(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(DIALOGCHECK), "report", *map(str, args)], capture_output=True, text=True, timeout=300)


def test_a_results_folder_keeps_the_cited_events_and_the_inconclusive_mark(judged_batch):
    shown = report(judged_batch, "--show", "all").stdout
    assert "it ordered before asking [cited: event 9]" in shown
    assert "inconclusive: never said" in shown


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_report_html_highlights_the_events_a_criterion_cites(judged_batch, tmp_path):
    html = tmp_path / "report.html"
    assert report(judged_batch, "--html", html).returncode in (1, 3)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.set_default_timeout(BROWSER_BOUND_MS)
        page.goto(html.as_uri() + f"#run-{RUN}-1")
        criterion = page.locator(f'#run-{RUN}-1 .check[data-outcome="fail"]', has_text="it ordered before asking")
        assert criterion.get_attribute("data-ev") == "9"
        criterion.focus()
        assert page.locator(f"#run-{RUN}-1 .ev.hl").evaluate_all("rows => rows.map(r => r.id)") == [f"run-{RUN}-1-ev-9"]
        assert page.locator(f"#run-{RUN}-1", has_text="inconclusive: never said").count() == 1
        page.close()
