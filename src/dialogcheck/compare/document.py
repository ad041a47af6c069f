"""`compare --format json`: a `Comparison` as one JSON document, `verdict` and `p_value` at the top.

`comparison_document` is the document as a dict (for the library and the MCP
server); `comparison_json` writes the same document in pieces, every key on a
line of its own after the rest, so printing a hundred thousand keys never
holds them all as dicts at once. A faulted batch against its baseline adds
`robustness` (`robustness_document`) after the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from .model import CheckFlips, CheckId, Comparison, KeyChange, Rate, RateRatio, Robustness, SideSummary

#: Keys encoded into one piece of `comparison_json`.
_KEYS_A_PIECE = 1000


def comparison_document(comparison: Comparison) -> dict[str, Any]:
    """Everything `compare` concluded: the verdict, the test, every check that flipped, every key."""
    return _head(comparison) | {"keys": [_key(key) for key in comparison.keys]}


def comparison_json(comparison: Comparison) -> Iterator[str]:
    """`comparison_document` as JSON text in pieces: the rest indented, then `"keys"`, one key a line."""
    head = orjson.dumps(_head(comparison), option=orjson.OPT_INDENT_2).decode()
    yield head[: -len("\n}")] + ',\n  "keys": ['
    keys = comparison.keys
    for start in range(0, len(keys), _KEYS_A_PIECE):
        lines = (orjson.dumps(_key(key)).decode() for key in keys[start : start + _KEYS_A_PIECE])
        yield ("," if start else "") + "\n" + ",\n".join(lines)
    yield "\n  ]\n}\n"


def _head(comparison: Comparison) -> dict[str, Any]:
    head = {
        "verdict": comparison.verdict.value,
        "p_value": comparison.p_value,
        "test": comparison.test,
        "alpha": comparison.alpha,
        "change": comparison.change,
        "interval": _pair(comparison.interval),
        "match": comparison.match,
        "base": _side(comparison.base),
        "new": _side(comparison.new),
        "statuses": {status.value: n for status, n in comparison.status_counts().items()},
        "judge_flips": comparison.judge_flips,
        "checks": [_flips(flips) for flips in comparison.checks],
        "noisy": [key.key for key in comparison.noisy],
        "only_base": list(comparison.only_base),
        "only_new": list(comparison.only_new),
        "not_judged": list(comparison.not_judged),
    }
    if comparison.robustness is not None:  # only a faulted batch against its baseline has it
        head["robustness"] = robustness_document(comparison.robustness)
    return head


def _pair(values: tuple[float, float] | None) -> list[float] | None:
    return list(values) if values is not None else None


def _side(side: SideSummary) -> dict[str, Any]:
    document = {"source": side.source, "form": side.form, "runs": side.runs, "keys": side.keys, "errored": side.errored, "pass_rate": side.pass_rate}
    if side.unfinished:  # a batch cut short: what it planned and never finished
        document |= {"planned_runs": side.planned, "unfinished_runs": [{"slug": slug, "run": number} for slug, number in side.unfinished]}
    return document


def _rate(rate: Rate) -> dict[str, Any]:
    return {"passed": rate.passed, "judged": rate.judged, "errored": rate.errored, "pass_rate": rate.value}


def _key(key: KeyChange) -> dict[str, Any]:
    return {
        "key": key.key,
        "status": key.status.value,
        "base": _rate(key.base),
        "new": _rate(key.new),
        "change": key.change,
        "interval": list(key.interval),
        "noisy": key.noisy,
        "broke": [check.title for check in key.broke],
        "mended": [check.title for check in key.mended],
    }


def check_document(check: CheckId) -> dict[str, Any]:
    """`kind`, `subject`, `label`, `index` (assertions, criteria) or `id` (SOP steps), `title`, and whether the judge decides it."""
    document: dict[str, Any] = {"kind": check.kind.value, "subject": check.subject, "label": check.label}
    if check.id is not None:
        document["id"] = check.id
    else:
        document["index"] = check.index
    return document | {"title": check.title, "judge": check.judged}


def _flips(flips: CheckFlips) -> dict[str, Any]:
    return check_document(flips.check) | {
        "pass_to_fail": flips.pass_to_fail,
        "fail_to_pass": flips.fail_to_pass,
        "examples": {"pass_to_fail": list(flips.examples_pass_to_fail), "fail_to_pass": list(flips.examples_fail_to_pass)},
    }


def robustness_document(robustness: Robustness) -> dict[str, Any]:
    """`robustness`: which side was faulted, the confidence of the intervals, the overall, per-kind and per-key
    ratios, and what was left out."""
    return {
        "faulted": robustness.faulted,
        "confidence": robustness.confidence,
        "overall": _ratio(robustness.overall) if robustness.overall is not None else None,
        "kinds": [{"kind": kind.kind} | _ratio(kind.ratio) for kind in robustness.kinds],
        "keys": [{"key": key.key} | _ratio(key.ratio) for key in robustness.keys],
        "met_no_fault": robustness.met_no_fault,
        "unpaired": list(robustness.unpaired),
        "without_environment": list(robustness.without_environment),
        "not_judged": list(robustness.not_judged),
    }


def _ratio(ratio: RateRatio) -> dict[str, Any]:
    """Both rates (a rate of no judged run is null), the ratio and its interval (null when undefined), the keys."""
    return {
        "faulted": _rate(ratio.faulted) if ratio.faulted.judged else None,
        "baseline": _rate(ratio.baseline) if ratio.baseline.judged else None,
        "ratio": ratio.ratio,
        "interval": _pair(ratio.interval),
        "keys": ratio.keys,
    }
