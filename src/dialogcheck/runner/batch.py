"""Run a batch of simulated conversations with a bounded number in flight.

Each run is simulated, then judged, within its time limit. A run that breaks
for a harness reason (agent down or unreadable, simulator or judge error,
time limit) is **errored**: recorded with the reason, counted apart from a
failed run, never lost. `on_finished` sees every run the moment it ends, so
the results folder grows as the batch goes.

Once a simulation ends its simulated user is reviewed (`review.RunReviewer`);
a run whose user is suspect is `suspect`, neither a pass nor the agent's
failure, and is run again up to `retry_suspect` times (the last attempt is
kept, with how many attempts were suspect).
"""

from __future__ import annotations

import asyncio
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from .._redact import redact
from ..blame import RunError, blame, localised, tested_faults
from ..checks.base import Outcome
from ..connectors.base import AgentConnector, AgentError, describe, safe_text
from ..events.parse import EventFieldError
from ..judge.base import Judge
from ..judging import evaluate_async
from ..llm.base import LLMError
from ..results.model import Crash, RunResult, ScenarioInfo
from ..scenario.model import Scenario
from ..simulate.loop import SimulatedConversation, simulate
from ..simulate.user import LLMUser, ScriptedUser, SimulatedUser
from .review import RunReviewer
from .world import RunWorld, Server


@dataclass(frozen=True)
class RunSpec:
    scenario: Scenario
    number: int
    #: The persona trait an LLM user plays on this run (a persona matrix), if any.
    persona: str | None = None
    #: The LLM user's sampling seed on this run, if one was given.
    seed: int | None = None
    #: Which attempt of the run this is: 0, or the retry of a run whose simulated user was suspect.
    attempt: int = 0
    #: Which repeat of the scenario the run is (`--runs`): an LLM user asks each repeat apart.
    repeat: int = 1
    #: The batch's seed (the plan's), which the run's environment draws its faults from with the run's place.
    batch_seed: int | None = None


@dataclass(frozen=True)
class BatchSettings:
    parallel: int = 4
    #: Seconds a whole run (simulation and judging) may take.
    time_limit: float = 300.0
    no_judge: bool = False
    metrics: tuple[str, ...] = ()
    #: How many more times a run whose simulated user is suspect is run (`--retry-suspect`).
    retry_suspect: int = 1
    #: Whether the environments' fault schedules are on (`run --faults on|off`).
    faults: bool = True
    #: Whose fault a run that did not pass was (`run --blame`): `evidence` (the default), `llm` (the evidence, then the
    #: judge's localiser where it placed nothing), or `off`.
    blame: str = "evidence"


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


def _crash(err: BaseException) -> Crash | None:
    """The exception of code that broke the run (an agent's own, or the harness's), kept whole; None for a peer's failure."""
    if isinstance(err, AgentError):
        err = err.__cause__  # type: ignore[assignment]  # an agent that raised: its own exception, always the cause
    elif isinstance(err, (TimeoutError, LLMError, EventFieldError)):
        return None
    if err is None:
        return None
    trace = "".join(traceback.format_exception(err))
    return Crash(type(err).__name__, safe_text(str(err)), safe_text(trace))


