"""Hundreds of scenario and SOP files, read by the one check loader exactly as the hand-written parsers read them.

`tests/data/check_definitions.jsonl` holds files generated at random (every assertion key and SOP evaluator,
with wrong types, missing, misspelt and unknown fields, bad and huge regular expressions, framework tools,
`session.` names, `a|b` slugs, nested `sequencing` and `tools_within_one_turn`, duplicate step ids) and what
dialogcheck said of each at commit feb73f5, before each check's fields were declared on its class: every
problem, its line and column and their order; or, for a file that loads, each check's label and its results on
the two conversations below. Regenerate the expectations only from a commit whose loader is known good:
`python -m tests.checks.test_load_corpus` rewrites them with whatever `dialogcheck` is importable.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dialogcheck import load_scenario, load_sop
from dialogcheck.errors import LoadError
from dialogcheck.judging import evaluate, evaluate_sop
from tests.conftest import REPO, bot, conv, ev, tool, user

CORPUS = REPO / "tests" / "data" / "check_definitions.jsonl"
ENTRIES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]

CONVERSATIONS = [
    conv(
        user("hi"),
        bot("Shall I confirm the order?", utter="utter_x", buttons=[{"title": "card", "payload": "/x"}]),
        ev("skill_activated", skill_id="card"),
        ev("memory_set", key="card", value=1),
        ev("memory_cleared", key="card"),
        tool("get_order", {"order_id": "#W12", "items": [{"qty": 2}], "a": 1, "n": "x", "m": [1, 2]},
             result='{"status": "shipped", "error": "x"}'),
        user("yes"),
        bot("confirm please"),
        tool("set_delivery_address", {"a": "b"}, source="mcp", mcp_server="x", is_error=True, result="done"),
        tool("x"),
        tool("hangup"),
        ev("skill_completed", skill_id="card"),
        ev("ordered_block_entered", skill_id="card", block_id="x", step_id="a"),
    ),
    conv(user("hello"), bot("x")),
]


def outcome(entry: dict, path: Path) -> dict:
    """What dialogcheck says of one corpus file: its problems, or its checks' labels and results."""
    path.write_text(entry["text"], encoding="utf-8")
    try:
        if entry["kind"] == "sop":
            sop = load_sop(path, environ={})
            labels = [step.evaluator.label for step in sop.steps.steps]
            results = [
                [[step.id, str(step.outcome), step.detail] for step in evaluate_sop(sop, c, no_judge=True).sop.results]
                for c in CONVERSATIONS
            ]
        else:
            framework_tools = entry.get("framework_tools")
            kwargs = {} if framework_tools is None else {"framework_tools": frozenset(framework_tools)}
            scenario = load_scenario(path, environ={}, **kwargs)
            labels = [check.label for check in scenario.goals.assertions]
            results = []
            for c in CONVERSATIONS:
                result = evaluate(scenario, c, no_judge=True)
                found = [[r.check.label, str(r.outcome), r.detail, list(r.evidence)] for r in result.assertions]
                steps = [[s.id, str(s.outcome), s.detail] for s in (result.sop.results if result.sop else ())]
                results.append(found + steps)
    except LoadError as err:
        return {"error": str(err).replace(str(path), "F").splitlines()}
    return {"labels": labels, "results": results}


def test_the_corpus_covers_both_kinds_and_both_endings():
    kinds = {(entry["kind"], "error" in entry) for entry in ENTRIES}
    assert kinds == {("scenario", True), ("scenario", False), ("sop", True), ("sop", False)}
    assert len(ENTRIES) > 400


@pytest.mark.parametrize("number", range(len(ENTRIES)))
def test_each_file_loads_or_fails_as_before(tmp_path, number):
    entry = ENTRIES[number]
    expected = {key: entry[key] for key in ("error", "labels", "results") if key in entry}
    assert outcome(entry, tmp_path / "f.yml") == expected, entry["text"]


if __name__ == "__main__":  # rewrite the expectations with the importable dialogcheck
    import tempfile

    folder = Path(tempfile.mkdtemp())
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        entry = {key: value for key, value in json.loads(line).items() if key in ("kind", "text", "framework_tools")}
        lines.append(json.dumps({**entry, **outcome(entry, folder / "f.yml")}, ensure_ascii=False))
    CORPUS.write_text("\n".join(lines) + "\n", encoding="utf-8")
