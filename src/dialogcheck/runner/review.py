"""The review of a run's simulated user, set up from the project: its prompt templates, and the LLM reviewer if any.

The deterministic rules compare the user's messages with the templates the
simulator was prompted with (the project's overrides, else the bundled
ones); `simulation.review` in `eval/conftest.yml` adds an LLM that reads the
brief and the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import ROLE_PROMPTS, ProjectConfig, in_flight_for
from ..events.model import Conversation
from ..results.model import UserReview
from ..scenario.model import Scenario
from ..simulate.review import Prompts, brief_of, review_conversation, transcript_of
from ..simulate.review.llm import LLMReviewer


@dataclass(frozen=True)
class RunReviewer:
    """Reviews the simulated user of each run: the rules, then the LLM reviewer when the project has one."""

    prompts: Prompts
    llm: LLMReviewer | None = None

    async def review(self, scenario: Scenario, record: Conversation, trait: str | None = None) -> UserReview:
        brief = brief_of(scenario, trait)
        review = review_conversation(record, brief, self.prompts)
        if self.llm is not None:
            review = review.joined(await self.llm.reasons(brief, transcript_of(record)))
        return review


def simulator_prompts(config: ProjectConfig) -> Prompts:
    """The source of every template that prompts the simulated user: the project's override, else the bundled one."""
    from ..llm.templates import Templates

    templates = Templates(config.simulation.prompts)
    return Prompts(tuple(templates.source(key) for key in ROLE_PROMPTS["simulation"]))


def run_reviewer(
    config: ProjectConfig, *, use_cache: bool = True, cache_dir: Path | None = None, parallel: int = 1, replay: bool = False
) -> RunReviewer:
    """The reviewer of a batch's runs, with the LLM reviewer of `simulation.review` when it is configured."""
    review = config.simulation.review
    llm = None
    if review is not None:
        from ..llm.factory import make_client
        from ..llm.templates import Templates

        limit = in_flight_for(config.simulation, parallel)
        client = make_client(review.llm, cache=config.cache, max_in_flight=limit, use_cache=use_cache, cache_dir=cache_dir, replay=replay)
        llm = LLMReviewer(client, review.llm, Templates({"user_review_prompt": review.prompt} if review.prompt else {}))
    return RunReviewer(simulator_prompts(config), llm)
