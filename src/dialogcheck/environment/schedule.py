"""Which fault hits which call of a run: a schedule drawn from the run's seed, the same on every machine.

A run's seed is a SHA-256 of the batch's seed and the run's place in the plan (scenario, repeat, persona),
never Python's `hash()`, which is salted per process. Each fault with a `rate` draws from its own
`random.Random`, seeded from the run's seed and the fault's place in the file, one number for each call that
meets its other conditions: whether it fires depends only on the calls of its own tool, never on how the
agent interleaves calls of other tools.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from .faults import Fault


def stable_seed(*parts: Any) -> int:
    """A 64-bit integer from JSON-typed `parts`, the same in every process and on every machine."""
    digest = hashlib.sha256(orjson.dumps(list(parts))).digest()
    return int.from_bytes(digest[:8], "big")


def run_seed(batch_seed: int | None, scenario: str, repeat: int, persona: str | None = None) -> int:
    """The seed of one run's faults: the batch's seed (`simulation.seed`, `--seed`; none reads as 0), the scenario's
    slug, the repeat's number and the persona trait it plays. Repeats meet different faults; a rerun the same."""
    return stable_seed("dialogcheck-environment", 0 if batch_seed is None else batch_seed, scenario, repeat, persona)


class Schedule:
    """The faults of one run, deciding call by call which one (if any) hits it. Not shared between runs."""

    def __init__(self, faults: Sequence[Fault], seed: int, enabled: bool = True):
        self.faults = tuple(faults) if enabled else ()
        self._draws = {f.index: random.Random(stable_seed(seed, f.index)) for f in self.faults if f.when.rate is not None}

    def fault_for(self, tool: str, call_number: int, arguments: Mapping[str, Any]) -> Fault | None:
        """The first fault, in file order, that fires on this call of `tool` (its `call_number`-th in the run).

        Every fault of the tool that the call meets draws its number, whether or not an earlier one fired, so
        one fault's draws never shift another's.
        """
        hit = None
        for fault in self.faults:
            if fault.tool != tool or not fault.when.eligible(call_number, arguments):
                continue
            rate = fault.when.rate
            fires = rate is None or self._draws[fault.index].random() < rate
            if fires and hit is None:
                hit = fault
        return hit


__all__ = ["Schedule", "run_seed", "stable_seed"]
