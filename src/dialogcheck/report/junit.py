"""JUnit XML for CI: one test suite per scenario (or SOP), one test case per run or checked conversation.

CI systems (Jenkins, GitLab, GitHub Actions reporters) all read this shape, so
a failing check shows up where a team already looks. Each failing check is its
own `<failure>` (short `message`, full explanation as text); a harness failure
or a check that could not be decided is an `<error>`, never a failure, so it is
not mistaken for the agent's fault; a run (or conversation) whose simulated user
is suspect is `<skipped>` with the review's reasons, its checks not reported as
failures, and every review is in the test case's properties. An optional SOP step
that failed is said in `<system-out>`, not as a `<failure>`: the verdict ignores it. Built with ElementTree, which escapes text
and attributes; characters XML 1.0 cannot hold at all are spelt out. Each
message and detail is cut to `_shown.TEXT_LIMIT` characters.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from typing import Any

from .._shown import clip, cut
from ..checks.base import Outcome
from ..results.model import BatchResult, CheckKind, CheckLine, ConversationResult, Counts, RunResult, TranscriptLine, UserReview

MESSAGE_LIMIT = 200
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(value: Any) -> str:
    """Text XML 1.0 can carry: control characters become `\\xNN` instead of breaking the file."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def _short(text: str) -> str:
    return clip(" ".join(text.split()), MESSAGE_LIMIT)


def _time(seconds: float | None) -> str:
    return f"{max(seconds or 0.0, 0.0):.3f}"


def _problem(parent: ET.Element, tag: str, kind: str, label: str, detail: str) -> None:
    detail = cut(detail)
    element = ET.SubElement(parent, tag, message=_clean(_short(f"{label}: {detail}" if detail else label)), type=_clean(kind))
    element.text = _clean(f"{label}\n{detail}" if detail else label)


def _optional_failure(line: CheckLine) -> bool:
    """An optional SOP step that failed: the verdict ignores it, and a `<failure>` would fail the case in every reader."""
    return line.outcome is Outcome.FAIL and line.step is not None and not line.step.required


def _kind(line: CheckLine) -> str:
    return "sop_step" if line.kind is CheckKind.SOP else line.key


def _testcase(
    suite: ET.Element, name: str, classname: str, checks: Iterable[CheckLine], verdict: Outcome, *,
    time: float | None = None, error: str | None = None, transcript: Sequence[TranscriptLine] = (), whole_in: str | None = None,
    review: UserReview | None = None, suspect_attempts: int = 0,
    properties: Sequence[tuple[str, str]] = (),
) -> None:
    case = ET.SubElement(suite, "testcase", name=_clean(name), classname=_clean(classname))
    checks = tuple(checks)
    # the run's own facts (its persona trait, its user's review), where JUnit readers look for a case's properties
    found = [*properties, *(_review(review, suspect_attempts) if review is not None else ())]
    if found:
        props = ET.SubElement(case, "properties")
        for key, value in found:
            ET.SubElement(props, "property", name=_clean(key), value=_clean(value))
    if time is not None:
        case.set("time", _time(time))
    if verdict is Outcome.SUSPECT:
        reasons = "\n".join(_reason_line(reason) for reason in review.reasons) if review is not None else ""
        _problem(case, "skipped", "user_review", "simulated user suspect", reasons)
        checks = ()  # what the checks saw of a conversation the agent was not really given is no failure of it
    if error:
        _problem(case, "error", "harness", "run errored", error)
    shown = False
    for line in checks:
        if line.outcome in (Outcome.FAIL, Outcome.ERROR) and not _optional_failure(line):
            _problem(case, "failure" if line.outcome is Outcome.FAIL else "error", _kind(line), line.title, line.detail)
            shown = True
    if verdict is Outcome.ERROR and not error and not shown:
        _problem(case, "error", "harness", "run errored", "no check could be decided")
    output = [f"optional step failed (the verdict ignores it): {line.title}: {cut(line.detail)}" for line in checks if _optional_failure(line)]
    output += [f"answered from the cache: {line.title}: {line.outcome.value}" for line in checks if line.cached]
    output += [f"{line.role.upper()}: {cut(line.text, whole_in)}" for line in transcript]
    if output:
        out = ET.SubElement(case, "system-out")
        out.text = _clean("\n".join(output))


def _reason_line(reason) -> str:
    return f"{'turn ' + str(reason.turn) if reason.turn is not None else 'overall'} {reason.rule}: {cut(reason.text)}"


