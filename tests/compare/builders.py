"""Results documents as `dialogcheck check --format json` writes them, built from short descriptions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson


def document(
    cid: str | None,
    verdict: str,
    assertions: Sequence[tuple[str, str]] = (),
    sop: Sequence[tuple[str, str, str]] = (),
    criteria: Sequence[tuple[str, str]] = (),
    subject: str = "Scenario",
    source: str | None = None,
) -> dict:
    """One conversation's result: `assertions` as (label, outcome), `sop` as (id, type, outcome), `criteria` as (text, outcome)."""
    data: dict = {"source": source or f"log.jsonl#{cid}", "verdict": verdict, "subject": subject}
    if cid is not None:
        data["conversation_id"] = cid
    data["assertions"] = [
        {"index": i, "key": label.split()[0], "label": label, "passed": outcome == "pass", "outcome": outcome, "detail": "why", "evidence": []}
        for i, (label, outcome) in enumerate(assertions, 1)
    ]
    data["sop"] = [
        {"id": step, "type": kind, "label": None, "required": True, "weight": 1.0, "outcome": outcome, "detail": "why", "evidence": []}
        for step, kind, outcome in sop
    ]
    if sop:
        data["sop_outcome"] = "fail" if any(o == "fail" for _, _, o in sop) else "pass"
        data["sop_score"] = 1.0
    data["criteria"] = [{"criterion": text, "outcome": outcome, "detail": "why"} for text, outcome in criteria]
    return data


def batch_bytes(documents: Iterable[dict]) -> bytes:
    """`check --format json` of several conversations: `{"conversations": [`, a conversation a line, `], "summary": ...}`."""
    docs = list(documents)
    counts = {v: sum(d["verdict"] == v for d in docs) for v in ("pass", "fail", "error")}
    summary = {"conversations": len(docs), "passed": counts["pass"], "failed": counts["fail"], "errored": counts["error"]}
    return b'{"conversations": [\n' + b",\n".join(orjson.dumps(d) for d in docs) + b'\n], "summary": ' + orjson.dumps(summary) + b"}\n"


def write_batch(path: Path, documents: Iterable[dict]) -> Path:
    path.write_bytes(batch_bytes(documents))
    return path


def simple(cid: str, verdict: str, subject: str = "Scenario") -> dict:
    """A conversation with one assertion whose outcome is the verdict."""
    return document(cid, verdict, [("skill_completed card_replace", verdict)], subject=subject)
