"""Blame: each rule of the order on a hand-made conversation, and the evidence that changes its answer."""

from dataclasses import replace

import pytest

from dialogcheck.blame import ACTORS, Blame, RunError, blame, tally
from dialogcheck.judge.base import JudgeVerdict
from dialogcheck.judging import evaluate
from dialogcheck.results.model import Reason, UserReview
from dialogcheck.scenario.load import load_scenario
from tests.conftest import FakeJudge, bot, conv, tool, user

ORDER = {"card_id": "card_4417", "shipping": "standard"}


def scenario(tmp_path, goals: str):
    path = tmp_path / "s.yml"
    path.write_text(f"scenario:\n  name: Card\n  simulation_context: c\n  goals:\n{goals}")
    return load_scenario(path)


def judged(tmp_path, goals: str, *events: dict, judge=None):
    conversation = conv(*events)
    return conversation, evaluate(scenario(tmp_path, goals), conversation, judge=judge, no_judge=judge is None)


ORDERED_AS_ASKED = """\
    assertions:
      - tool_executed: {tool_name: order_replacement, source: local, arguments: {card_id: card_4417, shipping: standard}}
"""


def test_a_passing_conversation_has_no_blame(tmp_path):
    conversation, result = judged(tmp_path, ORDERED_AS_ASKED, user("my card card_4417 broke"), bot("ordering"),
                                  tool("order_replacement", ORDER))
    assert blame(conversation, result) is None


def test_a_wrong_argument_blames_the_agent_at_that_call(tmp_path):
    conversation, result = judged(
        tmp_path, ORDERED_AS_ASKED,
        user("my card card_4417 broke"), bot("which shipping?"), user("standard please"),
        tool("order_replacement", {"card_id": "card_4417", "shipping": "express"}), bot("done"),
    )
    found = blame(conversation, result)
    assert (found.actor, found.rule, found.event, found.turn) == ("agent", "wrong_call", 3, 2)
    assert found.checks == ("assertion 1",)
    assert found.reason == "`order_replacement` called with `arguments.shipping` other than expected"


def test_a_call_never_made_is_placed_where_what_it_needs_had_been_said(tmp_path):
    said_late = judged(tmp_path, ORDERED_AS_ASKED, user("my card broke"), bot("which card?"), user("card_4417, standard"),
                       bot("I cannot help with that"), user("ok"), bot("bye"))
    found = blame(*said_late)
    assert (found.actor, found.rule, found.event, found.turn) == ("agent", "missing", 3, 2)
    assert "after what it needs had been said (event 2)" in found.reason
    said_first = judged(tmp_path, ORDERED_AS_ASKED, user("card_4417 broke, standard shipping"), bot("I cannot help with that"),
                        user("ok"), bot("bye"))
    assert (blame(*said_first).event, blame(*said_first).turn) == (1, 1)


def test_a_call_whose_values_never_appear_is_placed_after_the_user_s_first_message(tmp_path):
    found = blame(*judged(tmp_path, ORDERED_AS_ASKED, bot("hi"), user("my card broke"), bot("sorry"), user("ok"), bot("bye")))
    assert (found.rule, found.event, found.turn) == ("missing_from_start", 2, 1)


CONFIRMED = """\
    sop:
      - id: confirm_first
        evaluator: {type: confirmation_requested, beforeToolSlug: order_replacement, pattern: "shall I"}
"""


def test_a_missing_confirmation_blames_the_call_made_without_it(tmp_path):
    unasked = judged(tmp_path, CONFIRMED, user("my card broke"), bot("looking"), tool("order_replacement", ORDER), bot("ordered"))
    found = blame(*unasked)
    assert (found.actor, found.rule, found.event, found.turn, found.checks) == ("agent", "forbidden_event", 2, 1, ("sop confirm_first",))
    asked = judged(tmp_path, CONFIRMED, user("my card broke"), bot("shall I order it?"), user("yes"), tool("order_replacement", ORDER))
    assert blame(*asked) is None


FORBIDDEN = """\
    assertions:
      - tool_executed: {tool_name: submit_transfer, source: local, times: 0}
      - bot_uttered: {text_matches: bye}
"""


