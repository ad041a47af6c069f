"""The LLM user: a chat from the user's side, its prompt's variables and forms, its seed, and the tokens it spends."""

from __future__ import annotations

import asyncio
import hashlib
import textwrap

import pytest

from dialogcheck.config import LLMSettings
from dialogcheck.errors import LoadError
from dialogcheck.events.transcript import TranscriptLine
from dialogcheck.llm.base import ChatResponse, LLMError, Usage
from dialogcheck.llm.structured import NoValidAnswer
from dialogcheck.llm.templates import Templates
from dialogcheck.results.model import SimulatorInfo
from dialogcheck.runner.scenarios import RunOptions, ScenarioBatch
from dialogcheck.scenario.load import load_scenario
from dialogcheck.scenario.traits import TRAITS
from dialogcheck.simulate.user import OPENING, LLMUser, chat_messages

OPENAI = LLMSettings(provider="openai", model="sim", options={"temperature": 0.3})
ANTHROPIC = LLMSettings(provider="anthropic", model="claude-sim")
SCENARIO = """\
scenario:
  name: Card
  simulation_context: You want a new card.
  persona: A retired teacher.
  unknown_info: Your PIN.
"""


class FakeLLM:
    """Answers from a list, 50 tokens in and 5 out (and $0.01) a call; keeps each request."""

    def __init__(self, *answers: str):
        self.answers, self.requests = list(answers), []

    async def complete(self, request):
        self.requests.append(request)
        return ChatResponse(self.answers.pop(0), request.model, Usage(50, 5, 0.01))


def scenario(tmp_path, text=SCENARIO):
    path = tmp_path / "card.yml"
    path.write_text(text)
    return load_scenario(path)


def roles(messages):
    return [(m.role, m.content) for m in messages]


def test_the_agent_is_the_other_side_of_the_chat():
    transcript = [TranscriptLine("agent", "Hi!"), TranscriptLine("agent", "How can I help?"), TranscriptLine("user", "a new card"), TranscriptLine("agent", "Sure.")]
    assert roles(chat_messages("brief", transcript)) == [
        ("system", "brief"),
        ("user", "Hi!\n\nHow can I help?"),  # one side's messages in a row are one message: roles alternate
        ("assistant", '{"message":"a new card","done":false}'),
        ("user", "Sure."),
    ]


def test_a_chat_the_agent_did_not_open_starts_with_the_opening():
    assert roles(chat_messages("brief", [])) == [("system", "brief"), ("user", OPENING)]
    assert roles(chat_messages("brief", [TranscriptLine("user", "hello"), TranscriptLine("agent", "Hi")]))[1:3] == [
        ("user", OPENING),
        ("assistant", '{"message":"hello","done":false}'),
    ]


def test_the_prompt_shows_the_user_fields_and_the_trait(tmp_path):
    llm = FakeLLM('{"message": "hello", "done": false}')
    user = LLMUser(llm, OPENAI, scenario(tmp_path)).for_run("skeptical", None)
    turn = asyncio.run(user.next_turn([]))
    assert (turn.message, turn.done) == ("hello", False)
    system = llm.requests[0].messages[0].content
    assert "You want a new card." in system and "A retired teacher." in system and "Your PIN." in system
    assert TRAITS["skeptical"] in system
    assert "## What you know" not in system and "## How to behave" not in system  # fields not given leave no heading
    assert user.trait == "skeptical"


def test_without_fields_or_trait_the_prompt_is_the_brief_alone():
    llm = FakeLLM('{"message": "hello", "done": false}')
    asyncio.run(LLMUser(llm, OPENAI, "You want a new card.").next_turn([]))
    system = llm.requests[0].messages[0].content
    assert "You want a new card." in system
    assert "## Who you are as a person" not in system and "## How you come across" not in system and not any(t in system for t in TRAITS.values())


def test_usage_adds_up_over_turns_and_info_records_model_temperature_seed_and_prompt_hash(tmp_path):
    llm = FakeLLM('{"message": "hello", "done": false}', '{"message": "bye", "done": true}')
    user = LLMUser(llm, OPENAI, scenario(tmp_path), seed=11)
    asyncio.run(user.next_turn([TranscriptLine("agent", "Hi")]))
    asyncio.run(user.next_turn([TranscriptLine("agent", "Hi"), TranscriptLine("user", "hello"), TranscriptLine("agent", "ok")]))
    assert [r.seed for r in llm.requests] == [11, 11]
    system = llm.requests[0].messages[0].content
    assert user.info() == SimulatorInfo("sim", 0.3, 11, hashlib.sha256(system.encode()).hexdigest(), Usage(100, 10, 0.02))


def test_anthropic_takes_no_seed_so_none_is_sent_or_recorded(tmp_path):
    llm = FakeLLM('{"message": "hello", "done": false}')
    user = LLMUser(llm, ANTHROPIC, scenario(tmp_path)).for_run(None, 11)
    asyncio.run(user.next_turn([]))
    assert llm.requests[0].seed is None and user.info().seed is None


def test_the_tokens_of_malformed_answers_are_kept_when_the_simulator_fails(tmp_path):
    llm = FakeLLM("Your next message.", "no", "still no")
    user = LLMUser(llm, OPENAI, scenario(tmp_path))
    with pytest.raises(NoValidAnswer):
        asyncio.run(user.next_turn([]))
    assert user.info().usage == Usage(150, 15, 0.03)