def _review(review: UserReview, suspect_attempts: int) -> list[tuple[str, str]]:
    """The review of the simulated user as the test case's properties: its verdict, each reason, the suspect attempts."""
    found = [("user_review.verdict", review.verdict)] + [("user_review.reason", _reason_line(reason)) for reason in review.reasons]
    if suspect_attempts:
        found.append(("user_review.suspect_attempts", str(suspect_attempts)))
    return found


def _suite(parent: ET.Element, name: str, verdicts: Sequence[Outcome], properties: Sequence[tuple[str, str]], **attrs: str) -> ET.Element:
    counts = Counts(verdicts)
    suite = ET.SubElement(
        parent,
        "testsuite",
        name=_clean(name),
        tests=str(counts.total),
        failures=str(counts.failed),
        errors=str(counts.errored),
        skipped=str(counts.suspect),
        **{k: _clean(v) for k, v in attrs.items()},  # type: ignore[arg-type]  # attributes, which the stubs also match to `attrib`
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


def _document(root: ET.Element, verdicts: Sequence[Outcome], time: float | None) -> str:
    counts = Counts(verdicts)
    root.set("tests", str(counts.total))
    root.set("failures", str(counts.failed))
    root.set("errors", str(counts.errored))
    if counts.suspect:
        root.set("skipped", str(counts.suspect))
    if time is not None:
        root.set("time", _time(time))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render_junit(batch: BatchResult) -> str:
    """`junit.xml` of a batch of runs: a suite per scenario, a test case per run."""
    root = ET.Element("testsuites", name="dialogcheck")
    by_slug: dict[str, list[RunResult]] = {}
    for run in batch.runs:
        by_slug.setdefault(run.slug, []).append(run)
    never: dict[str, list[int]] = {}
    for slug, number in batch.unfinished:
        never.setdefault(slug, []).append(number)
    stamp = {"timestamp": batch.started} if batch.started else {}
    for slug in [*by_slug, *(slug for slug in never if slug not in by_slug)]:
        group, missing = by_slug.get(slug, []), never.get(slug, [])
        scenario = group[0].scenario if group else None
        props = _properties("scenario", scenario.name or slug, scenario.type, scenario.tags, scenario.path) if scenario is not None else []
        time = sum(round(run.duration, 4) for run in group)
        suite = _suite(root, slug, [run.verdict for run in group] + [Outcome.ERROR] * len(missing), props, time=_time(time), **stamp)
        for run in group:
            _testcase(
                suite, f"run_{run.number}", slug, run.checks(), run.verdict,
                time=round(run.duration, 4), error=run.error, transcript=run.transcript, whole_in=f"run_{run.number}.events.jsonl",
                review=run.user_review, suspect_attempts=run.suspect_attempts,
                properties=[("persona", run.persona)] if run.persona is not None else (),
            )
        for number in missing:  # planned and never finished: it decided nothing, so no CI reads it as passed
            _testcase(suite, f"run_{number}", slug, (), Outcome.ERROR, error="planned, never finished: finish the batch with dialogcheck run --resume")
    verdicts = [run.verdict for run in batch.runs] + [Outcome.ERROR] * len(batch.unfinished)
    return _document(root, verdicts, sum(round(run.duration, 4) for run in batch.runs))


def render_junit_check(results: Sequence[ConversationResult], subject: Any = None) -> str:
    """JUnit for `dialogcheck check`: a suite per scenario or SOP, a test case per conversation.

    `subject` (the scenario, SOP or set of scenarios checked against) adds each suite's type, tags and
    path as properties; without it (a `check --output` folder read back) suites are named by the results.
    """
    root = ET.Element("testsuites", name="dialogcheck check")
    grouped: dict[str, list[ConversationResult]] = {}
    for result in results:  # with several scenarios, a suite each (by slug: two may share a name)
        grouped.setdefault(result.scenario or result.subject, []).append(result)
    several = getattr(subject, "scenarios", None)  # a ScenarioSet: each suite's scenario by slug
    kind = "sop" if subject is not None and not hasattr(subject, "goals") and several is None else "scenario"
    for group, cases in grouped.items():
        one = several[group] if several is not None else subject
        name = getattr(one, "name", group) if several is not None else group
        props = _properties(kind, name, getattr(one, "type", None), tuple(getattr(one, "tags", ()) or ()), getattr(one, "path", None))
        key = getattr(one, "slug", None) or getattr(one, "id", None) or name
        suite = _suite(root, key, [case.verdict for case in cases], props)
        for case in cases:
            label = case.source + (f" ({case.conversation_id})" if case.conversation_id else "")
            _testcase(suite, label, key, case.checks(), case.verdict, review=case.user_review)
    return _document(root, [case.verdict for cases in grouped.values() for case in cases], None)
