"""Real batches to report on: the example project, and a small project whose agent is hostile.

Both are made by `dialogcheck run`, so the reports are tested on the files a
user really gets. Built once per test session: a batch takes a moment.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE

CHROMIUM = Path("/usr/bin/chromium")
#: Milliseconds any wait in the browser may take (a page's load, an action, a text a test expects): a bound on a hang,
#: far past what a loaded machine takes to draw a report of 100,000 conversations; Playwright's own 5 s for an
#: expected text and 30 s for the rest are not.
BROWSER_BOUND_MS = 300_000
# Flags for this machine's closed network: no background connections, nothing to sign in to.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-quic", "--no-first-run"]



@contextlib.contextmanager
def chromium():
    """Headless Chromium through Playwright's sync API (skipped where Playwright is not installed)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    sync_api.expect.set_options(timeout=BROWSER_BOUND_MS)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield browser
        browser.close()


def watched_tab(browser, height: int = 768):
    """A new tab, and the list its console errors and warnings and its page errors are written to."""
    tab = browser.new_page(viewport={"width": 1366, "height": height})
    tab.set_default_timeout(BROWSER_BOUND_MS)
    problems: list[str] = []
    tab.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return tab, problems


HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'

AGENT = '''
import pathlib

HOSTILE = {hostile!r}
COUNTER = pathlib.Path(__file__).with_name("flips")


def respond(conversation_id, text, initial_slots=None):
    if text is None:
        return {{"messages": [{{"text": "Hi! " + HOSTILE}}], "events": []}}
    if text == "break":
        raise LookupError("no such card </script><b>bold</b>")
    if text == "flip":
        flips = int(COUNTER.read_text()) if COUNTER.exists() else 0
        COUNTER.write_text(str(flips + 1))
        text = "card" if flips % 2 == 0 else "nope"
    events = [
        {{"event": "tool_executed", "tool_name": "lookup", "arguments": {{"q": text, "note": HOSTILE}}, "source": "local", "result": {{"html": HOSTILE}}}},
        {{"event": "memory_set", "key": "last_query", "value": HOSTILE}},
    ]
    return {{"messages": [{{"text": "Looked it up: " + text + " " + HOSTILE}}], "events": events}}
'''

SCENARIO = """
scenario:
  name: {name}
  type: {type}
  tags: [hostile, {slug}]
  simulation_context: c
  script: [{message}]
  goals:
    assertions:
      - tool_executed: {{tool_name: lookup, source: local, arguments: {{q: card}}}}
      - memory_was_set: [{{name: last_query}}]
"""

# slug, scenario type, the user's one message: passes, fails, errors, then passes once and fails once.
PLAN = (("alpha", "happy_path", "card"), ("beta", "sad_path", "balance"), ("gamma", "edge_case", "break"), ("delta", "edge_case", "flip"))


def run_batch(args) -> None:
    result = CliRunner().invoke(cli, ["run", *map(str, args)])
    assert isinstance(result.exception, SystemExit) and result.exit_code in (0, 1, 3), (result.exception, result.output)


@pytest.fixture(scope="session")
def hostile_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile_project")
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (root / "agent.py").write_text(AGENT.format(hostile=HOSTILE))
    for slug, kind, message in PLAN:
        (root / "eval" / "scenarios" / f"{slug}.yml").write_text(SCENARIO.format(name=slug.title(), type=kind, slug=slug, message=message))
    return root


@pytest.fixture(scope="session")
def hostile_batch(hostile_project, tmp_path_factory) -> Path:
    """Two runs each: alpha passes, beta fails, gamma errors, delta is flaky."""
    results = tmp_path_factory.mktemp("hostile") / "results"
    run_batch([hostile_project, "--runs", "2", "--parallel", "1", "--results", results])
    return results


@pytest.fixture(scope="session")
def example_batch(tmp_path_factory) -> Path:
    results = tmp_path_factory.mktemp("example") / "results"
    run_batch(["--no-judge", EXAMPLE, "--runs", "2", "--results", results])
    return results


def load(path: Path):
    return json.loads(path.read_text())


def run_documents(results: Path) -> list[dict]:
    return [load(p) for p in sorted(results.glob("*/run_*.json"))]
