"""Builders for SOP tests: steps and evaluators from YAML text, and their load errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dialogcheck._fields import Problems
from dialogcheck._yaml import Pos, parse_yaml
from dialogcheck.errors import LoadError
from dialogcheck.sop import StepSet, load_sop, parse_steps


def steps_from_yaml(text: str) -> StepSet:
    """Parse a `goals.sop` list written as YAML; raise LoadError (file `t.yml`) on problems."""
    node = parse_yaml(textwrap.dedent(text), "t.yml")
    problems = Problems()
    steps = parse_steps(node, problems, Pos(1, 1), "`goals.sop`")
    if problems:
        raise LoadError(problems.items).in_file("t.yml")
    assert steps is not None
    return steps


def evaluator(text: str):
    """The evaluator of a one-step list, or of one evaluator mapping written without the `- `."""
    text = textwrap.dedent(text).strip("\n")
    if not text.startswith("-"):
        text = "- " + textwrap.indent(text, "  ")[2:]
    (step,) = steps_from_yaml(text).steps
    return step.evaluator


def steps_error(text: str) -> str:
    """The whole `path:line:col: message` text of the load error a step list raises."""
    with pytest.raises(LoadError) as info:
        steps_from_yaml(text)
    return str(info.value)


def sop_file_error(tmp_path: Path, text: str) -> tuple[str, str]:
    """(file path, error text) for an SOP file that fails to load."""
    path = tmp_path / "bad.yml"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(LoadError) as info:
        load_sop(path)
    return str(path), str(info.value)
