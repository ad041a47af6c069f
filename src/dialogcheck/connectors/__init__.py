"""How dialogcheck reaches the agent under test: a Rasa/Mantle server, an HTTP JSON agent, or a Python callable."""

from __future__ import annotations

from .base import (
    AgentButton,
    AgentConnector,
    AgentError,
    AgentMessage,
    AgentSetupError,
    AgentTurn,
)
from .factory import connector_from_settings, parse_agent_flag
from .http import HttpConnector
from .python import PythonConnector
from .rasa import RasaConnector

__all__ = [
    "AgentButton",
    "AgentConnector",
    "AgentError",
    "AgentMessage",
    "AgentSetupError",
    "AgentTurn",
    "HttpConnector",
    "PythonConnector",
    "RasaConnector",
    "connector_from_settings",
    "parse_agent_flag",
]
