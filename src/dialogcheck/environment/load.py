"""Loading an environment file, `eval/environments/NAME.yml`: `environment: {state, tools, faults}`.

Every problem of the file (and of the state file it names) is collected and raised as one `LoadError`,
each at its file, line and column.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import orjson

from .._fields import Fields, Problems, file_body, load_definition_file
from .._yaml import YNode, allowed_env
from .load_faults import parse_faults
from .load_tools import ToolReader
from .model import Environment
from .state import parse_state

ENVIRONMENT_FIELDS = ("state", "tools", "faults")


def project_of(path: Path) -> Path:
    """The project folder of an environment file: the folder holding `eval/` for `eval/environments/NAME.yml`,
    else the file's own folder."""
    folder = path.parent
    if folder.name == "environments" and folder.parent.name == "eval":
        return folder.parent.parent
    return folder


def parse_environment(root: YNode | None, problems: Problems, path: str, *, project: Path, safe_env: bool) -> Environment | None:
    body = file_body(root, problems, "environment", "an environment")
    if body is None:
        return None
    fields = Fields(body, problems, "`environment`", ENVIRONMENT_FIELDS)
    state_json = parse_state(fields.get("state"), problems, fields.pos("state"), project)
    state = orjson.loads(state_json) if state_json is not None else None
    reader = ToolReader(problems, state, project, safe_env)
    tools_node = fields.get("tools", required=True)
    tools = reader.tools(tools_node, fields.pos("tools")) if tools_node is not None else ()
    faults = parse_faults(fields.get("faults"), problems, fields.pos("faults"), {tool.name: tool for tool in tools})
    if problems or state_json is None or not tools:
        return None
    return Environment(Path(path).stem, path, tools, faults, state_json)


def load_environment(
    path: str | Path, *, project: str | Path | None = None, environ: dict[str, str] | None = None, safe_env: bool | None = None
) -> Environment:
    """Read and check one environment file; raises `LoadError` listing every problem.

    `project` is the folder state files and `python:` modules must be in (default: `project_of(path)`).
    `safe_env` refuses `python:` tools, as `--safe-env` does; by default it is on while the `--safe-env`
    policy is (`_yaml.env_policy`).
    """
    folder = Path(project) if project is not None else project_of(Path(path))
    safe = allowed_env() is not None if safe_env is None else safe_env
    parse = partial(parse_environment, project=folder, safe_env=safe)
    return load_definition_file(path, parse, "an environment", environ)


__all__ = ["ENVIRONMENT_FIELDS", "load_environment", "parse_environment", "project_of"]
