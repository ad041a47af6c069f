"""dialogcheck inside a Python test: run scenarios against an agent of the test's own, judge recorded
conversations, and assert that what came back passed.

    from dialogcheck.testing import assert_passes

    def test_stolen_card(dialogcheck_run):
        batch = dialogcheck_run("eval/scenarios/run_stolen_card.yml", agent=my_agent)
        assert_passes(batch)

`dialogcheck_run` is the pytest fixture of `Dialogcheck` (the plugin provides it); a failed
`assert_passes` says what dialogcheck's reports say: each failed check with its closest miss, and
the end of the transcript.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .checks.base import Outcome
from .results.model import BatchResult, ConversationResult, RunResult

__all__ = ["Dialogcheck", "assert_passes", "explain"]


def _results(result: Any) -> list[RunResult | ConversationResult]:
    """The runs or judged conversations of what `assert_passes` was given."""
    if isinstance(result, BatchResult):
        return list(result.runs)
    if isinstance(result, (RunResult, ConversationResult)):
        return [result]
    if isinstance(result, Iterable) and not isinstance(result, (str, bytes)):
        found = [one for item in result for one in _results(item)]
        if found or isinstance(result, (list, tuple)):
            return found
    raise TypeError(f"assert_passes takes a BatchResult, RunResult, ConversationResult or a list of them, not {type(result).__name__}")


def explain(result: BatchResult | RunResult | ConversationResult | Iterable[Any]) -> str:
    """Plain text of why each run or conversation that did not pass did not: what a failed `assert_passes` says."""
    from .report.explain import render_result_explanation

    return "\n".join(render_result_explanation(one).plain for one in _results(result) if one.verdict is not Outcome.PASS)


def assert_passes(result: BatchResult | RunResult | ConversationResult | Iterable[Any]) -> None:
    """Raise AssertionError, with dialogcheck's explanation, unless every run or conversation passed.

    An errored run (agent down, judge missing) does not pass either: an undecided check is never a silent pass.
    Nothing at all to judge (an empty batch) is a failure too, for the same reason.
    """
    results = _results(result)
    if not results:
        raise AssertionError("nothing was judged: no runs or conversations to pass")
    failing = [one for one in results if one.verdict is not Outcome.PASS]
    if failing:
        raise AssertionError(f"{len(failing):,} of {len(results):,} did not pass:\n\n{explain(failing)}")


def agent_connector(agent: Any, project_root: Path) -> Any:
    """What `run_scenarios` takes as the agent: a function of the test's own wrapped as the Python connector,
    anything else (a connector, `rasa:URL`, `python:MODULE:FUNC`, None for the project's) as it is."""
    if callable(agent) and not isinstance(agent, str) and not hasattr(agent, "send"):
        from .connectors.python import PythonConnector

        name = getattr(agent, "__qualname__", None) or type(agent).__name__
        return PythonConnector(f"{getattr(agent, '__module__', '?')}:{name}", project_root, func=agent)
    return agent


class Dialogcheck:
    """Run scenarios and judge conversations from a test, with results in a folder of the test's own.

    `results_root` holds one results folder per call (the fixture gives the test's tmp_path), so a test
    never writes into the project's eval/results. Options are those of `run_scenarios` and
    `check_conversations`.
    """

    def __init__(self, results_root: str | Path):
        self.results_root = Path(results_root)

    def __call__(self, paths: str | Path | Iterable[str | Path], *, agent: Any = None, runs: int = 1, no_judge: bool = False, **options: Any) -> BatchResult:
        """Run the scenarios of `paths` (a project, scenario files or folders) against `agent`: a function
        `FUNC(conversation_id, text)` (sync or async) answering like the HTTP protocol, a connector, an
        agent string (`http:URL`), or None for the project's own. The batch's typed result."""
        from .batches import run_scenarios

        targets = [paths] if isinstance(paths, (str, Path)) else list(paths)
        if "results" not in options and "resume" not in options:
            self.results_root.mkdir(parents=True, exist_ok=True)
            options["results"] = tempfile.mkdtemp(prefix="dialogcheck-", dir=self.results_root)
        root = _project_root(Path(targets[0]) if targets else Path("."))
        return run_scenarios(targets, agent=agent_connector(agent, root), runs=runs, no_judge=no_judge, **options)

    def check(self, subject: Any, conversations: Any, *, no_judge: bool = False, **options: Any) -> list[ConversationResult]:
        """Judge recorded `conversations` (paths, `Conversation`s or lists of event dicts) against `subject`,
        a scenario or SOP (loaded, or its file); one result each, in input order."""
        from .checking import check_conversations

        return list(check_conversations(subject, conversations, no_judge=no_judge, **options))


def _project_root(target: Path) -> Path:
    """The project a scenario path belongs to (the folder holding `eval/`), where a wrapped agent's module would live."""
    here = target.resolve()
    for folder in (here, *here.parents):
        if (folder / "eval").is_dir():
            return folder
    return here if here.is_dir() else here.parent

