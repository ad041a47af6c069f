"""`compare --format text`: the verdict first, then what moved, readable however many keys there are.

Under a significant verdict, how many keys moved its way and with which
status, so the change is traced to its keys. Lists (keys that regressed, that
were fixed, that are too noisy to call, those that moved the verdict's way
first; checks that flipped) show at most `max_rows` entries each and say how
many more `--format json` and
`--html` hold. A faulted batch against its baseline ends with its robustness:
the overall ratio, each kind of fault, and the keys with the lowest ratios.
Keys, labels, sources and fault kinds come from files: they go through
`_shown.shown`, so none can forge a line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .._shown import counted, shown
from ..compare.model import NEW, RUN_FOLDER, STATUS_ORDER, CheckFlips, Comparison, KeyChange, RateRatio, Robustness, SideSummary, Status, Verdict
from ..results.model import unfinished_text
from .styled import Styled

MAX_ROWS = 20
#: Characters of a key's column (a longer key makes its row wider, never cut).
_KEY_WIDTH = 24

_VERDICT_STYLES = {Verdict.REGRESSED: "bold red", Verdict.IMPROVED: "bold green", Verdict.NO_CHANGE: "bold"}
_STATUS_STYLES = {Status.REGRESSED: "red", Status.FIXED: "green", Status.FLAKY: "yellow", Status.STILL_FAILING: "", Status.STILL_PASSING: ""}
_TESTS = {
    "mcnemar": "exact McNemar test (one judged run a side at every key)",
    "permutation": "paired permutation test on per-key pass rates",
    "none": "no test (no key has judged runs on both sides)",
}


def points(value: float) -> str:
    """A change of pass rate in percentage points: `+12.5`, `-3.0`, `+0.0`."""
    return f"{value * 100:+.1f}"


def interval_text(interval: tuple[float, float] | None) -> str:
    return "n/a" if interval is None else f"{points(interval[0])} to {points(interval[1])}"


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def p_text(p_value: float) -> str:
    return f"{p_value:.3g}"


def _side_line(name: str, side: SideSummary) -> str:
    noun = "run" if side.form == RUN_FOLDER else "conversation"
    line = f"{name:<5}{shown(side.source)} ({side.form}): {counted(side.runs, noun)}, {counted(side.keys, 'key')}\n"
    if side.unfinished:
        line += f"     unfinished: {unfinished_text(side.unfinished, side.planned)}\n"
    return line


def render_comparison(comparison: Comparison, max_rows: int = MAX_ROWS) -> Styled:
    text = Styled()
    text.append(_side_line("BASE", comparison.base))
    text.append(_side_line("NEW", comparison.new))
    if comparison.match:
        text.append(f"keys: what --match /{shown(comparison.match)}/ captures\n", "dim")
    _overall(text, comparison)
    counts = comparison.status_counts()
    text.append("\nkeys: " + ", ".join(f"{counts[status]:,} {status}" for status in STATUS_ORDER) + "\n")
    for status in (Status.REGRESSED, Status.FIXED):
        _key_list(text, f"{status}", comparison.by_status(status), max_rows, _STATUS_STYLES[status])
    noisy = _drivers_first(comparison.noisy, comparison)
    if noisy:
        _key_list(text, "too noisy to call (flaky, and the interval of the change spans zero)", noisy, max_rows, "yellow")
    _checks(text, comparison.checks, max_rows)
    _left_out(text, comparison)
    if comparison.robustness is not None:
        _robustness(text, comparison.robustness, max_rows)
    return text


def _overall(text: Styled, comparison: Comparison) -> None:
    compared = len(comparison.keys)
    text.append(
        f"\npass rate {percent(comparison.base.pass_rate)} -> {percent(comparison.new.pass_rate)}: "
        f"{points(comparison.change)} points (95% interval {interval_text(comparison.interval)}) over {counted(compared, 'key')}\n"
    )
    text.append(f"{_TESTS[comparison.test]}: p = {p_text(comparison.p_value)}\n")
    text.append("verdict: ")
    text.append(comparison.verdict.value, _VERDICT_STYLES[comparison.verdict])
    text.append(f" (alpha {comparison.alpha:g})\n")
    drivers = comparison.drivers
    if drivers:
        way = "fell" if comparison.verdict is Verdict.REGRESSED else "rose"
        counts = Counter(key.status for key in drivers)
        statuses = ", ".join(f"{counts[status]:,} {status}" for status in STATUS_ORDER if counts[status])
        text.append(f"driven by the {counted(len(drivers), 'key')} whose pass rate {way} ({statuses}), listed below\n")


def _drivers_first(keys: Sequence[KeyChange], comparison: Comparison) -> list[KeyChange]:
    """The keys that moved the verdict's way first, most first; the rest after, in key order."""
    if comparison.verdict is Verdict.NO_CHANGE:
        return list(keys)
    sign = 1 if comparison.verdict is Verdict.REGRESSED else -1
    return sorted(keys, key=lambda key: min(sign * key.change, 0.0))


def _key_row(key: KeyChange, width: int) -> str:
    row = f"  {shown(key.key):<{width}} {key.base} -> {key.new}  {points(key.change)} points ({interval_text(key.interval)})"
    if key.broke:
        row += "  broke: " + "; ".join(shown(check.title) for check in key.broke[:3]) + (" ..." if len(key.broke) > 3 else "")
    if key.mended:
        row += "  mended: " + "; ".join(shown(check.title) for check in key.mended[:3]) + (" ..." if len(key.mended) > 3 else "")
    return row + "\n"