def test_a_seed_changes_the_cache_key_only_when_given():
    from dialogcheck.llm.base import ChatMessage, ChatRequest

    plain = ChatRequest("openai", "m", (ChatMessage("user", "x"),))
    assert b"seed" not in plain.identity()  # a request without one keeps the key it always had
    assert ChatRequest("openai", "m", (ChatMessage("user", "x"),), seed=3).identity() != plain.identity()


def test_a_project_template_that_reads_the_transcript_keeps_its_one_message_form(tmp_path):
    template = tmp_path / "user.j2"
    template.write_text("Brief: {{ simulation_context }}\nSo far:\n{{ transcript }}\nYour move.")
    llm = FakeLLM('{"message": "hello", "done": false}')
    user = LLMUser(llm, OPENAI, "You want a new card.", Templates({"simulated_user_prompt": template}))
    asyncio.run(user.next_turn([TranscriptLine("agent", "Hi"), TranscriptLine("user", "yo"), TranscriptLine("agent", "Yes?")]))
    assert roles(llm.requests[0].messages) == [("user", "Brief: You want a new card.\nSo far:\nAGENT: Hi\nUSER: yo\nAGENT: Yes?\nYour move.\n")]
    expected = hashlib.sha256(b"Brief: You want a new card.\nSo far:\n\nYour move.\n").hexdigest()
    assert user.info().prompt_sha256 == expected  # the prompt before any conversation


def project(tmp_path, template: str, scenario_text: str = SCENARIO):
    root = tmp_path / "p"
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "user.j2").write_text(template)
    (root / "eval" / "conftest.yml").write_text(
        textwrap.dedent(
            """\
            agent: {type: http, url: 'http://127.0.0.1:9/'}
            simulation:
              llm: {provider: openai_compatible, base_url: 'http://127.0.0.1:9/v1', model: sim}
              simulated_user_prompt: eval/user.j2
            """
        )
    )
    (root / "eval" / "scenarios" / "card.yml").write_text(scenario_text)
    return root


def test_a_project_template_that_would_drop_a_given_field_or_trait_is_bad_input(tmp_path):
    root = project(tmp_path, "{{ simulation_context }} {{ persona }}")  # no unknown_info
    with pytest.raises(LoadError) as info:
        ScenarioBatch([root], RunOptions(personas=["terse"]))
    assert str(info.value) == (
        f"{root / 'eval' / 'user.j2'}:1:1: the simulated user's prompt shows no `{{{{ unknown_info }}}}`, `{{{{ trait }}}}`,"
        " which scenario `card` gives (add it to the template)"
    )


def test_a_project_template_that_shows_what_the_scenario_gives_is_fine(tmp_path):
    root = project(tmp_path, "{{ simulation_context }} {{ persona }} {{ unknown_info }} {{ trait }} {{ transcript }}")
    batch = ScenarioBatch([root], RunOptions(personas=["terse"], seed=5))
    assert [(item.personas, item.seed) for item in batch.plan.scenarios] == [(["terse"], 5)]


def test_the_library_refuses_an_unknown_trait_and_a_seed_out_of_range(tmp_path):
    root = project(tmp_path, "{{ simulation_context }}", "scenario: {name: C, simulation_context: x}\n")
    with pytest.raises(LoadError) as info:
        ScenarioBatch([root], RunOptions(personas=["terse", "impatiant", "terse"], seed=-1))
    assert str(info.value).splitlines() == [
        f"--persona:1:1: unknown persona trait 'impatiant' (did you mean `impatient`?); known: {', '.join(TRAITS)}",
        "--persona:1:1: a trait is named twice",
        "--seed:1:1: the seed must be an integer from 0 to 2147483647, got -1",
    ]


def test_a_broken_simulator_still_errors(tmp_path):
    class Down:
        async def complete(self, request):
            raise LLMError("HTTP 500")

    with pytest.raises(LLMError):
        asyncio.run(LLMUser(Down(), OPENAI, "x").next_turn([]))


def test_a_simulator_that_repeats_the_chat_s_opening_is_caught_by_the_review():
    from dialogcheck.simulate.review import Brief, Line, review_user

    brief = Brief("You want a new card.")
    echoed = [Line("user", "The agent has not written anything yet. Write your first message.", 1), Line("agent", "Sorry?", 1)]
    assert "prompt_wording" in review_user(echoed, brief).rules()
    customer = [Line("user", "Hi, my card is broken and I need a new one.", 1), Line("agent", "Sure.", 1)]
    assert review_user(customer, brief).verdict == "ok"


def test_personas_for_a_batch_that_only_follows_scripts_are_refused(tmp_path):
    root = project(tmp_path, "{{ simulation_context }} {{ trait }} {{ transcript }}", "scenario: {name: C, simulation_context: x, script: [hi]}\n")
    with pytest.raises(LoadError) as info:
        ScenarioBatch([root], RunOptions(personas=["terse"]))
    assert str(info.value) == "--persona:1:1: --persona is played by an LLM user, and every scenario here follows its `script` (add --simulate llm)"
    batch = ScenarioBatch([root], RunOptions(personas=["terse"], simulate="llm"))
    assert batch.plan.scenarios[0].personas == ["terse"] and batch.plan.total_runs == 1