async def run_one(
    spec: RunSpec,
    agent: AgentConnector,
    make_user: Callable[[Scenario], SimulatedUser],
    judge: Judge | None,
    settings: BatchSettings,
    reviewer: RunReviewer | None = None,
    server: Server | None = None,
) -> RunResult:
    """One attempt of a run: simulated, its user reviewed (unless scripted), judged; errored on a harness failure.

    A scenario with an environment gets the run's own (`RunWorld`), served by `server` when there is one."""
    scenario = spec.scenario
    simulated = SimulatedConversation(f"sim-{uuid.uuid4()}")
    source = f"{scenario.slug}/run_{spec.number}"
    started = time.perf_counter()
    result = record = error = crash = review = played = world = environment = None
    agent_failed = False
    try:
        async with asyncio.timeout(settings.time_limit):
            if scenario.environment is not None:
                world = RunWorld.start(
                    scenario.environment, simulated.conversation_id, batch_seed=spec.batch_seed, scenario=scenario.slug,
                    repeat=spec.repeat, persona=spec.persona, faults_on=settings.faults, server=server,
                )
            user = make_user(scenario)
            if isinstance(user, LLMUser):
                user = played = user.for_run(spec.persona, spec.seed, spec.attempt, spec.repeat)
            await simulate(scenario, agent, user, simulated, world.run if world else None, world.handle if world else None)
            if world is not None:
                world.close()
                record, environment = world.record(simulated, source)
            else:
                record = simulated.conversation(source)
            if reviewer is not None and not isinstance(user, ScriptedUser):  # a script is the project's own words
                review = await reviewer.review(scenario, record, played.trait if played is not None else None)
            result = await evaluate_async(scenario, record, judge=judge, no_judge=settings.no_judge, metrics=settings.metrics)
    except Exception as err:  # noqa: BLE001 - every harness failure becomes an errored run
        error = redact(safe_text(_harness_error(err, settings.time_limit)))
        crash = _crash(err)
        agent_failed = isinstance(err, AgentError)
    if record is None:  # a run cut short: what it recorded until then
        if world is not None:
            world.close()
            record, environment = world.record(simulated, source)
        else:
            record = simulated.conversation(source)
    found = blame(
        record, result, review=review, error=RunError("agent" if agent_failed else "harness", error) if error else None,
        expected_faults=tested_faults(scenario), framework_tools=scenario.framework_tools,
    ) if settings.blame != "off" else None
    if settings.blame == "llm" and judge is not None and not settings.no_judge:
        asked = await localised(record, found, result, judge, scenario.framework_tools)
        found = asked.blame
        if result is not None:
            result = asked.counted(result)
    return RunResult(
        scenario=ScenarioInfo(scenario.slug, scenario.name, scenario.path, scenario.type, tuple(scenario.tags)),
        number=spec.number,
        verdict=Outcome.ERROR if error else Outcome.SUSPECT if review is not None and review.suspect else result.verdict,  # type: ignore[union-attr]  # a result unless an error
        conversation=result,
        error=error,
        crashes=((crash,) if crash else ()) + (result.crashes if result is not None else ()),
        conversation_id=simulated.conversation_id,
        ended_because=simulated.ended_because,
        duration=time.perf_counter() - started,
        latencies=tuple(simulated.latencies),
        transcript=tuple(simulated.transcript),
        events=record.raw_events,
        record=record,
        user_review=review,
        persona=played.trait if played is not None else None,
        simulator=played.info() if played is not None else None,
        environment=environment,
        blame=found,
    )


async def run_until_trusted(
    spec: RunSpec,
    agent: AgentConnector,
    make_user: Callable[[Scenario], SimulatedUser],
    judge: Judge | None,
    settings: BatchSettings,
    reviewer: RunReviewer | None = None,
    server: Server | None = None,
) -> RunResult:
    """A run, run again while its simulated user is suspect, at most `settings.retry_suspect` more times.

    The last attempt is the result; `suspect_attempts` says how many attempts were suspect. A retry is
    another sample of an LLM user (`RunSpec.attempt`): asked afresh, as a cached answer would only repeat
    the fault, and cached under its own key, so a rerun and `--replay` reproduce it.
    """
    run = await run_one(spec, agent, make_user, judge, settings, reviewer, server)
    suspect = 0
    while run.verdict is Outcome.SUSPECT:
        suspect += 1
        if suspect > settings.retry_suspect:
            break
        run = await run_one(replace(spec, attempt=suspect), agent, make_user, judge, settings, reviewer, server)
    return replace(run, suspect_attempts=suspect) if suspect else run


async def run_batch(
    specs: Sequence[RunSpec],
    agent: AgentConnector,
    make_user: Callable[[Scenario], SimulatedUser],
    judge: Judge | None,
    settings: BatchSettings,
    on_finished: Callable[[RunResult], None] = lambda run: None,
    reviewer: RunReviewer | None = None,
    server: Server | None = None,
) -> list[RunResult]:
    """Every run of `specs`, at most `settings.parallel` at once, in plan order; each simulated user reviewed by
    `reviewer` (none: no review); the runs' environments served by `server` (none: handed to the agent only)."""
    gate = asyncio.Semaphore(settings.parallel)

    async def one(spec: RunSpec) -> RunResult:
        async with gate:
            run = await run_until_trusted(spec, agent, make_user, judge, settings, reviewer, server)
        on_finished(run)
        return run

    return list(await asyncio.gather(*(one(spec) for spec in specs)))
