"""The LLM judge: each criterion decided on its own from the transcript and the event ledger.

Answers are JSON validated against a schema. A malformed answer is shown
back to the model with what was wrong and asked again; when no valid answer
comes, the criterion is a judge error (the run is errored, never passed).
Every request goes through a `ChatClient`, so the disk cache makes a rerun
reproduce the same verdicts with zero calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..checks.judged import JudgeRequest
from ..config import LLMSettings
from ..events.model import Conversation
from ..llm.base import ChatClient, ChatMessage, ChatRequest, LLMError, Usage
from ..llm.templates import Templates
from .answers import CRITERION_SCHEMA, MalformedAnswer, metrics_schema, parse_json_answer
from .base import JudgeError, JudgeVerdict
from .ledger import render_ledger
from .transcript import render_transcript

DEFAULT_ATTEMPTS = 3
METRIC_DESCRIPTIONS = {
    "task_completion": "did the customer get what they came for? (passed true or false)",
    "helpfulness": "how useful were the agent's answers and actions? (score 1 to 5)",
    "repair_quality": "when something went wrong or was unclear, how well did the agent recover? (score 1 to 5)",
    "coherence": "did the agent stay consistent and on topic across turns? (score 1 to 5)",
    "tone": "was the agent polite, clear and appropriate? (score 1 to 5)",
}


class LLMJudge:
    """Implements `Judge` (criteria, `llm_judge` steps) and scores quality metrics."""

    def __init__(
        self,
        client: ChatClient,
        settings: LLMSettings,
        templates: Templates | None = None,
        attempts: int = DEFAULT_ATTEMPTS,
    ):
        self.client = client
        self.settings = settings
        self.templates = templates or Templates()
        self.attempts = attempts

    def _request(self, messages: list[ChatMessage], schema: Mapping[str, Any], model: str | None) -> ChatRequest:
        return ChatRequest(
            provider=self.settings.provider,
            model=model or self.settings.model,
            messages=tuple(messages),
            options=self.settings.options,
            json_schema=schema,
            endpoint=self.settings.base_url,
        )

    async def ask_json(self, prompt: str, schema: Mapping[str, Any], model: str | None = None) -> tuple[dict, str, Usage, bool]:
        """Ask until the answer validates; returns (answer, raw text, usage, every answer cached)."""
        messages = [ChatMessage("user", prompt)]
        usage, cached, raw = Usage(), True, None
        problem = "no answer"
        for _ in range(self.attempts):
            try:
                response = await self.client.complete(self._request(messages, schema, model))
            except LLMError as err:
                raise JudgeError(str(err), raw, usage) from None
            usage, cached, raw = usage + response.usage, cached and response.cached, response.text
            try:
                return parse_json_answer(response.text, schema), response.text, usage, cached
            except MalformedAnswer as err:
                problem = str(err)
                messages += [
                    ChatMessage("assistant", response.text),
                    ChatMessage("user", f"That answer was not valid ({problem}). Answer again with only the JSON object."),
                ]
        raise JudgeError(f"no valid answer after {self.attempts} attempts: {problem}", raw, usage)

    def _render(self, key: str, **variables: Any) -> str:
        try:
            return self.templates.render(key, **variables)
        except LLMError as err:
            raise JudgeError(str(err)) from None

    async def judge(self, conversation: Conversation, request: JudgeRequest) -> JudgeVerdict:
        prompt = self._render(
            "criteria_judge_prompt",
            transcript=render_transcript(conversation),
            ledger=render_ledger(conversation),
            criterion=request.criterion,
            rubric=request.rubric,
        )
        answer, raw, usage, cached = await self.ask_json(prompt, CRITERION_SCHEMA, request.model)
        return JudgeVerdict(answer["verdict"] == "PASS", answer["rationale"], raw, usage, cached)

    async def score_metrics(
        self, conversation: Conversation, metrics: tuple[str, ...], simulation_context: str | None = None
    ) -> dict[str, Any]:
        """Quality scores `{metric: {score|passed, reasoning}}`, or `{"error": ...}`; never a verdict."""
        try:
            prompt = self._render(
                "metrics_judge_prompt",
                transcript=render_transcript(conversation),
                ledger=render_ledger(conversation),
                simulation_context=simulation_context,
                metrics=list(metrics),
                descriptions=METRIC_DESCRIPTIONS,
            )
            answer, _, usage, _ = await self.ask_json(prompt, metrics_schema(metrics))
        except JudgeError as err:
            return {"error": str(err)}
        return {name: answer[name] for name in metrics} | {"usage": usage.to_dict()}
