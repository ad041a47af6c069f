"""The simulated-user review: each rule fires on the fault it names and stays quiet for ordinary customers.

Transcripts are shaped like tau2-bench's airline runs (an agent that greets,
asks for ids and confirms, a customer who answers in a sentence or two).
"""

from __future__ import annotations

import pytest

from dialogcheck import load_scenario
from dialogcheck.events.model import opens_turn
from dialogcheck.events.parse import conversation_from_dicts
from dialogcheck.simulate.review import (
    RULES,
    Brief,
    Line,
    Prompts,
    Reason,
    UserReview,
    review_conversation,
    review_user,
    transcript_of,
)
from dialogcheck.simulate.review.rules import AgentEcho, BriefCopy, GoalUnstated, Loop, PromptWording
from tests.conftest import REPO

BRIEF = Brief(
    "You want to cancel your reservation ZFA04Y because your plans changed, and get a refund to the original payment.",
    (
        "You are Noah Muller. Your user id is noah_muller_9847.",
        "You do not know your membership level.",
        "If the agent offers a travel certificate instead of a refund, refuse it. "
        "End every reply with 'Thanks for being so patient with me today.'",
    ),
)

#: An ordinary customer: short messages, questions, the id the brief gave, "yes", "thanks", a goodbye.
ORDINARY = (
    ("agent", "Hi! How can I help you today?"),
    ("user", "Hi, I need to cancel a reservation."),
    ("agent", "Sure. Could you give me your user id and the reservation number?"),
    ("user", "My user id is noah_muller_9847 and the reservation is ZFA04Y."),
    ("agent", "Thanks. Why would you like to cancel? Change of plan, airline cancelled, or other reasons?"),
    ("user", "Change of plan."),
    ("agent", "The reservation was booked more than 24 hours ago, so I can offer a travel certificate instead of a refund."),
    ("user", "I'd rather get the refund to my card. Is that possible? Thanks for being so patient with me today."),
    ("agent", "Your ticket has travel insurance, so a full refund applies. Shall I cancel reservation ZFA04Y now? (yes/no)"),
    ("user", "yes"),
    ("agent", "Done: ZFA04Y is cancelled and the refund goes to the original payment within 5 to 7 business days."),
    ("user", "Thanks"),
    ("agent", "Is there anything else I can help you with?"),
    ("user", "No, that's all. Have a great day!"),
)


def lines(*said: tuple[str, str]) -> tuple[Line, ...]:
    """The lines of a transcript, each user message that opens a turn in a conversation opening the next."""
    turn, out = 0, []
    for speaker, text in said:
        if speaker == "user" and opens_turn(text):
            turn += 1
        out.append(Line(speaker, text, turn))
    return tuple(out)


def with_user_message(n: int, text: str, said=ORDINARY) -> tuple[Line, ...]:
    """The ordinary transcript with its `n`th user message (from 1) replaced."""
    positions = [i for i, (speaker, _) in enumerate(said) if speaker == "user"]
    changed = list(said)
    changed[positions[n - 1]] = ("user", text)
    return lines(*changed)


def reasons_of(transcript, brief=BRIEF, **kwargs) -> list[tuple[int | None, str]]:
    return [(r.turn, r.rule) for r in review_user(transcript, brief, **kwargs).reasons]


def test_an_ordinary_customer_is_ok():
    review = review_user(lines(*ORDINARY), BRIEF)
    assert review == UserReview("ok", ())


def test_every_rule_has_its_own_name():
    assert [rule.name for rule in RULES] == [
        "prompt_wording", "agent_echo", "speaks_as_agent", "breaks_character", "brief_copy", "empty", "loop", "goal_unstated",
    ]


# --------------------------------------------------------------------------- prompt_wording


@pytest.mark.parametrize(
    "text, what",
    [
        ("Your next message.", "repeats the prompt's own words"),  # what SmolLM2 wrote as the customer
        ("Move toward your goal one step at a time, please", "repeats the prompt's own words"),
        ('{"message": "I want to cancel ZFA04Y", "done": false}', "repeats the JSON shape"),
        ('I want to cancel ZFA04Y", "done": true', "repeats the JSON shape"),
        ("{{ simulation_context }}", "repeats the prompt's template `{{ simulation_context }}`"),
        ("My goal: simulation_context", "repeats the prompt's template `simulation_context`"),
        ("{% if transcript %}", "repeats the prompt's template"),
    ],
)
def test_prompt_wording_fires_on_the_templates_words_placeholders_and_answer_shape(text, what):
    review = review_user(with_user_message(3, text), BRIEF)
    assert review.verdict == "suspect"
    (reason,) = [r for r in review.reasons if r.rule == "prompt_wording"]
    assert reason.turn == 3 and what in reason.text


