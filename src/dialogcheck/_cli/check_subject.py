"""What `dialogcheck check` judges by: an SOP, a scenario, or several scenarios paired with their conversations."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from ..errors import LoadError
from ..events.model import FRAMEWORK_TOOLS


def load_subject(scenario_paths: tuple[str, ...], sop_path: str | None, pair: str | None, framework_tools: frozenset[str] = FRAMEWORK_TOOLS):
    """The SOP, the one scenario, or (several scenarios, or --pair) a `ScenarioSet`; every problem of every file at once.

    Scenarios take `framework_tools` from their project's config (an SOP file says its own).
    """
    if sop_path is not None:
        from ..sop.load import load_sop

        return load_sop(sop_path)
    from ..scenario.load import load_scenario as load_one

    load_scenario = functools.partial(load_one, framework_tools=framework_tools)

    if len(scenario_paths) == 1 and pair is None and not Path(scenario_paths[0]).is_dir():
        return load_scenario(scenario_paths[0])  # one scenario: every conversation against it, as it always was
    from ..pairing import ScenarioSet

    files = _scenario_files(scenario_paths)
    if len(files) == 1 and pair is None:
        return load_scenario(files[0])  # a folder holding one scenario: the same
    pattern = _pair_pattern(pair)
    scenarios = _each(load_scenario, files)
    if not scenarios:
        raise LoadError.one("no scenario files found (.yml, .yaml)", " ".join(scenario_paths))
    return ScenarioSet.of(scenarios, pattern)


def _scenario_files(paths: tuple[str, ...]) -> list[Path]:
    """The scenario files of files, folders and projects, each once, in the order given."""
    from ..runner.project import scenario_files

    found = _each(lambda given: scenario_files(Path(given)), paths)
    return list(dict.fromkeys(f for files in found for f in files))


def _each(load, items) -> list:
    """`load` of every item, raising one `LoadError` with the problems of all of them."""
    done, problems = [], []
    for item in items:
        try:
            done.append(load(item))
        except LoadError as err:
            problems.extend(err.problems)
    if problems:
        raise LoadError(problems)
    return done


def _pair_pattern(pair: str | None):
    from ..pairing import compile_pair

    if pair is None:
        return None
    try:
        return compile_pair(pair)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="'--pair'") from None


def judged_count(subject) -> int:
    """How many LLM-judged checks the scenario or SOP holds (of all the scenarios, for several)."""
    from ..evaluate import judge_requests

    several = getattr(subject, "scenarios", None)
    return sum(len(judge_requests(s)) for s in several.values()) if several is not None else len(judge_requests(subject))


def judge_note(subject, judge, no_judge: bool) -> str | None:
    """Say which checks were not judged, and why, so a skipped check is never mistaken for a pass."""
    count = judged_count(subject)
    if not count or (judge is not None and not no_judge):
        return None
    why = "skipped (--no-judge)" if no_judge else "not judged: no judge configured (evaluation.llm in eval/conftest.yml)"
    several = getattr(subject, "scenarios", None)
    per = f"in {len(several)} scenarios" if several is not None else "per conversation"
    return f"{count} LLM-judged check{'s' if count != 1 else ''} {per} {why}"


def wants_judge(subject, no_judge: bool, metrics: bool) -> bool:
    """Whether a judge is needed: LLM-judged checks to decide, or quality metrics to score."""
    return bool(not no_judge and judged_count(subject)) or metrics
