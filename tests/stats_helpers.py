"""`summary.checks` computed the slow way, from the per-conversation results it must agree with."""

from __future__ import annotations

EXAMPLES = 3


def _lines(conversation: dict) -> list[tuple[dict, str]]:
    """(identity and label, outcome) of every check of one conversation's JSON document, in report order."""
    lines = [({"kind": "assertion", "label": a["label"], "index": a["index"]}, a["outcome"]) for a in conversation.get("assertions", [])]
    for step in conversation.get("sop", []):
        optional = "" if step.get("required", True) else " (optional)"
        lines.append(({"kind": "sop", "label": f"{step['id']} {step.get('label') or step['type']}{optional}", "id": step["id"]}, step["outcome"]))
    for i, criterion in enumerate(conversation.get("criteria", []), 1):
        lines.append(({"kind": "criterion", "label": f"criterion {criterion['criterion']!r}", "index": i}, criterion["outcome"]))
    return lines


def per_check_stats(conversations: list[dict], name=lambda c: c["source"]) -> list[dict]:
    """Each check's counts, failure rate and first failing examples, in the order first met."""
    rows: dict[tuple, dict] = {}
    for conversation in conversations:
        scenario = {"scenario": conversation["scenario"]} if conversation.get("scenario") else {}
        for identity, outcome in _lines(conversation):
            key = (scenario.get("scenario"), identity["kind"], identity.get("index"), identity.get("id"))
            if key not in rows:
                first = {"kind": identity["kind"], "label": identity["label"]} | scenario
                rows[key] = first | {k: identity[k] for k in ("index", "id") if k in identity} | dict.fromkeys(("pass", "fail", "skip", "error"), 0) | {"examples": []}
            row = rows[key]
            row[outcome] += 1
            if outcome == "fail" and len(row["examples"]) < EXAMPLES:
                row["examples"].append(name(conversation))
    for row in rows.values():
        decided = row["pass"] + row["fail"]
        examples = row.pop("examples")
        row["failure_rate"] = row["fail"] / decided if decided else None
        row["examples"] = examples
    return list(rows.values())


def verdict_counts(summary: dict) -> dict:
    """The four verdict counts of a `check` summary, without its per-check rows."""
    return {k: summary[k] for k in ("conversations", "passed", "failed", "errored")}
