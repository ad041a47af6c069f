"""JUnit XML for CI: one test suite per scenario (or SOP), one test case per run or checked conversation.

CI systems (Jenkins, GitLab, GitHub Actions reporters) all read this shape, so
a failing check shows up where a team already looks. Each failing check is its
own `<failure>` (short `message`, full explanation as text); a harness failure
or a check that could not be decided is an `<error>`, never a failure, so it is
not mistaken for the agent's fault. Built with ElementTree, which escapes text
and attributes; characters XML 1.0 cannot hold at all are spelt out. Each
message and detail is cut to `_shown.TEXT_LIMIT` characters.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._shown import cut
from ..evaluate import ConversationResult
from .data import conversation_dict

MESSAGE_LIMIT = 200
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(value: Any) -> str:
    """Text XML 1.0 can carry: control characters become `\\xNN` instead of breaking the file."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"


def _time(seconds: float | None) -> str:
    return f"{max(seconds or 0.0, 0.0):.3f}"


def _checks(judged: Mapping[str, Any]) -> Iterable[tuple[str, str, str, str]]:
    """Every check of a run document or `conversation_dict` as (kind, label, outcome, detail)."""
    for a in judged.get("assertions", []):
        yield a["key"], a.get("label") or a["key"], a["outcome"], a.get("detail") or ""
    for s in judged.get("sop", []):
        yield "sop_step", f"SOP {s['id']} {s.get('label') or s['type']}", s["outcome"], s.get("detail") or ""
    for c in judged.get("criteria", []):
        yield "criterion", f"criterion {c['criterion']!r}", c["outcome"], c.get("detail") or ""


def _problem(parent: ET.Element, tag: str, kind: str, label: str, detail: str) -> None:
    detail = cut(detail)
    element = ET.SubElement(parent, tag, message=_clean(_short(f"{label}: {detail}" if detail else label)), type=_clean(kind))
    element.text = _clean(f"{label}\n{detail}" if detail else label)


def _testcase(suite: ET.Element, name: str, classname: str, judged: Mapping[str, Any], *, time: float | None, error: str | None, verdict: str) -> None:
    case = ET.SubElement(suite, "testcase", name=_clean(name), classname=_clean(classname))
    if time is not None:
        case.set("time", _time(time))
    if error:
        _problem(case, "error", "harness", "run errored", error)
    shown = False
    for kind, label, outcome, detail in _checks(judged):
        if outcome in ("fail", "error"):
            _problem(case, "failure" if outcome == "fail" else "error", kind, label, detail)
            shown = True
    if verdict == "error" and not error and not shown:
        _problem(case, "error", "harness", "run errored", "no check could be decided")
    transcript = judged.get("transcript") or []
    if transcript:
        out = ET.SubElement(case, "system-out")
        out.text = _clean("\n".join(f"{line['role'].upper()}: {cut(line['text'])}" for line in transcript))


def _suite(parent: ET.Element, name: str, cases: Sequence[Mapping[str, Any]], properties: Sequence[tuple[str, str]], **attrs: str) -> ET.Element:
    verdicts = [case["verdict"] for case in cases]
    suite = ET.SubElement(
        parent,
        "testsuite",
        name=_clean(name),
        tests=str(len(cases)),
        failures=str(verdicts.count("fail")),
        errors=str(verdicts.count("error")),
        skipped="0",
        **{k: _clean(v) for k, v in attrs.items()},
    )
    if properties:
        props = ET.SubElement(suite, "properties")
        for key, value in properties:
            ET.SubElement(props, "property", name=_clean(key), value=_clean(value))
    return suite


def _properties(kind: str, name: str, scenario_type: str | None, tags: Sequence[str], path: str | None) -> list[tuple[str, str]]:
    found = [(f"{kind}.name", name)]
    if scenario_type:
        found.append(("scenario.type", scenario_type))
    if tags:
        found.append(("scenario.tags", ",".join(tags)))
        found += [("tag", tag) for tag in tags]
    if path:
        found.append((f"{kind}.path", path))
    return found


def _document(root: ET.Element) -> str:
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _totals(root: ET.Element, cases: Sequence[Mapping[str, Any]], time: float | None) -> None:
    verdicts = [case["verdict"] for case in cases]
    root.set("tests", str(len(verdicts)))
    root.set("failures", str(verdicts.count("fail")))
    root.set("errors", str(verdicts.count("error")))
    if time is not None:
        root.set("time", _time(time))


def render_junit(summary: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> str:
    """`junit.xml` of a results folder, from `summary.json` and the `run_N.json` documents."""
    root = ET.Element("testsuites", name="dialogcheck")
    by_slug: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        by_slug.setdefault(run["scenario"]["slug"], []).append(run)
    stamp = {"timestamp": summary["started"]} if summary.get("started") else {}
    for slug, group in by_slug.items():
        scenario = group[0]["scenario"]
        props = _properties("scenario", scenario.get("name") or slug, scenario.get("type"), scenario.get("tags") or (), scenario.get("path"))
        time = sum(run.get("duration_s") or 0.0 for run in group)
        suite = _suite(root, slug, group, props, time=_time(time), **stamp)
        for run in group:
            _testcase(suite, f"run_{run['run']}", slug, run, time=run.get("duration_s"), error=run.get("error"), verdict=run["verdict"])
    _totals(root, runs, sum(run.get("duration_s") or 0.0 for run in runs))
    return _document(root)


def render_junit_check(results: Sequence[ConversationResult], subject: Any = None) -> str:
    """JUnit for `dialogcheck check`: one suite per scenario or SOP, one test case per conversation.

    `subject` (the Scenario or SOP checked against) adds its type, tags and path as properties.
    """
    # with several scenarios, a suite each (by slug: two may share a name)
    return render_junit_rows([(result.scenario or result.subject, conversation_dict(result, with_source=True)) for result in results], subject)


def render_junit_rows(rows: Sequence[tuple[str, Mapping[str, Any]]], subject: Any = None) -> str:
    """`render_junit_check` from each conversation's JSON (as `check --output` shards hold it) and its suite."""
    root = ET.Element("testsuites", name="dialogcheck check")
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for group, row in rows:
        grouped.setdefault(group, []).append(row)
    several = getattr(subject, "scenarios", None)  # a ScenarioSet: each suite's scenario by slug
    kind = "sop" if subject is not None and not hasattr(subject, "goals") and several is None else "scenario"
    for group, cases in grouped.items():
        one = several[group] if several is not None else subject
        name = getattr(one, "name", group) if several is not None else group
        tags = tuple(getattr(one, "tags", ()) or ())
        props = _properties(kind, name, getattr(one, "type", None), tags, getattr(one, "path", None))
        key = getattr(one, "slug", None) or getattr(one, "id", None) or name
        suite = _suite(root, key, cases, props)
        for case in cases:
            label = case["source"] + (f" ({case['conversation_id']})" if case.get("conversation_id") else "")
            _testcase(suite, label, key, case, time=None, error=None, verdict=case["verdict"])
    _totals(root, [case for cases in grouped.values() for case in cases], None)
    return _document(root)
