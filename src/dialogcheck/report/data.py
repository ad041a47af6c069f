"""Result data as plain JSON-ready dicts: the one shape JSON output and later reports share.

A check's detail can quote outside text (a judge's rationale, an agent's error): each is cut to
`_shown.TEXT_LIMIT` characters here, so every report made from these dicts is bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._shown import cut
from ..checks.base import Outcome
from ..evaluate import ConversationResult


def conversation_dict(result: ConversationResult, *, with_source: bool = False) -> dict[str, Any]:
    """The `check --format json` shape of SPEC section 9 for one conversation.

    Outcomes are read as `_value_`, the enum's stored value: `.value` is a Python-level descriptor, one call per check.
    """
    data: dict[str, Any] = {}
    if with_source:
        data["source"] = result.source
    data["verdict"] = result.verdict._value_
    data["subject"] = result.subject
    if result.scenario is not None:  # one of several scenarios: its slug, which pairs conversations with it
        data["scenario"] = result.scenario
    if result.conversation_id is not None:
        data["conversation_id"] = result.conversation_id
    data["assertions"] = [
        {
            "index": i,
            "key": r.check.key,
            "label": r.check.label,
            "passed": r.passed,
            "outcome": r.outcome._value_,
            "detail": cut(r.detail),
            "evidence": list(r.evidence),
        }
        for i, r in enumerate(result.assertions, 1)
    ]
    data["sop"] = []
    if result.sop is not None:
        data["sop"] = [
            {
                "id": s.step.id,
                "type": s.result.check.key,
                "label": s.step.label,
                "required": s.step.required,
                "weight": s.step.weight,
                "outcome": s.result.outcome._value_,
                "detail": cut(s.result.detail),
                "evidence": list(s.result.evidence),
            }
            for s in result.sop.results
        ]
        data["sop_outcome"] = result.sop.outcome._value_
        data["sop_score"] = result.sop.score
    data["criteria"] = [
        {"criterion": c.criterion, "outcome": c.outcome._value_, "detail": cut(c.detail)}
        | ({"usage": c.usage.to_dict()} if c.usage is not None else {})
        for c in result.criteria
    ]
    if result.metrics is not None:
        data["metrics"] = dict(result.metrics)
    if result.usage is not None:
        data["usage"] = result.usage.to_dict()
    if result.notes:
        data["notes"] = list(result.notes)
    return data


def tally(verdicts: Sequence[Outcome]) -> dict[str, int]:
    """How many conversations passed, failed and errored."""
    counts = {"conversations": len(verdicts), "passed": 0, "failed": 0, "errored": 0}
    names = {Outcome.PASS: "passed", Outcome.FAIL: "failed", Outcome.ERROR: "errored"}
    for verdict in verdicts:
        counts[names[verdict]] += 1
    return counts


def check_document(results: Sequence[ConversationResult]) -> dict[str, Any]:
    """One conversation: its dict; several: `{"conversations": [...], "summary": {...}}`."""
    if len(results) == 1:
        return conversation_dict(results[0], with_source=True)
    return {"conversations": [conversation_dict(r, with_source=True) for r in results], "summary": tally([r.verdict for r in results])}
