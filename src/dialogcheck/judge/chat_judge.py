"""The LLM judge: each criterion decided on its own from the transcript and the event ledger.

Answers are JSON validated against a schema, malformed ones asked again
(`llm.structured`); when no valid answer comes, the criterion is a judge
error (the run is errored, never passed).
Every request goes through a `ChatClient`, so the disk cache makes a rerun
reproduce the same verdicts with zero calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._redact import mask
from ..checks.judged import JudgeRequest
from ..config import LLMSettings
from ..events.model import FRAMEWORK_TOOLS, Conversation
from ..llm.base import ChatClient, ChatMessage, LLMError
from ..llm.structured import DEFAULT_ATTEMPTS, JsonAnswer, NoValidAnswer, ask_json
from ..llm.templates import Templates
from .answers import BLAME_SCHEMA, CRITERION_SCHEMA, metrics_schema
from .base import JudgeError, JudgeVerdict
from .citations import answer_problem, blame_problem, cited_events
from .ledger import render_ledger
from .transcript import TooLong, render_transcript

#: The output bound of a criterion's answer (a verdict, a rationale, citations) and of a metrics answer (a score
#: and a reason for each metric), unless `max_tokens` of evaluation.llm says otherwise: room for a model that
#: thinks aloud first, never the thousands of tokens a looping model would bill.
CRITERION_MAX_TOKENS = 2048
METRICS_MAX_TOKENS = 2048
#: The output bound of the localiser's answer (`--blame llm`): an actor, a turn, an event and one sentence.
BLAME_MAX_TOKENS = 1024

METRIC_DESCRIPTIONS = {
    "task_completion": "did the customer get what they came for? (passed true or false)",
    "helpfulness": "how useful were the agent's answers and actions? (score 1 to 5)",
    "repair_quality": "when something went wrong or was unclear, how well did the agent recover? (score 1 to 5)",
    "coherence": "did the agent stay consistent and on topic across turns? (score 1 to 5)",
    "tone": "was the agent polite, clear and appropriate? (score 1 to 5)",
}


@dataclass(frozen=True)
class Localised:
    """The localiser's answer: who erred, at which turn and event (None with `unknown`), why, and its tokens."""

    actor: str
    turn: int | None
    event: int | None
    reason: str
    usage: Any = None


class ChatJudge:
    """The judge that asks a chat model: implements `Judge` (criteria, `llm_judge` steps) and scores quality metrics.

    Named apart from `checks.sop_judge.LlmJudge`, the SOP step it decides.
    """

    def __init__(
        self,
        client: ChatClient,
        settings: LLMSettings,
        templates: Templates | None = None,
        attempts: int = DEFAULT_ATTEMPTS,
        samples: int = 1,
    ):
        self.client = client
        self.settings = settings
        self.templates = templates or Templates()
        self.attempts = attempts
        #: How many times each criterion is asked, the majority deciding (`evaluation.samples`).
        self.samples = samples
        #: Why this judge may not decide (`--require-calibration`), or None.
        self.uncalibrated: str | None = None

    async def ask_json(
        self,
        prompt: str,
        schema: Mapping[str, Any],
        model: str | None = None,
        validate: Callable[[dict[str, Any]], str | None] | None = None,
        sample: int = 0,
        max_tokens: int = CRITERION_MAX_TOKENS,
    ) -> JsonAnswer:
        """One prompt, a schema-valid JSON answer; every failure becomes a `JudgeError`."""
        try:
            return await ask_json(
                self.client, self.settings, [ChatMessage("user", prompt)], schema, model=model, attempts=self.attempts, validate=validate, sample=sample,
                max_tokens=max_tokens,
            )
        except NoValidAnswer as err:
            raise JudgeError(str(err), err.raw, err.usage) from None
        except LLMError as err:
            raise JudgeError(str(err)) from None

    def _render(self, key: str, **variables: Any) -> str:
        try:
            return self.templates.render(key, **variables)
        except LLMError as err:
            raise JudgeError(str(err)) from None

    def _conversation_text(self, conversation: Conversation, framework_tools: frozenset[str], numbered: bool = False) -> dict[str, str]:
        """The transcript and the ledger, within `max_prompt_chars` together; rendering stops where the limit is passed.

        `numbered` marks each line with its turn and event, for a judge that must cite them.
        """
        limit = self.settings.max_prompt_chars
        try:
            transcript = render_transcript(conversation, limit, numbered)
            ledger = render_ledger(conversation, limit - len(transcript) - 1, framework_tools, numbered)
            return {"transcript": transcript, "ledger": ledger}
        except TooLong:
            raise JudgeError(
                f"the conversation is too long to judge: its transcript and event ledger pass {limit:,} characters "
                "(`max_prompt_chars` of evaluation.llm, for a model that reads more)"
            ) from None

    async def judge(self, conversation: Conversation, request: JudgeRequest) -> JudgeVerdict:
        prompt = self._render(
            "criteria_judge_prompt",
            **self._conversation_text(conversation, request.framework_tools, numbered=True),
            criterion=request.criterion,
            criterion_id=request.id,
            rubric=request.rubric,
        )
        wording = self.templates.source("criteria_judge_prompt")

        def problem(value: dict[str, Any]) -> str | None:
            return answer_problem(value, conversation, request.id, wording)

        answer = await self.ask_json(prompt, CRITERION_SCHEMA, request.model, problem, request.sample)
        verdict = answer.value
        return JudgeVerdict(
            verdict["verdict"] == "PASS",
            verdict["rationale"],
            answer.raw,
            answer.usage,
            answer.cached,
            cited_events(verdict, conversation),
            verdict["verdict"] == "INCONCLUSIVE",
        )

    async def localise(self, conversation: Conversation, failures: str, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> Localised:
        """Who erred and where, for a failure the evidence could not place (`--blame llm`); `unknown` is an answer.

        The turn and event it cites must exist in the conversation (it is asked again otherwise), and an event
        it names sets the turn, so what it cites is always a line of this conversation."""
        prompt = self._render("blame_prompt", **self._conversation_text(conversation, framework_tools, numbered=True), failures=failures)
        answer = await self.ask_json(prompt, BLAME_SCHEMA, validate=lambda value: blame_problem(value, conversation), max_tokens=BLAME_MAX_TOKENS)
        value = answer.value
        event = value["event"]
        turn = conversation.events[event].turn if event is not None else value["turn"]
        actor = value["actor"]
        if actor == "unknown":
            turn = event = None
        return Localised(actor, turn, event, mask(" ".join(str(value["reason"]).split())), answer.usage)

    async def score_metrics(
        self,
        conversation: Conversation,
        metrics: tuple[str, ...],
        simulation_context: str | None = None,
        *,
        framework_tools: frozenset[str] = FRAMEWORK_TOOLS,
    ) -> dict[str, Any]:
        """Quality scores `{metric: {score|passed, reasoning}}`, or `{"error": ...}`; never a verdict."""
        try:
            prompt = self._render(
                "metrics_judge_prompt",
                **self._conversation_text(conversation, framework_tools),
                simulation_context=simulation_context,
                metrics=list(metrics),
                descriptions=METRIC_DESCRIPTIONS,
            )
            answer = await self.ask_json(prompt, metrics_schema(metrics), max_tokens=METRICS_MAX_TOKENS)
        except JudgeError as err:
            return {"error": mask(str(err))}
        scores = {name: {key: mask(value) if isinstance(value, str) else value for key, value in answer.value[name].items()} for name in metrics}
        return scores | {"usage": answer.usage.to_dict()}