def test_a_forbidden_call_comes_before_what_is_missing(tmp_path):
    found = blame(*judged(tmp_path, FORBIDDEN, user("hi"), bot("hello"), user("card"), tool("submit_transfer", {"amount": 5}), bot("ok")))
    assert (found.rule, found.event, found.checks) == ("forbidden_event", 3, ("assertion 1", "assertion 2"))
    assert found.reason == "`submit_transfer` called, which the scenario forbids"


def suspect(result, turn):
    return replace(result, user_review=UserReview.of([Reason(turn, "prompt_wording", "repeats the prompt")]))


def test_a_suspect_user_before_the_agent_s_mistake_blames_the_user(tmp_path):
    conversation, result = judged(
        tmp_path, ORDERED_AS_ASKED,
        user("my card card_4417 broke"), bot("which shipping?"), user("{{ shipping }}"),
        tool("order_replacement", {"card_id": "card_4417", "shipping": "express"}), bot("done"),
    )
    found = blame(conversation, suspect(result, 2))
    assert (found.actor, found.rule, found.turn, found.event) == ("user", "suspect_user", 2, 2)
    assert found.reason == "the simulated user: repeats the prompt (prompt_wording)"
    later = blame(conversation, suspect(result, 3))  # the agent's wrong call at turn 2 came first
    assert (later.actor, later.rule) == ("agent", "wrong_call")
    whole = blame(conversation, suspect(result, None))  # a fault of the whole conversation comes first
    assert (whole.actor, whole.turn, whole.event) == ("user", 1, 0)


def test_a_suspect_user_of_a_passing_conversation_is_blamed(tmp_path):
    conversation, result = judged(tmp_path, ORDERED_AS_ASKED, user("card_4417"), tool("order_replacement", ORDER))
    assert blame(conversation, suspect(result, 1)).actor == "user"


FAULTED = {"fault": {"kind": "timeout", "delay": 0}, "environment": True}


def faulted_run(tmp_path):
    return judged(
        tmp_path, ORDERED_AS_ASKED + "      - bot_uttered: {text_matches: ordered}\n",
        user("card_4417, standard"), tool("lookup_card", {"card_id": "card_4417"}, metadata=FAULTED, is_error=True,
                                            result="timeout"),
        bot("our systems are down"), user("ok"), bot("bye"),
    )


def test_a_fault_the_scenario_does_not_test_blames_the_environment(tmp_path):
    found = blame(*faulted_run(tmp_path))
    assert (found.actor, found.rule, found.event, found.turn) == ("environment", "unexpected_fault", 1, 1)
    assert found.reason == "`lookup_card` was answered with an injected timeout the scenario does not test"


def test_a_fault_the_scenario_injects_itself_leaves_the_agent_to_blame(tmp_path):
    found = blame(*faulted_run(tmp_path), expected_faults={"lookup_card"})
    assert (found.actor, found.rule, found.event, found.turn) == ("agent", "fault_mishandled", 2, 1)
    assert found.reason.startswith("assertion 1: after the injected fault of `lookup_card` at event 1")


def test_a_fault_after_the_agent_s_mistake_does_not_excuse_it(tmp_path):
    conversation, result = judged(
        tmp_path, ORDERED_AS_ASKED,
        user("card_4417"), tool("order_replacement", {"card_id": "card_4417", "shipping": "express"}),
        tool("lookup_card", {}, metadata=FAULTED, is_error=True, result="timeout"), bot("done"),
    )
    assert blame(conversation, result).actor == "agent"


CRITERION = """\
    criteria:
      - The agent explains when the card arrives
"""


def test_an_inconclusive_judge_blames_the_judge(tmp_path):
    unsure = FakeJudge(JudgeVerdict(False, "the transcript never says", inconclusive=True))
    found = blame(*judged(tmp_path, CRITERION, user("hi"), bot("ordered"), judge=unsure))
    assert (found.actor, found.rule, found.checks, found.turn) == ("judge", "judge_undecided", ("criterion 1",), None)
    assert found.reason == "the judge was inconclusive on criterion 1: inconclusive: the transcript never says"


