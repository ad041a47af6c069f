"""Simulated users: a script of fixed messages, or an LLM playing the scenario's customer.

Both answer the same question, "what does the user say next?", with a
`UserTurn(message, done)`. The LLM user answers JSON `{"message", "done"}`
checked against a schema. Its prompt is a Jinja2 template the project can
override (`simulation.simulated_user_prompt`): the bundled one is a system
prompt, and the model plays the user in a chat whose other side is the agent
(the agent's messages come to it as `user` messages, its own earlier answers
are its `assistant` messages), so it answers a conversation instead of
reading one. A template that reads `{{ transcript }}` is the older form: it is
sent whole as one user message each turn, the conversation written into it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Protocol

import orjson

from ..config import OPENAI_COMPATIBLE, LLMSettings
from ..events.transcript import TranscriptLine
from ..llm.base import ChatClient, ChatMessage, Usage
from ..llm.structured import NoValidAnswer, ask_json, sample_seed
from ..llm.templates import Templates
from ..results.model import SimulatorInfo
from ..scenario.model import Scenario, UserProfile
from ..scenario.traits import TRAITS

PROMPT = "simulated_user_prompt"
#: The output bound of one simulated message (`{"message", "done"}`), unless `max_tokens` of simulation.llm says otherwise.
USER_MAX_TOKENS = 512
#: The variable that makes a template the older one-message form: the whole conversation written into the prompt.
TRANSCRIPT = "transcript"
#: What the simulator reads when the agent has not spoken yet: a chat opens with the other side's message. Kept
#: beside the templates, so the review of the simulated user knows these words as the prompt's, not a customer's.
OPENING = resources.files("dialogcheck.simulate").joinpath("prompts/chat_opening.j2").read_text(encoding="utf-8").strip()
#: One line of the conversation so far: who spoke (`user` or `agent`) and what they said.
Said = TranscriptLine

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
    async def next_turn(self, transcript: Sequence[Said]) -> UserTurn:
        """The user's next message, given the conversation so far (its `user` and `agent` lines)."""
        ...


class ScriptedUser:
    """Sends the scenario's `script` in order; the last message ends the conversation."""

    def __init__(self, script: Sequence[str]):
        self._script = list(script)
        self._sent = 0

    async def next_turn(self, transcript: Sequence[Said]) -> UserTurn:
        if self._sent >= len(self._script):
            return UserTurn("", True)
        message = self._script[self._sent]
        self._sent += 1
        return UserTurn(message, self._sent == len(self._script))


def transcript_text(transcript: Sequence[Said]) -> str:
    """The conversation as `USER: ...` and `AGENT: ...` lines: what a one-message template shows as `transcript`."""
    return "\n".join(f"{line.role.upper()}: {line.text}" for line in transcript)


def chat_messages(system: str, transcript: Sequence[Said]) -> list[ChatMessage]:
    """The conversation from the simulated user's side: its brief as the system prompt, the agent's messages as
    `user` messages and its own as `assistant` answers (in the JSON it answered in).

    Consecutive messages of one side are joined (some providers need the roles to alternate), and a chat the
    agent did not open starts with `OPENING`.
    """
    messages = [ChatMessage("system", system)]
    for line in transcript:
        role = "user" if line.role == "agent" else "assistant"
        content = line.text if role == "user" else orjson.dumps({"message": line.text, "done": False}).decode()
        if messages[-1].role == role:
            messages[-1] = ChatMessage(role, f"{messages[-1].content}\n\n{content}")
        else:
            messages.append(ChatMessage(role, content))
    if len(messages) == 1 or messages[1].role == "assistant":
        messages.insert(1, ChatMessage("user", OPENING))
    return messages


class LLMUser:
    """An LLM in the character of the scenario's brief, one short message at a time.

    `brief` is the scenario (its `simulation_context` and its user fields) or the brief alone; `trait` names
    a persona trait it plays on top (`scenario.traits`); `seed` goes to providers that take one (the
    OpenAI-compatible ones; Anthropic's API has none). The tokens it spent add up in `usage`, even when it
    failed, and `info()` says how it was played.
    """

    def __init__(
        self,
        client: ChatClient,
        settings: LLMSettings,
        brief: str | Scenario,
        templates: Templates | None = None,
        *,
        trait: str | None = None,
        seed: int | None = None,
        attempt: int = 0,
        repeat: int = 1,
    ):
        self.client = client
        self.settings = settings
        self.brief = brief
        profile = brief.user if isinstance(brief, Scenario) else UserProfile()
        self.simulation_context = brief.simulation_context if isinstance(brief, Scenario) else brief
        self.templates = templates or Templates()
        self.trait = trait
        self.seed = seed if settings.provider in OPENAI_COMPATIBLE else None
        #: Which attempt of its run this user plays (0: the first; a retry of a suspect run is another sample).
        self.attempt = attempt
        #: Which repeat of its run this user plays: repeats are asked (and cached) apart, seed or no seed.
        self.repeat = repeat
        self.variables = {
            "simulation_context": self.simulation_context,
            **{name: value or "" for name, value in vars(profile).items()},
            "trait": TRAITS[trait] if trait else "",
            "trait_name": trait or "",
        }
        self.usage = Usage()
        self._prompt_sha256: str | None = None

    def for_run(self, trait: str | None, seed: int | None, attempt: int = 0, repeat: int = 1) -> LLMUser:
        """This user for one attempt of one run of a batch: playing `trait` (else its own), sampled with `seed` (else
        its own). An `attempt` after the first is another sample of the same questions: its own cache entries (a
        cached answer would repeat the fault, and `--replay` reproduces the retry), with the seed moved on."""
        seed = self.seed if seed is None else seed
        return LLMUser(self.client, self.settings, self.brief, self.templates, trait=trait or self.trait, seed=seed, attempt=attempt, repeat=repeat)

    @property
    def chat(self) -> bool:
        """Whether the template is a system prompt for a chat (the bundled form), not one message with the transcript."""
        return TRANSCRIPT not in self.templates.variables(PROMPT)

    def messages(self, transcript: Sequence[Said]) -> list[ChatMessage]:
        """What the simulator model is sent for its next message."""
        if self.chat:
            return chat_messages(self._render(), transcript)
        if self._prompt_sha256 is None:
            self._render(**{TRANSCRIPT: ""})  # the prompt before any conversation: what its hash names
        return [ChatMessage("user", self.templates.render(PROMPT, **self.variables, transcript=transcript_text(transcript)))]

    def _render(self, **more: str) -> str:
        prompt = self.templates.render(PROMPT, **self.variables, **more)
        if self._prompt_sha256 is None:
            self._prompt_sha256 = hashlib.sha256(prompt.encode()).hexdigest()
        return prompt

    async def next_turn(self, transcript: Sequence[Said]) -> UserTurn:
        try:
            answer = await ask_json(self.client, self.settings, self.messages(transcript), USER_SCHEMA, seed=self.seed, sample=self.attempt, repeat=self.repeat,
                max_tokens=USER_MAX_TOKENS,
            )
        except NoValidAnswer as err:
            self.usage += err.usage
            raise
        self.usage += answer.usage
        return UserTurn(answer.value["message"], answer.value["done"])

    def info(self) -> SimulatorInfo:
        """The model, temperature, seed and prompt hash this user was played with, and the tokens it spent."""
        temperature = self.settings.options.get("temperature")
        return SimulatorInfo(
            model=self.settings.model,
            temperature=temperature if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) else None,
            seed=sample_seed(self.seed, self.attempt),
            prompt_sha256=self._prompt_sha256,
            usage=self.usage,
        )
