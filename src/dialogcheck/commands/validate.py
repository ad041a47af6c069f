"""`validate`: load and check scenario, SOP and config files, and say what each defines or what is wrong with it.

Kept quick to start: the error renderer is imported only when a file has problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._shown import counted, listed, shown
from .._yaml import YMap, read_yaml
from ..definitions import Definition, ProjectSettings, find_definitions, load_definition
from ..errors import LoadError, Problem
from ..report.styled import Styled
from .answer import EXIT_BAD_INPUT, EXIT_OK, Answer


def _summary(definition: Definition) -> str:
    value = definition.value
    if definition.kind == "scenario":
        goals = value.goals
        sop = f", {counted(len(goals.sop.steps), 'SOP step')}" if goals.sop is not None else ""
        world = f", environment {value.environment.name}" if value.environment is not None else ""
        return f"scenario {value.name!r}: {counted(len(goals.assertions), 'assertion')}, {counted(len(goals.criteria), 'criterion', 'criteria')}{sop}{world}"
    if definition.kind == "sop":
        return f"SOP {value.id} {value.name!r}: {counted(len(value.steps.steps), 'step')}"
    if definition.kind == "environment":
        records = sum(len(table) for table in value.state.values())
        return f"environment {value.name!r}: {counted(len(value.tools), 'tool')}, {counted(len(value.faults), 'fault')}, {counted(records, 'record')}"
    def model(role) -> str:
        return f"{role.llm.provider}/{role.llm.model}" if role.llm else "none"

    agent = f", agent {value.agent.type}" if value.agent else ""
    return f"config: simulation {model(value.simulation)}, evaluation {model(value.evaluation)}{agent}"


def run_warnings(path: Path, definition: Definition, settings: ProjectSettings) -> list[Problem]:
    """What `run` would refuse or leave unjudged in a valid scenario of a project, at the key concerned: no `script`
    and no simulation model; criteria and no judge. Outside a project (a scenario only `check` reads) nothing."""
    config = settings.config(path) if definition.kind == "scenario" else None
    if config is None:
        return []
    scenario, where = definition.value, config.path or "eval/conftest.yml"
    root = read_yaml(path)
    body = root.get("scenario") if isinstance(root, YMap) else None
    warnings = []
    if scenario.script is None and config.simulation.llm is None:
        at = root.keys["scenario"] if isinstance(root, YMap) and "scenario" in root.keys else None
        warnings.append(_at(
            f"`run` will refuse this scenario: it has no `script`, and no simulation model is configured (simulation.llm in {where})",
            path, at,
        ))
    if scenario.goals.criteria and config.evaluation.llm is None:
        goals = body.get("goals") if isinstance(body, YMap) else None
        at = goals.keys.get("criteria") if isinstance(goals, YMap) else None
        warnings.append(_at(
            f"its criteria will not be judged: no judge is configured (evaluation.llm in {where}); `run` and `check` count them"
            " errored (exit code 3), or skipped with --no-judge",
            path, at,
        ))
    return warnings


def _at(message: str, path: Path, pos) -> Problem:
    return Problem(message, str(path), pos.line, pos.column) if pos is not None else Problem(message, str(path))


#: Skipped files a text output names before it says "and N more".
SHOWN_SKIPPED = 5


def _names(paths: list) -> str:
    return listed([str(path) for path in paths], SHOWN_SKIPPED)


def _skipped_line(skipped: list) -> str:
    """Which YAML files were not read, so a file whose top-level key is wrong is never passed over unseen."""
    return f"skipped {counted(len(skipped), 'YAML file')} without a top-level `scenario:` or `sop:` key: {_names(skipped)}\n"


def _no_definitions(skipped: list) -> str:
    return f"no scenario, SOP or config files found: {counted(len(skipped), 'YAML file')} without a top-level `scenario:` or `sop:` key ({_names(skipped)})"




def validate(paths: Sequence[str | Path]) -> Answer:
    """What `validate` says of `paths` (files or folders): each file's problems, or a summary of what it defines,
    and the warnings of what `run` would refuse (for stderr); exit code 2 when a file has problems. `LoadError`
    when there is nothing to validate."""
    found = find_definitions(paths)
    files = found.files
    if not files:
        what = "no YAML files found" if not found.skipped else _no_definitions(found.skipped)
        raise LoadError.one(what, " ".join(str(path) for path in paths))
    entries: list[dict[str, Any]] = []
    problems: list[Problem] = []
    warnings: list[Problem] = []
    text = Styled()
    settings = ProjectSettings(files)
    for path in files:
        try:
            definition = load_definition(path, settings)
        except LoadError as err:
            from ..report.check_text import render_load_error

            problems.extend(err.problems)
            entries.append({"path": str(path), "ok": False, "problems": [p.to_dict() for p in err.problems]})
            text.extend(render_load_error(err))
            continue
        entries.append({"path": str(path), "ok": True, "kind": definition.kind})
        text.append("ok    ", style="bold green")
        text.append(f"{shown(str(path))}  {shown(_summary(definition))}\n")
        warnings.extend(run_warnings(path, definition, settings))
    bad = sum(not e["ok"] for e in entries)
    if found.skipped:
        text.append(_skipped_line(found.skipped))
    text.append(f"{counted(len(files), 'file')}, {len(files) - bad:,} valid, {bad:,} with problems\n", style="bold")
    document = {"files": entries, "valid": not problems}
    if warnings:
        document["warnings"] = [w.to_dict() for w in warnings]
    if found.skipped:
        document["skipped"] = [str(path) for path in found.skipped]
    if problems:
        document["error"] = problems[0].to_dict()
    warned = Styled("".join(f"{shown(w.file)}:{w.line}:{w.column}: warning: {shown(w.message)}\n" for w in warnings))
    return Answer(document, text, EXIT_OK if not problems else EXIT_BAD_INPUT, warned)