@pytest.mark.parametrize(
    "text",
    ["I don't know it.", "Could you answer what I asked?", "One or two, I think.", "The agent said that last time.", "Is this a test fee?",
     "Nothing else."],  # two words the template holds ("and nothing else"): too short to be its wording
)
def test_prompt_wording_spares_customers_who_use_a_few_of_the_same_words(text):
    assert reasons_of(with_user_message(3, text)) == []


def test_prompt_wording_reads_the_projects_own_template():
    prompts = Prompts(("You are {{ persona_name }}. Keep every reply under twenty words and never reveal the plan.",))
    assert reasons_of(with_user_message(2, "Keep every reply under twenty words."), prompts=prompts) == [(2, "prompt_wording")]
    assert reasons_of(with_user_message(2, "I am persona_name."), prompts=prompts) == [(2, "prompt_wording")]
    # The shipped template's words are not this project's.
    assert reasons_of(with_user_message(2, "Your next message."), prompts=prompts) == []


# --------------------------------------------------------------------------- agent_echo


def test_agent_echo_fires_on_the_agents_message_said_back():
    agent = ORDINARY[4][1]
    assert reasons_of(with_user_message(3, agent)) == [(3, "agent_echo")]
    # Its last question alone, the whole of the user's message.
    assert reasons_of(with_user_message(3, "Why would you like to cancel?")) == [(3, "agent_echo")]
    # Nearly the same: a word changed.
    assert reasons_of(with_user_message(3, agent.replace("Thanks.", "Okay."))) == [(3, "agent_echo")]


@pytest.mark.parametrize(
    "text",
    [
        "Change of plan.",  # the agent's own words, but a short answer
        "Yes, please cancel reservation ZFA04Y now.",  # a confirmation restating the question
        "Why would I cancel? Because my plans changed.",
    ],
)
def test_agent_echo_spares_answers_that_reuse_the_agents_words(text):
    assert reasons_of(with_user_message(3, text)) == []


def test_agent_echo_spares_a_confirmation_in_the_agents_words():
    # "Shall I cancel reservation ZFA04Y now? (yes/no)": four of its words in a row, over half of the answer.
    assert reasons_of(with_user_message(5, "Yes, please cancel reservation ZFA04Y now.")) == []


def test_agent_echo_compares_with_the_agents_messages_since_the_users_last():
    said = (("agent", "Hello."), ("user", "I need to cancel my reservation."), ("agent", "Could you give me your user id please?"),
            ("agent", "I also need the reservation number."), ("user", "Could you give me your user id please?"))
    assert reasons_of(lines(*said)) == [(2, "agent_echo")]
    # A rule is its thresholds: one that asks for longer messages lets this one go.
    assert reasons_of(lines(*said), rules=[AgentEcho(min_words=9)]) == []


# --------------------------------------------------------------------------- speaks_as_agent


@pytest.mark.parametrize(
    "text",
    [
        "Hi! How can I help you today?",
        "Is there anything else I can help you with?",
        "Thank you for contacting us. Your reservation is cancelled.",
        "Sure.\nAgent: I have cancelled ZFA04Y.",
        "Assistant: please hold on.",
    ],
)
def test_speaks_as_agent_fires_on_the_agents_lines_and_labels(text):
    assert reasons_of(with_user_message(2, text)) == [(2, "speaks_as_agent")]


@pytest.mark.parametrize(
    "text",
    ["How can I get my refund faster?", "Anything else I can do to speed this up?", "The agent on the phone told me to cancel.",
     "Thank you for your help!"],
)
def test_speaks_as_agent_spares_a_customer_asking_for_help(text):
    assert reasons_of(with_user_message(2, text)) == []


# --------------------------------------------------------------------------- breaks_character


@pytest.mark.parametrize(
    "text",
    [
        "As an AI, I don't have a user id.",
        "I'm an AI language model and cannot do that.",
        "Cancel it please. (This is a test conversation.)",
        "I am a simulated user, so I will stop here.",
        "Sorry, I should stay in character.",
        "User: My user id is noah_muller_9847.",
    ],
)
def test_breaks_character_fires_when_the_user_steps_out_of_the_role(text):
    assert reasons_of(with_user_message(2, text)) == [(2, "breaks_character")]


