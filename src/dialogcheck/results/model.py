"""A finished run as plain data, and the statistics of a batch (pass rate, pass^k, flaky scenarios)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

from ..checks.base import Outcome


@dataclass(frozen=True)
class RunRecord:
    """One run of one scenario: its verdict and everything needed to read or re-judge it.

    `verdict` is ERROR for a harness failure (`error` says which); `result` is
    the judged conversation (a ConversationResult) when the run got that far.
    """

    slug: str
    number: int
    scenario_name: str
    scenario_path: str
    verdict: Outcome
    result: Any = None
    error: str | None = None
    conversation_id: str | None = None
    events: Sequence[Mapping[str, Any]] = field(default=())
    transcript: Sequence[tuple[str, str]] = field(default=())
    latencies: Sequence[float] = field(default=())
    ended_because: str | None = None
    duration: float = 0.0
    scenario_type: str | None = None
    tags: Sequence[str] = field(default=())


#: pass^k is reported for k up to this many runs (a summary line stays readable).
MAX_K = 8


def pass_hat_k(passes: int, runs: int, k: int) -> float | None:
    """The chance that k runs drawn from these all pass: C(c, k) / C(n, k) (tau-bench's pass^k)."""
    if runs < k or runs == 0:
        return None
    return comb(passes, k) / comb(runs, k)


@dataclass(frozen=True)
class ScenarioStats:
    slug: str
    name: str
    runs: int
    passed: int
    failed: int
    errored: int

    @property
    def judged(self) -> int:
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        """Passed over judged runs; errored runs say nothing about the agent and are counted apart."""
        return self.passed / self.judged if self.judged else None

    @property
    def flaky(self) -> bool:
        return self.passed > 0 and self.failed > 0

    def pass_hat(self, most: int = MAX_K) -> dict[int, float | None]:
        """pass^1 .. pass^min(n, most), by a running product: C(c,k)/C(n,k) = prod (c-i)/(n-i), i < k."""
        values: dict[int, float | None] = {}
        product = 1.0
        for k in range(1, min(self.judged, most) + 1):
            product *= max(self.passed - (k - 1), 0) / (self.judged - (k - 1))
            values[k] = product
        return values


def scenario_stats(runs: Sequence[Mapping[str, Any]]) -> list[ScenarioStats]:
    """Per scenario, in the order the scenarios first appear, from run documents (`run_N.json`)."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        grouped.setdefault(run["scenario"]["slug"], []).append(run)
    stats = []
    for slug, group in grouped.items():
        verdicts = [run["verdict"] for run in group]
        stats.append(
            ScenarioStats(
                slug,
                group[0]["scenario"]["name"],
                len(group),
                verdicts.count("pass"),
                verdicts.count("fail"),
                verdicts.count("error"),
            )
        )
    return stats
