"""Build the connector that `eval/conftest.yml` or `--agent` names.

Everything that can be wrong with the naming (an unknown type, a missing or
malformed URL, a module that does not import) is raised here, before any run,
as `AgentSetupError` (a `ValueError`): bad input for the CLI, exit 2.
"""

from __future__ import annotations

from pathlib import Path

from ..config import AGENT_TYPES, AgentSettings
from ._client import check_url
from .base import AgentConnector, AgentSetupError
from .http import HttpConnector
from .python import PythonConnector, split_target
from .rasa import RasaConnector

FLAG_FORMS = "rasa:URL, http:URL (or the http(s) URL alone) or python:MODULE:FUNC"
#: A flag that starts like this is an HTTP agent's address written without the `http:` prefix.
_PLAIN_URL = ("http://", "https://")


def parse_agent_flag(value: str) -> AgentSettings:
    """`rasa:URL`, `http:URL`, a plain http(s) URL (an http agent) or `python:MODULE:FUNC`.

    The type is split off at the first colon only (URLs hold colons).
    """
    if value.lower().startswith(_PLAIN_URL):
        value = f"http:{value}"
    kind, sep, rest = value.partition(":")
    if not sep or kind not in AGENT_TYPES or not rest:
        raise AgentSetupError(f"--agent must be {FLAG_FORMS}, got {value!r}")
    try:
        if kind == "python":
            split_target(rest)
            return AgentSettings(kind, callable=rest)
        return AgentSettings(kind, url=check_url(rest, f"--agent {kind}:URL"))
    except AgentSetupError as err:
        raise AgentSetupError(f"{err} (--agent must be {FLAG_FORMS})") from None


def connector_from_settings(settings: AgentSettings, project_root: str | Path) -> AgentConnector:
    """A ready connector; a python agent's module is imported now, with `project_root` on the path."""
    if settings.type in ("rasa", "http"):
        if settings.url is None:
            raise AgentSetupError(f"a {settings.type} agent needs `url`")
        connector = RasaConnector if settings.type == "rasa" else HttpConnector
        return connector(settings.url, settings.timeout)  # type: ignore[return-value]  # the connectors take `environment=`, narrower than the protocol's `**given`
    if settings.type == "python":
        if settings.callable is None:
            raise AgentSetupError("a python agent needs `callable: MODULE:FUNCTION`")
        return PythonConnector(settings.callable, Path(project_root), settings.timeout)  # type: ignore[return-value]  # the connectors take `environment=`, narrower than the protocol's `**given`
    raise AgentSetupError(f"unknown agent type {settings.type!r}: expected one of {', '.join(AGENT_TYPES)}")
