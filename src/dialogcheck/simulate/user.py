"""Simulated users: a script of fixed messages, or an LLM playing the scenario's customer.

Both answer the same question, "what does the user say next?", with a
`UserTurn(message, done)`. The LLM user answers JSON `{"message", "done"}`
checked against a schema; its prompt is a Jinja2 template the project can
override (`simulation.simulated_user_prompt`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..config import LLMSettings
from ..llm.base import ChatClient, ChatMessage
from ..llm.structured import ask_json
from ..llm.templates import Templates

USER_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string"}, "done": {"type": "boolean"}},
    "required": ["message", "done"],
}


@dataclass(frozen=True)
class UserTurn:
    message: str
    done: bool


class SimulatedUser(Protocol):
    async def next_turn(self, transcript: str) -> UserTurn:
        """The user's next message, given the conversation so far (`USER:`/`AGENT:` lines)."""
        ...


class ScriptedUser:
    """Sends the scenario's `script` in order; the last message ends the conversation."""

    def __init__(self, script: Sequence[str]):
        self._script = list(script)
        self._sent = 0

    async def next_turn(self, transcript: str) -> UserTurn:
        if self._sent >= len(self._script):
            return UserTurn("", True)
        message = self._script[self._sent]
        self._sent += 1
        return UserTurn(message, self._sent == len(self._script))


class LLMUser:
    """An LLM in the character of `simulation_context`, one short message at a time."""

    def __init__(self, client: ChatClient, settings: LLMSettings, simulation_context: str, templates: Templates | None = None):
        self.client = client
        self.settings = settings
        self.simulation_context = simulation_context
        self.templates = templates or Templates()

    async def next_turn(self, transcript: str) -> UserTurn:
        prompt = self.templates.render(
            "simulated_user_prompt", simulation_context=self.simulation_context, transcript=transcript
        )
        answer = await ask_json(self.client, self.settings, [ChatMessage("user", prompt)], USER_SCHEMA)
        return UserTurn(answer.value["message"], answer.value["done"])
