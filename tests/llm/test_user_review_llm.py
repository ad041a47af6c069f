"""The LLM reviewer of the simulated user (`simulation.review`): its settings, its answers, and a run it makes suspect.

Served by a real loopback OpenAI-compatible server; the run is `dialogcheck run`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.config import load_config
from dialogcheck.llm.base import LLMError
from dialogcheck.llm.factory import make_client
from dialogcheck.llm.templates import Templates
from dialogcheck.results.model import Reason
from dialogcheck.simulate.review import Brief, Line
from dialogcheck.simulate.review.llm import LLMReviewer
from tests.cli.test_run import AGENT
from tests.llm.conftest import Answer, ScriptedServer, openai_body
from tests.test_config import error, write_config

BRIEF = Brief("You want to know the balance of your card.", ("You do not know your card number.",))
TRANSCRIPT = (
    Line("agent", "Hi, how can I help?", 0),
    Line("user", "What is the balance of my card?", 1),
    Line("agent", "What is the card number?", 1),
    Line("user", "It is 4111 1111 1111 1111.", 2),
)


def reviewer(server, **config) -> LLMReviewer:
    settings = load_config(write_config(config["tmp_path"], f"simulation:\n  review:\n    llm: {{provider: openai_compatible, base_url: '{server.root}/v1', model: rev}}\n"))
    review = settings.simulation.review
    return LLMReviewer(make_client(review.llm, cache=None, max_in_flight=1, use_cache=False), review.llm, Templates())


def test_simulation_review_is_read_with_its_prompt(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "review.j2").write_text("{{ brief }} / {{ transcript }}")
    config = load_config(write_config(tmp_path, "simulation:\n  review:\n    llm: {provider: openai, model: gpt-4o-mini, temperature: 0}\n    prompt: prompts/review.j2\n"))
    review = config.simulation.review
    assert (review.llm.provider, review.llm.model, dict(review.llm.options)) == ("openai", "gpt-4o-mini", {"temperature": 0})
    assert review.prompt == (tmp_path / "prompts" / "review.j2").resolve()
    assert load_config(write_config(tmp_path, "simulation:\n  llm: {provider: openai, model: m}\n")).simulation.review is None


@pytest.mark.parametrize(
    "text, message",
    [
        ("simulation:\n  review: {prompt: x.j2}\n", "conftest.yml:2:11: `simulation.review` is missing required field `llm`"),
        ("simulation:\n  review:\n    llm: {provider: openai}\n", "conftest.yml:3:10: `simulation.review.llm` is missing required field `model`"),
        ("simulation:\n  review:\n    llm: {provider: openai, model: m}\n    promt: x.j2\n", "conftest.yml:4:5: unknown field `promt` in `simulation.review`"),
        ("simulation:\n  review:\n    llm: {provider: openai, model: m}\n    prompt: ../../x.j2\n", "conftest.yml:4:13: `prompt` must stay inside the project folder"),
        ("simulation:\n  review: yes\n", "conftest.yml:2:11: `review` in `simulation` must be a mapping"),
        ("evaluation:\n  review: {}\n", "conftest.yml:2:3: unknown field `review` in `evaluation`"),
    ],
)
def test_simulation_review_errors_name_their_place(tmp_path, text, message):
    assert error(tmp_path, text).startswith(message)


def test_each_fault_the_model_names_is_an_llm_review_reason_at_its_turn(tmp_path, openai_server):
    faults = [
        {"turn": 2, "kind": "invents_fact", "text": "It gives a card number the brief says it does not know."},
        {"turn": 7, "kind": "gives_in", "text": "It gave up."},
    ]
    openai_server.answer(Answer(body=openai_body(json.dumps({"faults": faults}))))
    reasons = asyncio.run(reviewer(openai_server, tmp_path=tmp_path).reasons(BRIEF, TRANSCRIPT))
    assert reasons == (
        Reason(2, "llm_review", "invents a fact the brief does not give: It gives a card number the brief says it does not know."),
        Reason(None, "llm_review", "gives in against its instructions: It gave up."),  # no customer message at turn 7
    )
    prompt = openai_server.bodies[0]["messages"][0]["content"]
    assert "You want to know the balance of your card.\n\nYou do not know your card number." in prompt
    assert "turn 2 CUSTOMER: It is 4111 1111 1111 1111.\nAGENT:" not in prompt and "turn 2 CUSTOMER: It is 4111 1111 1111 1111." in prompt
    assert "AGENT: What is the card number?" in prompt


def test_a_reviewer_that_finds_nothing_gives_no_reason_and_one_that_cannot_answer_is_an_error(tmp_path, openai_server):
    openai_server.answer(Answer(body=openai_body('{"faults": []}')))
    assert asyncio.run(reviewer(openai_server, tmp_path=tmp_path).reasons(BRIEF, TRANSCRIPT)) == ()
    openai_server.answer(Answer(body=openai_body('{"faults": [{"turn": "two"}]}')))
    with pytest.raises(LLMError, match="the user review: no valid answer after 3 attempts"):
        asyncio.run(reviewer(openai_server, tmp_path=tmp_path / "again").reasons(BRIEF, TRANSCRIPT))


class RoutedServer(ScriptedServer):
    """One loopback server for both roles: model `sim` a sound simulated customer, model `rev` a reviewer answering `review`."""

    def __init__(self, review: dict) -> None:
        super().__init__("/v1/chat/completions", openai_body())
        self.review = review

    def next_answer(self) -> Answer:
        with self.lock:
            model = self.bodies[-1]["model"]
        if model == "rev":
            return Answer(body=openai_body(json.dumps(self.review)))
        return Answer(body=openai_body('{"message": "my card please", "done": true}'))


@pytest.fixture
def routed():
    servers = []

    def start(review: dict) -> RoutedServer:
        server = RoutedServer(review)
        server.thread.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def project(root: Path, server, prompt: str | None = None) -> Path:
    (root / "eval" / "scenarios").mkdir(parents=True)
    llm = f"{{provider: openai_compatible, base_url: '{server.root}/v1', model: sim}}"
    review = f"  review:\n    llm: {llm.replace('sim', 'rev')}\n" + ("    prompt: review.j2\n" if prompt else "")
    (root / "eval" / "conftest.yml").write_text(f"agent: {{type: python, callable: 'agent:respond'}}\nsimulation:\n  llm: {llm}\n{review}")
    if prompt:
        (root / "review.j2").write_text(prompt)
    (root / "agent.py").write_text(AGENT)
    (root / "eval" / "scenarios" / "lookup.yml").write_text(
        "scenario:\n  name: Card lookup\n  simulation_context: You want to know about your card.\n"
        "  goals:\n    assertions:\n      - tool_executed: {tool_name: lookup, source: local}\n"
    )
    return root


def test_the_llm_reviewers_reasons_join_the_rules_and_make_the_run_suspect(tmp_path, routed):
    server = routed({"faults": [{"turn": 1, "kind": "contradicts_brief", "text": "It asks for a card it was told it has lost."}]})
    done = CliRunner().invoke(cli, ["run", str(project(tmp_path / "p", server)), "--simulate", "llm", "--results", str(tmp_path / "r"), "--retry-suspect", "0"])
    assert done.exit_code == 3, done.output
    document = json.loads((tmp_path / "r" / "lookup" / "run_1.json").read_text())
    assert document["verdict"] == "suspect"
    assert document["user_review"]["reasons"] == [
        {"turn": 1, "rule": "llm_review", "text": "contradicts the brief: It asks for a card it was told it has lost."}
    ]


def test_a_reviewer_that_finds_nothing_leaves_the_runs_verdict_to_its_checks(tmp_path, routed):
    server = routed({"faults": []})
    done = CliRunner().invoke(cli, ["run", str(project(tmp_path / "p", server, "Brief: {{ brief }}\nSaid: {{ transcript }}")), "--simulate", "llm", "--results", str(tmp_path / "r")])
    assert done.exit_code == 0, done.output
    document = json.loads((tmp_path / "r" / "lookup" / "run_1.json").read_text())
    assert (document["verdict"], document["user_review"]) == ("pass", {"verdict": "ok", "reasons": []})
    assert "suspect_attempts" not in document
    prompts = [body["messages"][-1]["content"] for body in server.bodies]
    assert "Brief: You want to know about your card.\nSaid: AGENT: Hi, how can I help?\nturn 1 CUSTOMER: my card please\nAGENT: Looked it up: my card please\n" in prompts