def test_a_judge_that_fails_a_criterion_blames_the_agent_at_the_turn_it_cites(tmp_path):
    failing = FakeJudge(JudgeVerdict(False, "never said when", evidence=(3,)))
    found = blame(*judged(tmp_path, CRITERION, user("hi"), bot("hello"), user("when?"), bot("soon"), judge=failing))
    assert (found.actor, found.rule, found.event, found.turn) == ("agent", "judged_fail", 3, 2)


def test_a_deterministic_failure_beside_an_undecided_judge_is_the_agent_s(tmp_path):
    unsure = FakeJudge(JudgeVerdict(False, "unsure", inconclusive=True))
    found = blame(*judged(tmp_path, FORBIDDEN + CRITERION, user("hi"), tool("submit_transfer", {}), bot("bye"), judge=unsure))
    assert (found.actor, found.rule) == ("agent", "forbidden_event")


@pytest.mark.parametrize(("by", "actor", "rule"), [("agent", "environment", "agent_error"), ("harness", "unknown", "run_error")])
def test_a_run_that_ended_early(by, actor, rule):
    conversation = conv(user("hi"), bot("hello"))
    found = blame(conversation, None, error=RunError(by, "connection refused"))
    assert (found.actor, found.rule, found.event, found.turn) == (actor, rule, 1, 1)
    assert "connection refused" in found.reason


def test_the_source_index_is_the_decisive_message_s_place_in_its_file(tmp_path):
    conversation, result = judged(
        tmp_path, ORDERED_AS_ASKED,
        user("card_4417 standard", metadata={"source_index": 1}),
        tool("order_replacement", {"card_id": "card_4417", "shipping": "express"}, metadata={"source_index": 4}),
    )
    assert blame(conversation, result).source_index == 4
    spans = conv(user("card_4417 standard"), tool("order_replacement", {"shipping": "express"}, metadata={"span_id": "00f067aa0ba902b7"}))
    assert blame(spans, evaluate(scenario(tmp_path, ORDERED_AS_ASKED), spans, no_judge=True)).source_index == "00f067aa0ba902b7"
    bare = conv(user("card_4417 standard"), tool("order_replacement", {"shipping": "express"}))
    assert blame(bare, evaluate(scenario(tmp_path, ORDERED_AS_ASKED), bare, no_judge=True)).source_index is None


def test_tally_counts_every_actor():
    made = [Blame("agent", 1, 1, None, (), "", "wrong_call"), Blame("user", 1, 0, None, (), "", "suspect_user"),
            Blame("agent", 2, 3, None, (), "", "missing"), None]
    assert tally(made) == {"agent": 2, "user": 1, "environment": 0, "judge": 0, "unknown": 0}
    assert tuple(tally([])) == ACTORS


def test_the_faults_a_scenario_gives_are_the_ones_it_tests():
    from pathlib import Path

    from dialogcheck.blame import tested_faults

    scenarios = Path(__file__).parents[1] / "examples" / "card_replace" / "eval" / "scenarios"
    assert tested_faults(load_scenario(scenarios / "run_order_timeout.yml")) == {"order_replacement"}
    assert tested_faults(load_scenario(scenarios / "run_order_placed.yml")) == frozenset()  # the environment's own
    assert tested_faults(load_scenario(scenarios / "card_replace_damaged.yml")) == frozenset()  # no environment


def test_checks_that_could_not_be_decided_blame_no_one():
    from pathlib import Path

    placed = load_scenario(Path(__file__).parents[1] / "examples" / "card_replace" / "eval" / "scenarios" / "run_order_timeout.yml")
    conversation = conv(user("my card broke"), bot("Your replacement card has been ordered", utter="utter_replacement_ordered"))
    found = blame(conversation, evaluate(placed, conversation, no_judge=True))
    assert (found.actor, found.rule, found.event, found.checks) == ("unknown", "check_errored", None, ("assertion 2",))
    assert found.reason.startswith("assertion 2 could not be decided: no environment state was recorded")
