"""The optional LLM reviewer: a model reads the brief and the transcript and names the turns where the user strayed.

What the rules cannot see needs reading: a customer that contradicted its
brief, stated a fact it was never given (one of the facts it does not know),
or gave in where it was told to insist. The project names a model and may
override the prompt (`simulation.review` in `eval/conftest.yml`); each fault
the model names is a `Reason` with rule `llm_review`, beside the rules'.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...config import LLMSettings
from ...llm.base import ChatClient, ChatMessage, LLMError
from ...llm.structured import ask_json
from ...llm.templates import Templates
from ...results.model import Reason
from .model import Brief, Line

RULE = "llm_review"
#: The output bound of a review (a few faults, each a line), unless `max_tokens` of simulation.review.llm says otherwise.
REVIEW_MAX_TOKENS = 1024
#: The kinds of fault the reviewer may name, and how a reason says each.
KINDS = {
    "contradicts_brief": "contradicts the brief",
    "invents_fact": "invents a fact the brief does not give",
    "gives_in": "gives in against its instructions",
}
REVIEW_SCHEMA = {
    "type": "object",
    "properties": {
        "faults": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"turn": {"type": "integer"}, "kind": {"enum": list(KINDS)}, "text": {"type": "string"}},
                "required": ["turn", "kind", "text"],
            },
        }
    },
    "required": ["faults"],
}


def numbered_transcript(transcript: Sequence[Line]) -> str:
    """`turn N CUSTOMER: ...` and `AGENT: ...` lines: the turn numbers the reviewer answers with are the transcript's."""
    return "\n".join(f"turn {line.turn} CUSTOMER: {line.text}" if line.role == "user" else f"AGENT: {line.text}" for line in transcript)


class LLMReviewer:
    """Asks a model which of the user's turns strayed from the brief; an answer it cannot read is an `LLMError`."""

    def __init__(self, client: ChatClient, settings: LLMSettings, templates: Templates | None = None):
        self.client, self.settings = client, settings
        self.templates = templates or Templates()

    async def reasons(self, brief: Brief, transcript: Sequence[Line]) -> tuple[Reason, ...]:
        prompt = self.templates.render("user_review_prompt", brief="\n\n".join(p for p in brief.passages if p.strip()), transcript=numbered_transcript(transcript))
        try:
            answer = await ask_json(self.client, self.settings, [ChatMessage("user", prompt)], REVIEW_SCHEMA, max_tokens=REVIEW_MAX_TOKENS)
        except LLMError as err:
            raise LLMError(f"the user review: {err}") from err
        user_turns = {line.turn for line in transcript if line.role == "user"}
        return tuple(
            # A turn the transcript has no customer message at is the model's mistake: the reason stands for the whole run.
            Reason(fault["turn"] if fault["turn"] in user_turns else None, RULE, f"{KINDS[fault['kind']]}: {fault['text'].strip()}")
            for fault in answer.value["faults"]
        )
