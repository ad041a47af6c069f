"""Reading one side: `check --format json` in every layout `check` writes, folders, and bad input at its place."""

from __future__ import annotations

import json

import orjson
import pytest

from dialogcheck import LoadError
from dialogcheck.checks.base import Outcome
from dialogcheck.compare.model import JSON_DOCUMENT, CheckId
from dialogcheck.compare.read import _documents, read_side
from dialogcheck.results.model import CheckKind
from tests.compare.builders import batch_bytes, document, simple

DOCS = [
    document("a", "fail", [("tool_executed lookup", "fail")], sop=[("ask", "tool_called", "pass")], criteria=[("polite", "skip")]),
    document("b", "pass", [("tool_executed lookup", "pass")], sop=[("ask", "tool_called", "pass")], criteria=[("polite", "pass")]),
    document(None, "error", [("tool_executed lookup", "pass")], criteria=[("polite", "error")], source="log.jsonl:3"),
]


def runs_of(side):
    return {key: [(run.verdict, [(check.title, outcome) for check, outcome in run.checks]) for run in runs] for key, runs in side.runs.items()}


EXPECTED = {
    "a": [(Outcome.FAIL, [("assertion 1 tool_executed lookup", Outcome.FAIL), ("SOP ask tool_called", Outcome.PASS), ("criterion 1 'polite'", Outcome.SKIP)])],
    "b": [(Outcome.PASS, [("assertion 1 tool_executed lookup", Outcome.PASS), ("SOP ask tool_called", Outcome.PASS), ("criterion 1 'polite'", Outcome.PASS)])],
    "log.jsonl:3": [(Outcome.ERROR, [("assertion 1 tool_executed lookup", Outcome.PASS), ("criterion 1 'polite'", Outcome.ERROR)])],
}


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(batch_bytes, id="check-batch"),
        pytest.param(lambda docs: b"".join(orjson.dumps(d) + b"\n" for d in docs), id="one-a-line"),
        pytest.param(lambda docs: json.dumps({"conversations": docs}, indent=2).encode(), id="reformatted"),
        pytest.param(lambda docs: orjson.dumps({"conversations": docs}), id="one-line-batch"),
    ],
)
def test_every_layout_reads_the_same(tmp_path, layout):
    path = tmp_path / "results.json"
    path.write_bytes(layout(DOCS))
    side = read_side(path)
    assert side.form == JSON_DOCUMENT and side.count == 3
    assert runs_of(side) == EXPECTED


def test_one_conversations_indented_document(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(DOCS[0], indent=2))
    assert runs_of(read_side(path)) == {"a": EXPECTED["a"]}


