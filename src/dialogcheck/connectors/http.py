"""A generic HTTP JSON agent (docs/connectors.md): one POST per turn, the turn's events in the answer.

Request: `{"conversation_id": ID, "text": TEXT}`; `text` is null to open the
conversation, and the opening request also carries `"initial_slots": {...}`
(memory to hold before the first turn), which an agent may read or ignore,
and, when the scenario has an environment, `"environment": {"http": URL,
"mcp": URL}`: where the run's tools are served.
Answer: `{"messages": [{"text", "utter_name"?, "buttons"?}], "events": [...]}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..environment.run import AgentEnvironment
from ._client import JsonClient, check_url
from .base import AgentTurn
from .json_values import json_copy
from .protocol import turn_from_answer


class HttpConnector:
    """The agent reports each turn's events itself, so there is no separate record to fetch."""

    def __init__(self, url: str, timeout: float = 30.0):
        self.url = check_url(url, "an http agent")
        self.timeout = timeout
        self._client = JsonClient(self.url, timeout)

    async def check_reachable(self) -> None:
        await self._client.check_reachable()

    async def _post(self, body: dict[str, Any]) -> AgentTurn:
        answer = await self._client.request("POST", "", body)
        where = f"POST {self.url}"
        return turn_from_answer(json_copy(answer, where), where)

    async def open(self, conversation_id: str, initial_slots: Mapping[str, Any], environment: AgentEnvironment | None = None) -> AgentTurn:
        body: dict[str, Any] = {"conversation_id": conversation_id, "text": None, "initial_slots": dict(initial_slots)}
        if environment is not None and environment.addresses:
            body["environment"] = environment.addresses
        return await self._post(body)

    async def send(self, conversation_id: str, text: str, environment: AgentEnvironment | None = None) -> AgentTurn:
        return await self._post({"conversation_id": conversation_id, "text": text})

    async def recorded_events(self, conversation_id: str) -> None:
        return None

    async def aclose(self) -> None:
        await self._client.aclose()