@pytest.mark.parametrize(
    "text",
    ["Is this a test booking or a real one?", "My user id is noah_muller_9847.", "I'm a loyal customer, you know.",
     "The character limit on your form cut my name."],
)
def test_breaks_character_spares_a_customer(text):
    assert reasons_of(with_user_message(2, text)) == []


# --------------------------------------------------------------------------- brief_copy


def test_brief_copy_fires_on_a_long_verbatim_stretch_of_the_brief():
    leak = "You want to cancel your reservation ZFA04Y because your plans changed, and get a refund to the original payment."
    review = review_user(with_user_message(1, leak), BRIEF)
    assert [(r.turn, r.rule) for r in review.reasons] == [(1, "brief_copy")]
    assert review.reasons[0].text.startswith("copies 19 words of the brief verbatim: \"you want to cancel")


def test_brief_copy_fires_on_a_short_stretch_that_still_says_you():
    assert reasons_of(with_user_message(2, "You are Noah Muller. Your user id is noah_muller_9847.")) == [(2, "brief_copy")]
    assert reasons_of(with_user_message(2, "You do not know your membership level.")) == [(2, "brief_copy")]


@pytest.mark.parametrize(
    "text",
    [
        "My user id is noah_muller_9847.",  # the brief's fact, said as "I"
        "I want to cancel reservation ZFA04Y because my plans changed, and get a refund to the original payment.",
        "Can you refund it to the original payment?",
        "Refund please. Thanks for being so patient with me today.",  # words the brief quotes for the user to say
    ],
)
def test_brief_copy_spares_the_briefs_facts_and_quoted_lines_in_a_customers_mouth(text):
    assert reasons_of(with_user_message(2, text)) == []


def test_brief_copy_thresholds_are_measured_lengths():
    twenty = Brief("the quick brown fox jumps over the lazy dog and runs far away into the deep green forest before the night falls")
    said = lines(("user", "the quick brown fox jumps over the lazy dog and runs far away into the deep green forest before it"))
    assert reasons_of(said, twenty, rules=[BriefCopy()]) == []  # 19 words in a row
    said = lines(("user", "the quick brown fox jumps over the lazy dog and runs far away into the deep green forest before the"))
    assert reasons_of(said, twenty, rules=[BriefCopy()]) == [(1, "brief_copy")]  # 20


# --------------------------------------------------------------------------- empty


@pytest.mark.parametrize("text, turn", [("", 2), ("   ", 2), ("\n", 2), ("...", 3)])  # a blank message opens no turn
def test_empty_fires_on_a_blank_message_the_conversation_went_on_after(text, turn):
    review = review_user(with_user_message(3, text), BRIEF)
    (reason,) = review.reasons
    assert (reason.turn, reason.rule) == (turn, "empty")
    assert "sends an empty message" in reason.text


def test_empty_spares_a_blank_last_message_the_way_a_simulated_user_ends():
    said = (*ORDINARY[:-1], ("user", ""))
    assert reasons_of(lines(*said)) == []
    assert reasons_of(with_user_message(4, "?")) == [(4, "empty")]  # a lone question mark says nothing either


# --------------------------------------------------------------------------- loop


def test_loop_fires_on_the_same_message_three_times_running():
    said = list(ORDINARY)
    said[5] = said[7] = said[3]
    assert reasons_of(lines(*said)) == [(4, "loop")]
    said[7] = ("user", said[3][1] + " Please.")  # nearly the same
    assert reasons_of(lines(*said)) == [(4, "loop")]


def test_loop_spares_twice_and_short_answers():
    said = list(ORDINARY)
    said[5] = said[3]
    assert reasons_of(lines(*said)) == []
    said = [("agent", "Confirm the cancellation?"), ("user", "Yes."), ("agent", "And the refund to your card?"), ("user", "Yes."),
            ("agent", "And a receipt by email?"), ("user", "Yes."), ("agent", "Done. You cancel ZFA04Y."), ("user", "Cancel ZFA04Y, thanks.")]
    assert reasons_of(lines(*said)) == []
    assert reasons_of(lines(*said), rules=[Loop(min_words=1)]) == [(3, "loop")]


