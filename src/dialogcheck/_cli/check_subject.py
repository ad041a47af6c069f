"""What `dialogcheck check` judges by: an SOP, a scenario, or several scenarios paired with their conversations."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import LoadError


def load_subject(scenario_paths: tuple[str, ...], sop_path: str | None, pair: str | None):
    """The SOP, the one scenario, or (several scenarios, or --pair) a `ScenarioSet`; every problem of every file at once."""
    if sop_path is not None:
        from ..sop.load import load_sop

        return load_sop(sop_path)
    from ..scenario.load import load_scenario

    if len(scenario_paths) == 1 and pair is None and Path(scenario_paths[0]).is_file():
        return load_scenario(scenario_paths[0])  # one scenario: every conversation against it, as it always was
    from ..pairing import ScenarioSet, compile_pair
    from ..runner.project import scenario_files

    files = list(dict.fromkeys(f for given in scenario_paths for f in scenario_files(Path(given))))
    if len(files) == 1 and pair is None:
        return load_scenario(files[0])  # a folder holding one scenario: the same
    pattern = None
    if pair is not None:
        try:
            pattern = compile_pair(pair)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="'--pair'") from None
    scenarios, problems = [], []
    for path in files:
        try:
            scenarios.append(load_scenario(path))
        except LoadError as err:
            problems.extend(err.problems)
    if problems:
        raise LoadError(problems)
    if not scenarios:
        raise LoadError.one("no scenario files found (.yml, .yaml)", " ".join(scenario_paths))
    return ScenarioSet.of(scenarios, pattern)


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
