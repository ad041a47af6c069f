"""Run a batch of simulated conversations with a bounded number in flight.

Each run is simulated, then judged, within its time limit. A run that breaks
for a harness reason (agent down or unreadable, simulator or judge error,
time limit) is **errored**: recorded with the reason, counted apart from a
failed run, never lost. `on_finished` sees every run the moment it ends, so
the results folder grows as the batch goes.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..checks.base import Outcome
from ..connectors.base import AgentConnector, AgentError, describe, safe_text
from ..evaluate import evaluate_async
from ..events.parse import EventFieldError, conversation_from_dicts
from ..judge.base import Judge
from ..llm.base import LLMError
from ..results.model import RunRecord
from ..scenario.model import Scenario
from ..simulate.loop import SimulatedConversation, simulate
from ..simulate.user import SimulatedUser


@dataclass(frozen=True)
class RunSpec:
    scenario: Scenario
    number: int


@dataclass(frozen=True)
class BatchSettings:
    parallel: int = 4
    #: Seconds a whole run (simulation and judging) may take.
    time_limit: float = 300.0
    no_judge: bool = False
    metrics: tuple[str, ...] = ()


def _harness_error(err: BaseException, time_limit: float) -> str:
    if isinstance(err, TimeoutError):
        return f"time limit of {time_limit:g} s reached"
    if isinstance(err, AgentError):
        return f"agent: {err}"
    if isinstance(err, LLMError):
        return f"simulated user: {err}"
    if isinstance(err, EventFieldError):
        return f"the agent recorded an invalid event: {err}"
    return f"the harness crashed: {describe(err)}"


async def run_one(
    spec: RunSpec,
    agent: AgentConnector,
    make_user: Callable[[Scenario], SimulatedUser],
    judge: Judge | None,
    settings: BatchSettings,
) -> RunRecord:
    scenario = spec.scenario
    record = SimulatedConversation(f"sim-{uuid.uuid4()}")
    started = time.perf_counter()
    result, error = None, None
    try:
        async with asyncio.timeout(settings.time_limit):
            await simulate(scenario, agent, make_user(scenario), record)
            conversation = conversation_from_dicts(record.events, f"{scenario.slug}/run_{spec.number}", record.conversation_id)
            result = await evaluate_async(
                scenario, conversation, judge=judge, no_judge=settings.no_judge, metrics=settings.metrics
            )
    except Exception as err:  # noqa: BLE001 - every harness failure becomes an errored run
        error = safe_text(_harness_error(err, settings.time_limit))
    return RunRecord(
        slug=scenario.slug,
        number=spec.number,
        scenario_name=scenario.name,
        scenario_path=scenario.path,
        verdict=Outcome.ERROR if error else result.verdict,
        result=result,
        error=error,
        conversation_id=record.conversation_id,
        events=record.events,
        transcript=record.transcript,
        latencies=record.latencies,
        ended_because=record.ended_because,
        duration=time.perf_counter() - started,
        scenario_type=scenario.type,
        tags=scenario.tags,
    )


async def run_batch(
    specs: Sequence[RunSpec],
    agent: AgentConnector,
    make_user: Callable[[Scenario], SimulatedUser],
    judge: Judge | None,
    settings: BatchSettings,
    on_finished: Callable[[RunRecord], None] = lambda record: None,
) -> list[RunRecord]:
    """Every run of `specs`, at most `settings.parallel` at once, in plan order."""
    gate = asyncio.Semaphore(settings.parallel)

    async def one(spec: RunSpec) -> RunRecord:
        async with gate:
            record = await run_one(spec, agent, make_user, judge, settings)
        on_finished(record)
        return record

    return list(await asyncio.gather(*(one(spec) for spec in specs)))