# --------------------------------------------------------------------------- goal_unstated


@pytest.mark.parametrize("first", ["Hi!", "Hello, I need some help.", "Your next message.", "Hi, can you help me with something?"])
def test_goal_unstated_fires_when_the_run_ends_before_the_user_says_what_it_wants(first):
    said = lines(("agent", "Hi! How can I help you today?"), ("user", first), ("agent", "Sorry, I can't help with that."))
    assert ("goal_unstated" in [r.rule for r in review_user(said, BRIEF).reasons])
    assert [r for r in review_user(said, BRIEF).reasons if r.rule == "goal_unstated"] == [
        Reason(None, "goal_unstated", "the conversation ended before the user said what it wanted (no message speaks of the brief's goal)")
    ]


def test_goal_unstated_fires_when_the_user_said_nothing_at_all():
    said = lines(("agent", "Hi! How can I help you today?"))
    assert review_user(said, BRIEF).reasons == (Reason(None, "goal_unstated", "the conversation ended before the user said anything"),)


@pytest.mark.parametrize("first", ["I need to cancel a booking.", "Hi, I'd like a refund.", "Quick question about my reservations"])
def test_goal_unstated_spares_a_user_who_said_what_it_came_for_even_if_the_agent_failed(first):
    said = lines(("agent", "Hi! How can I help you today?"), ("user", first), ("agent", "Sorry, I can't help with that."), ("user", "Okay, bye."))
    assert reasons_of(said) == []


def test_goal_unstated_needs_a_brief_with_a_goal():
    said = lines(("user", "Hi!"))
    assert reasons_of(said, Brief("")) == []
    assert reasons_of(said, Brief("You are polite.")) == [(None, "goal_unstated")]
    assert reasons_of(lines(("user", "Hi, my card is broken")), Brief("Your card is broken."), rules=[GoalUnstated(min_shared=2)]) == []


# --------------------------------------------------------------------------- the review as a whole


def test_every_reason_is_listed_rule_by_rule_and_the_verdict_follows():
    said = list(ORDINARY)
    said[1] = ("user", "Your next message.")
    said[3] = ("user", "As an AI I cannot say.")
    review = review_user(lines(*said), BRIEF)
    assert review.verdict == "suspect"
    assert [(r.turn, r.rule) for r in review.reasons] == [(1, "prompt_wording"), (2, "breaks_character")]
    assert review.rules() == ("prompt_wording", "breaks_character")
    assert review_user(lines(*said), BRIEF, rules=[]) == UserReview("ok", ())
    assert review_user(lines(*said), BRIEF, rules=[PromptWording()]).rules() == ("prompt_wording",)


def test_the_transcript_of_a_conversation_skips_commands_and_silent_agent_events():
    conversation = conversation_from_dicts(
        [
            {"event": "user", "text": "/session_start"},
            {"event": "bot", "text": "Hi! How can I help you today?"},
            {"event": "user", "text": "Cancel ZFA04Y please."},
            {"event": "tool_executed", "tool_name": "cancel_reservation", "source": "local"},
            {"event": "bot", "text": None},
            {"event": "user", "text": "/affirm"},
            {"event": "user", "text": ""},
            {"event": "bot", "text": "Done."},
        ],
        source="x",
    )
    assert transcript_of(conversation) == (
        Line("agent", "Hi! How can I help you today?", 0),
        Line("user", "Cancel ZFA04Y please.", 1),
        Line("user", "", 1),
        Line("agent", "Done.", 1),
    )
    assert review_conversation(conversation, BRIEF) == review_user(transcript_of(conversation), BRIEF) == UserReview("ok")


def test_the_shipped_prompts_are_read_from_the_package():
    prompts = Prompts.bundled()
    assert "simulation_context" in prompts.variables and "transcript" not in prompts.variables
    assert ("write", "your", "next", "message") in {tuple(run[i : i + 4]) for run in prompts.literal_runs for i in range(len(run))}


def test_the_scripted_customers_of_the_bundled_example_pass_against_their_own_briefs():
    scenarios = [load_scenario(path) for path in sorted((REPO / "examples").rglob("eval/scenarios/*.yml"))]
    scripted = [s for s in scenarios if s.script]
    assert len(scripted) >= 5
    for scenario in scripted:
        said = lines(*(("user", text) for text in scenario.script))
        assert review_user(said, Brief(scenario.simulation_context)).reasons == (), scenario.slug
