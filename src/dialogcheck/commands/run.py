"""`run`: plan a batch of scenarios, find its agent up, and say what the batch gave.

The command line and the MCP server's `run` tool plan through `plan_run` and say the same of the batch
(`run_answer`), so a file, config or agent problem is one error document wherever it is met.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..connectors.base import AgentError, AgentSetupError
from ..errors import LoadError
from ..llm.base import LLMError
from ..results.model import BatchResult
from ..runner.scenarios import RunOptions, ScenarioBatch
from .answer import Answer, CommandError, exit_code_of


def plan_run(paths: Sequence[str | Path], options: RunOptions, agent: str | None = None) -> ScenarioBatch:
    """The batch `run` would run, loaded and planned: every problem of its files, its config, its models or its
    agent is a `LoadError` (bad input), before anything runs. An `agent` given (`rasa:URL`, ...) that cannot be set
    up stays an `AgentSetupError`: the caller's own argument is wrong, not a file."""
    try:
        return ScenarioBatch(paths, options, agent=agent)
    except AgentSetupError as err:
        if agent:
            raise
        raise LoadError.one(str(err), _config_where(paths, options)) from None
    except OSError as err:
        where = options.resume or (paths[0] if paths else ".")
        raise LoadError.of_os("cannot read", err, str(err.filename or where)) from None
    except LLMError as err:
        raise LoadError.one(str(err), _config_where(paths, options)) from None


def check_agent(batch: ScenarioBatch) -> None:
    """A `CommandError` (exit 3) when the batch's agent cannot be reached, before any run or any file of the batch."""
    try:
        batch.check_agent()
    except AgentError as err:
        raise CommandError(f"the agent is not reachable, so no run was started: {err}") from None


def run_answer(batch: BatchResult, *, show_all: bool = False, max_failures: int = 20) -> Answer:
    """What `run` says of a finished batch: its summary and where its folder is; the exit code is the batch's."""
    from ..report.run_text import render_summary
    from ..results.codec import summary_document

    text = render_summary(batch, show_all=show_all, max_failures=max_failures).append(f"results: {batch.folder}\n", "dim")
    return Answer({"results": batch.folder, **summary_document(batch)}, text, exit_code_of(batch.counts.worst))


def _config_where(paths: Sequence[str | Path], options: RunOptions) -> str:
    """Where a problem of the project's setup is reported: the config, else the project."""
    from ..config import find_config

    if options.config:
        return str(options.config)
    place = options.resume or (paths[0] if paths else ".")
    found = find_config(Path(place))
    return str(found) if found else str(place)
