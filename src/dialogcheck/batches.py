"""Running scenarios from Python: `run_scenarios`, the library behind `dialogcheck run`.

It plans and runs the batch (`runner.ScenarioBatch`) and hands it the one renderer of results folders
(`report.batch_files`), so the folder a script writes is the one the command line writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .config import AgentSettings
from .connectors.base import AgentConnector
from .errors import PYTHON_API
from .report.batch_files import BATCH_FILES
from .results.model import BatchResult
from .runner.scenarios import RunOptions, ScenarioBatch


def run_scenarios(
    paths: str | Path | Sequence[str | Path] = (),
    *,
    agent: str | AgentSettings | AgentConnector | None = None,
    runs: int = 1,
    parallel: int | None = None,
    results: str | Path | None = None,
    resume: str | Path | None = None,
    no_judge: bool = False,
    time_limit: float = 300.0,
    config: str | Path | None = None,
    simulate: str = "auto",
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    retry_suspect: int = 1,
    personas: Sequence[str] = (),
    seed: int | None = None,
    replay: bool = False,
    faults: bool = True,
    blame: str = "evidence",
) -> BatchResult:
    """Run scenarios against an agent and judge each run; the batch's typed result.

    `paths` are a project folder (its `eval/scenarios/`), scenario files or folders of them (default: `.`).
    The agent is the project's (`agent` in `eval/conftest.yml`) unless `agent` names one: `rasa:URL`,
    `http:URL` (or the URL alone), `python:MODULE:FUNC`, or a connector object. Results go to `results`
    (a new or empty folder), else `eval/results/<timestamp>`; `resume` finishes the batch of a results
    folder instead. `personas` (built-in trait names) run each LLM-simulated scenario once per trait and
    repeat, in place of its own `personas`; `seed` is the simulated user's sampling seed (else
    `simulation.seed`), which the runs' environments draw their faults from too; `faults=False` switches the
    environments' fault schedules off (`run --faults off`); `blame` is `run --blame` (`"evidence"`, `"llm"` or `"off"`). `replay` answers every LLM call from the answer cache and sends none. `passed`,
    `failed`, `errored` and `suspect` of the result count runs; a run whose simulated user is suspect (its
    `user_review`) is run again up to `retry_suspect` times. Bad input raises
    `dialogcheck.LoadError`; an agent that cannot be set up, `AgentSetupError`; one that is down, `AgentError`.
    """
    options = RunOptions(
        runs=runs, parallel=parallel or 4, time_limit=time_limit, results=results, resume=resume, config=config, no_judge=no_judge,
        simulate=simulate, use_cache=use_cache, cache_dir=cache_dir, retry_suspect=retry_suspect, personas=personas, seed=seed,
        replay=replay, faults=faults, blame=blame,
    )
    batch = ScenarioBatch([paths] if isinstance(paths, (str, Path)) else paths, options, agent=agent, spelling=PYTHON_API)
    batch.check_agent()
    return batch.run(BATCH_FILES)


__all__ = ["run_scenarios"]
