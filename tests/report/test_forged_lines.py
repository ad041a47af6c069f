"""An agent cannot forge a line of text output: its line breaks and control characters are written as escapes.

A Python agent raises an exception whose message holds `\\r\\nPASS  everything`, and
answers with a message holding line breaks, a terminal escape sequence and markup. A
`dialogcheck run` (in process, `tests/inprocess.py`) writes the batch; no line of stdout, stderr, `summary.txt` or `run_N.txt`
may be the forged one. JSON, JUnit and HTML escape by their formats: each keeps the text
exactly, as data, when it is parsed back.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests import inprocess
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
FORGED_ERROR = "card service down\r\nPASS  everything\r\n"
FORGED_REPLY = "Sure.\nPASS  all checks\r\x1b[2J\x1b[32mverdict: PASS\x1b[0m <b>bold</b>"
AGENT = f'''
def respond(conversation_id, text, initial_slots=None):
    if text == "break":
        raise RuntimeError({FORGED_ERROR!r})
    return {{"messages": [{{"text": {FORGED_REPLY!r}}}], "events": []}}
'''
SCENARIO = "scenario:\n  name: {name}\n  simulation_context: x\n  script: [{message}]\n  goals:\n    assertions:\n      - skill_completed: {{skill_id: card}}\n"


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("forged")
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (root / "agent.py").write_text(AGENT)
    (root / "eval" / "scenarios" / "raises.yml").write_text(SCENARIO.format(name="Raises", message="break"))
    (root / "eval" / "scenarios" / "replies.yml").write_text(SCENARIO.format(name="Replies", message="hello"))
    done = {}
    for fmt in ("text", "json"):
        done[fmt] = inprocess.run([DIALOGCHECK, "run", root, "--results", root / f"results-{fmt}", "--format", fmt], text=True, env=clean_env(), timeout=300)
    return root, done


def text_outputs(batch) -> dict[str, str]:
    root, done = batch
    folder = root / "results-text"
    return {
        "stdout": done["text"].stdout,
        "stderr": done["text"].stderr,
        "summary.txt": (folder / "summary.txt").read_text(),
        "raises/run_1.txt": (folder / "raises" / "run_1.txt").read_text(),
        "replies/run_1.txt": (folder / "replies" / "run_1.txt").read_text(),
    }


def test_no_forged_line_and_no_control_character_in_text_output(batch):
    assert batch[1]["text"].returncode == 1, batch[1]["text"].stdout + batch[1]["text"].stderr
    for where, text in text_outputs(batch).items():
        lines = text.splitlines()
        assert not [line for line in lines if line.startswith(("PASS  everything", "PASS  all checks", "verdict: PASS"))], where
        assert not any(c in text for c in "\r\x1b"), where
    outputs = text_outputs(batch)
    assert "card service down\\r\\nPASS  everything\\r\\n" in outputs["summary.txt"]
    assert "card service down\\r\\nPASS  everything\\r\\n" in outputs["stdout"]
    assert "AGENT Sure.\\nPASS  all checks\\r\\x1b[2J\\x1b[32mverdict: PASS\\x1b[0m <b>bold</b>" in outputs["replies/run_1.txt"]


def test_json_keeps_the_text_exactly(batch):
    root, done = batch
    run = json.loads((root / "results-json" / "replies" / "run_1.json").read_text())
    assert {line["text"] for line in run["transcript"] if line["role"] == "agent"} == {FORGED_REPLY}
    summary = json.loads(done["json"].stdout)
    assert FORGED_ERROR in summary["errored_runs"][0]["error"]


def test_junit_keeps_the_text_as_data(batch):
    root, _ = batch
    suites = ElementTree.parse(root / "results-text" / "junit.xml").getroot()
    error = suites.find(".//testsuite[@name='raises']/testcase/error")
    assert FORGED_ERROR.replace("\r\n", "\n") in error.text  # XML reads CR LF as LF; the text stays one element's data
    assert error.get("message").endswith("card service down PASS everything")  # the short message: white space collapsed
    out = suites.find(".//testsuite[@name='replies']/testcase/system-out").text
    assert "Sure.\nPASS  all checks\n\\x1b[2J\\x1b[32mverdict: PASS\\x1b[0m <b>bold</b>" in out  # ESC cannot be XML: spelt out


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_html_keeps_the_text_as_text(batch):
    root, _ = batch
    page = (root / "results-text" / "report.html").read_text()
    parsed = _Collect()
    parsed.feed(page)
    assert "b" not in parsed.tags  # the agent's <b> is text, not markup
    assert any("<b>bold</b>" in text for text in parsed.text)
    assert any("PASS  everything" in text for text in parsed.text)