def _key_list(text: Styled, heading: str, keys: Sequence[KeyChange], max_rows: int, style: str) -> None:
    if not keys:
        return
    text.append(f"\n{heading} ({len(keys):,}):\n", style)
    shown_keys = keys[:max_rows]
    width = min(max((len(key.key) for key in shown_keys), default=0), _KEY_WIDTH)
    for key in shown_keys:
        text.append(_key_row(key, width))
    _more(text, len(keys) - len(shown_keys))


def _more(text: Styled, hidden: int) -> None:
    if hidden > 0:
        text.append(f"  {hidden:,} more: see --format json or --html\n", "dim")


def _checks(text: Styled, checks: Sequence[CheckFlips], max_rows: int) -> None:
    if not checks:
        text.append("\nno check flipped at any key\n")
        return
    several = len({flips.check.subject for flips in checks}) > 1
    text.append("\nchecks that flipped (keys where the check's pass rate fell, rose):\n")
    text.append("  fell  rose  check\n", "dim")
    for flips in checks[:max_rows]:
        check = flips.check
        where = f"{shown(check.subject)}: " if several else ""
        judge = " (judge flip)" if check.judged else ""
        text.append(f"  {flips.pass_to_fail:>4}  {flips.fail_to_pass:>4}  {where}{shown(check.title)}")
        text.append(judge + "\n", "yellow")
    _more(text, len(checks) - max_rows)
    judged = sum(flips.pass_to_fail + flips.fail_to_pass for flips in checks if flips.check.judged)
    if judged:
        text.append(
            f"{counted(judged, 'flip')} of LLM-judged checks (criteria, llm_judge steps): judge flips, which may be the judge's noise as much as the agent's change\n",
            "yellow",
        )


def _some(keys: Sequence[str]) -> str:
    """The first five keys, and `...` when there are more."""
    return ", ".join(shown(key) for key in keys[:5]) + (", ..." if len(keys) > 5 else "")


def _left_out(text: Styled, comparison: Comparison) -> None:
    base, new = comparison.base.errored, comparison.new.errored
    if base or new:
        text.append(f"\nerrored runs, left out of the pass rates: {base} in BASE, {new} in NEW\n", "yellow")
    for label, keys in (
        ("only in BASE", comparison.only_base),
        ("only in NEW", comparison.only_new),
        ("not compared (every run errored on a side)", comparison.not_judged),
    ):
        if keys:
            text.append(f"{label}: {counted(len(keys), 'key')} ({_some(keys)})\n", "dim")


def confidence_text(confidence: float) -> str:
    """`95%`, `99%`, `97.5%`: the confidence of an interval, from 1 - alpha."""
    return f"{round(confidence * 100, 6):g}%"


def ratio_text(ratio: RateRatio) -> str:
    """`0.78`, or why there is no ratio: no baseline run passed, or every faulted run of it errored."""
    if ratio.ratio is not None:
        return f"{ratio.ratio:.2f}"
    return "undefined (no baseline run passed)" if ratio.faulted.judged else "undefined (every run under faults errored)"


def ratio_interval_text(interval: tuple[float, float] | None) -> str:
    return "n/a" if interval is None else f"{interval[0]:.2f} to {interval[1]:.2f}"


def _ratio_row(ratio: RateRatio, confidence: str = "") -> str:
    """`1/4 over 9/10 = 0.28 (0.05 to 0.84)`, or `1/1 over 0/3  undefined (...)`; `confidence` names the interval."""
    rates = f"{ratio.faulted} over {ratio.baseline}"
    if ratio.ratio is None:
        return f"{rates}  {ratio_text(ratio)}"
    named = f"{confidence} interval " if confidence else ""
    return f"{rates} = {ratio_text(ratio)} ({named}{ratio_interval_text(ratio.interval)})"


def _robustness(text: Styled, robustness: Robustness, max_rows: int) -> None:
    faulted, baseline = ("NEW", "BASE") if robustness.faulted == NEW else ("BASE", "NEW")
    text.append(f"\nrobustness ({faulted} ran with faults on, {baseline} with them off; errored runs left out):\n", "bold")
    overall = robustness.overall
    if overall is None:
        text.append("  no key ran with an environment on both sides with a judged run on each\n")
    else:
        row = _ratio_row(overall, confidence_text(robustness.confidence))
        text.append(f"  pass rate under faults over without: {row} over {counted(overall.keys, 'key')}\n")
    if robustness.kinds:
        text.append("  by fault kind (runs that met it, against the baseline runs of the same keys):\n")
        width = min(max(len(kind.kind) for kind in robustness.kinds), _KEY_WIDTH)
        for kind in robustness.kinds:
            text.append(f"    {shown(kind.kind):<{width}}  {_ratio_row(kind.ratio)}, {counted(kind.ratio.keys, 'key')}\n")
    if robustness.keys:
        text.append("  keys, worst first:\n")
        rows = robustness.keys[:max_rows]
        width = min(max((len(key.key) for key in rows), default=0), _KEY_WIDTH)
        for key in rows:
            text.append(f"    {shown(key.key):<{width}}  {_ratio_row(key.ratio)}\n")
        if len(robustness.keys) > len(rows):
            text.append(f"    {len(robustness.keys) - len(rows):,} more: see --format json or --html\n", "dim")
    if robustness.met_no_fault:
        text.append(f"  {counted(robustness.met_no_fault, 'run')} under faults met no fault: counted in the overall and per-key figures only\n", "dim")
    left_out = [f"{counted(len(keys), 'key')} {why} ({_some(keys)})" for why, keys in robustness.left_out()]
    if left_out:
        text.append("  left out: " + "; ".join(left_out) + "\n", "dim")