def test_check_identities_carry_kind_number_label_and_whether_the_judge_decides(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(batch_bytes([document("a", "pass", [("x", "pass")], sop=[("s1", "llm_judge", "pass"), ("s2", "tool_called", "pass")], criteria=[("c", "pass")], subject="S")]))
    checks = [check for check, _ in read_side(path).runs["a"][0].checks]
    assert checks == [
        CheckId(CheckKind.ASSERTION, "S", "x", index=1),
        CheckId(CheckKind.SOP, "S", "llm_judge", id="s1", judged=True),
        CheckId(CheckKind.SOP, "S", "tool_called", id="s2"),
        CheckId(CheckKind.CRITERION, "S", "c", index=1, judged=True),
    ]


def test_an_assertion_without_outcome_reads_passed_as_spec_section_9_prints_it(tmp_path):
    doc = document("a", "fail", [("x", "fail"), ("y", "pass")])
    for item in doc["assertions"]:
        del item["outcome"]
    path = tmp_path / "r.json"
    path.write_bytes(batch_bytes([doc]))
    assert [outcome for _, outcome in read_side(path).runs["a"][0].checks] == [Outcome.FAIL, Outcome.PASS]


def test_the_batch_layout_is_read_a_line_at_a_time(tmp_path):
    """The first conversation comes out before a broken line further down is read: nothing is parsed whole."""
    data = batch_bytes([simple("a", "pass"), simple("b", "pass")]).replace(b'"b"', b'"b" BROKEN')
    path = tmp_path / "r.json"
    path.write_bytes(data)
    documents = _documents(path)
    line, first = next(documents)
    assert (line, first.conversation_id) == (2, "a")
    with pytest.raises(LoadError) as info:
        next(documents)
    assert info.value.problems[0].line == 3


def test_identical_checks_and_outcomes_are_shared(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(batch_bytes([simple(f"c{i}", "pass") for i in range(50)]))
    side = read_side(path)
    first = side.runs["c0"][0].checks
    assert all(runs[0].checks is first for runs in side.runs.values())


def _error(tmp_path, data: bytes, name: str = "r.json") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(LoadError) as info:
        read_side(path)
    return str(info.value).removeprefix(f"{path}:")


GOOD = orjson.dumps(simple("a", "pass"))
HEAD = b'{"conversations": [\n'
TAIL = b'\n], "summary": {"conversations": 2, "passed": 2, "failed": 0, "errored": 0}}\n'


@pytest.mark.parametrize(
    "data, message",
    [
        (HEAD + GOOD + b",\n" + GOOD[:40] + b"\n" + TAIL, "3:41: not valid JSON: unexpected end of data"),
        (HEAD + GOOD + b",\n" + GOOD.replace(b'"verdict":"pass"', b'"verdict":"maybe"') + TAIL,
         "3:35: not a conversation's result of `check`: invalid enum value 'maybe' at `verdict`"),
        (HEAD + GOOD + b",\n" + GOOD.replace(b'"index":1', b'"index":"1"') + TAIL,
         "3:108: not a conversation's result of `check`: expected `int`, got `str` at `assertions[0].index`"),
        (HEAD + GOOD + b",\n" + GOOD.replace(b'"outcome":"pass"', b'"outcome":"passed"') + TAIL,
         "3:197: not a conversation's result of `check`: invalid enum value 'passed' at `assertions[0].outcome`"),
        (HEAD + GOOD + b",\n" + GOOD.replace(b'"verdict":"pass",', b"") + TAIL,
         "3:1: not a conversation's result of `check`: object missing required field `verdict`"),
        (HEAD + GOOD + b",\n" + GOOD, "3:1: the document ends before its closing `], \"summary\": ...}`: was `check` cut short?"),
        (HEAD + GOOD + b'\n], "error": {"message": "bad", "file": "log.jsonl", "line": 7, "column": 3}}\n',
         "3:1: `check` stopped at bad input (log.jsonl:7:3: bad), so this batch is incomplete"),
        (HEAD + GOOD + b'\n], "summary": {\n', "3:16: not valid JSON: unexpected end of data"),
        (b'{"sender_id": "c1", "events": []}\n{"sender_id": "c2", "events": []}\n',
         "1:1: not a conversation's result of `check`: object missing required field `verdict`"),
        (b'{"verdict": "pass", "assertions": [{"index": 1, "outcome": "pass"}]\n', "2:1: not valid JSON: unexpected end of data"),
        (b"[1, 2]", "1:1: not a conversation's result of `check`: expected `object`, got `array`"),
        (b"[1,\n 2]", "1:1: not the output of `dialogcheck check --format json`: expected an object with `verdict` or `conversations`"),
        (b'{\n  "conversations": [\n    {"verdict": "pass", "sop": [{"id": 3, "outcome": "pass"}]}\n  ]\n}\n',
         "3:40: not a conversation's result of `check`: expected `str`, got `int` at `conversations[0].sop[0].id`"),
        (b"", "1:1: the file is empty: expected the output of `dialogcheck check --format json`"),
        (b'{"conversations": []}', "1:1: no conversation's result in this file: expected the output of `dialogcheck check --format json`"),
    ],
)
def test_bad_input_is_named_at_its_line_and_column(tmp_path, data, message):
    assert _error(tmp_path, data) == message


def test_a_missing_path_is_bad_input(tmp_path):
    with pytest.raises(LoadError) as info:
        read_side(tmp_path / "nowhere.json")
    assert str(info.value) == f"{tmp_path / 'nowhere.json'}:1:1: no such file or folder: give a `run` results folder, a `check --output` folder, or `check --format json` output"


def test_a_folder_that_is_no_results_folder_is_bad_input(tmp_path):
    with pytest.raises(LoadError, match="no results folder here|not a dialogcheck results folder"):
        read_side(tmp_path)
