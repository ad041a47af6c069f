"""A Rasa or Mantle server: the REST channel for messages, the tracker for memory and the record.

The REST answer carries only text and buttons, so turns come back without
events; the tracker (`GET /conversations/{id}/tracker`) is the authoritative
record and is read once, at the end, through `recorded_events`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ..environment.run import AgentEnvironment
from ..events.model import Conversation
from ..events.parse import json_type
from ._client import JsonClient, check_url
from .base import AgentError, AgentMessage, AgentTurn
from .json_values import json_copy
from .protocol import agent_events, optional_string, parse_buttons

SESSION_START = "/session_start"
WEBHOOK = "/webhooks/rest/webhook"


def rest_messages(answer: Any, where: str) -> tuple[AgentMessage, ...]:
    """The REST channel's `[{recipient_id, text?, buttons?, image?, custom?}]` as messages.

    A message with only an image or a custom payload reads as empty text; the
    REST channel does not say which response (`utter_name`) it came from.
    """
    if not isinstance(answer, list):
        raise AgentError(f"{where}: expected a JSON list of messages, got {json_type(answer)}")
    messages = []
    for i, item in enumerate(answer):
        if not isinstance(item, dict):
            raise AgentError(f"{where}: `[{i}]` must be a message object, got {json_type(item)}")
        text = optional_string(item, "text", where, f"[{i}].")
        messages.append(AgentMessage(text or "", None, parse_buttons(item.get("buttons"), where, f"[{i}].buttons")))
    return tuple(messages)


class RasaConnector:
    """One connector serves every conversation of a batch; conversations differ by sender id."""

    def __init__(self, url: str, timeout: float = 30.0):
        self.url = check_url(url, "a rasa agent")
        self.timeout = timeout
        self._client = JsonClient(self.url, timeout)

    async def check_reachable(self) -> None:
        await self._client.check_reachable()

    @staticmethod
    def _tracker_path(conversation_id: str) -> str:
        return f"/conversations/{quote(conversation_id, safe='')}/tracker"

    async def open(self, conversation_id: str, initial_slots: Mapping[str, Any], environment: AgentEnvironment | None = None) -> AgentTurn:
        """`/session_start`, then the initial slots, so the new session does not reset them. The run's environment
        addresses, when it has one, go in the message's `metadata.environment`."""
        addresses = environment.addresses if environment is not None else {}
        turn = await self._post(conversation_id, SESSION_START, {"environment": addresses} if addresses else None)
        if initial_slots:
            events = [{"event": "slot", "name": name, "value": value} for name, value in initial_slots.items()]
            await self._client.request("POST", self._tracker_path(conversation_id) + "/events", events, want_json=False)
        return turn

    async def send(self, conversation_id: str, text: str, environment: AgentEnvironment | None = None) -> AgentTurn:
        return await self._post(conversation_id, text, None)

    async def _post(self, conversation_id: str, text: str, metadata: dict[str, Any] | None) -> AgentTurn:
        body: dict[str, Any] = {"sender": conversation_id, "message": text}
        if metadata is not None:
            body["metadata"] = metadata
        answer = await self._client.request("POST", WEBHOOK, body)
        return AgentTurn(messages=rest_messages(answer, f"POST {self.url}{WEBHOOK}"))

    async def recorded_events(self, conversation_id: str) -> Conversation:
        """Every event of the conversation, across sessions and restarts (`include_events=ALL`), read."""
        path = self._tracker_path(conversation_id) + "?include_events=ALL"
        where = f"GET {self.url}{path}"
        tracker = json_copy(await self._client.request("GET", path), where)
        if not isinstance(tracker, dict):
            raise AgentError(f"{where}: expected a tracker object, got {json_type(tracker)}")
        if "events" not in tracker or tracker["events"] is None:
            raise AgentError(f"{where}: the tracker has no `events` list")
        events, recorded = agent_events(tracker["events"], where)
        return Conversation(events, conversation_id, conversation_id, recorded)

    async def aclose(self) -> None:
        await self._client.aclose()
