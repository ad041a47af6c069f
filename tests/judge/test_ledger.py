"""The event ledger and transcript: what the judge (and a person) reads about a run."""

from dialogcheck.events import load_conversation
from dialogcheck.judge.ledger import render_ledger
from dialogcheck.judge.transcript import render_transcript
from tests.conftest import EXAMPLE, bot, conv, ev, tool, user


def test_ledger_of_the_digression_example():
    conversation = load_conversation(EXAMPLE / "conversations" / "damaged_card_digression.jsonl")
    assert render_ledger(conversation).splitlines()[:9] == [
        "turn 0:",
        "  template utter_greet",
        "turn 1:",
        "  skill card_replace started",
        "  block card_replace/main entered",
        "  tool lookup_card(customer_id='cus_981') -> ok "
        "'{\"cards\": [{\"card_id\": \"card_4417\", \"last4\": \"4417\", \"status\": \"active\"}]}'",
        "  tool check_balance(account_id='acc_12') -> ok {\"balance\":1520.75,\"currency\":\"EUR\"}",
        "  memory card_replace.selected_card_id = 'card_4417'",
        "  memory card_replace.replacement_reason = 'damaged'",
    ]


def test_ledger_lines_for_every_kind_of_event():
    conversation = conv(
        user("/session_start"),
        user("hi"),
        ev("skill_activated", skill_id="s"),
        ev("ordered_block_cancelled", skill_id="s", block_id="main", step_id="confirm"),
        ev("skill_cancelled", skill_id="s", step_id="confirm"),
        ev("memory_set", key="s.k", value={"a": [1, True]}),
        ev("memory_cleared", key="s.k"),
        tool("pay", {"amount": 5}, source="mcp", mcp_server="bank", is_error=True, error_message="limit"),
        tool("complete_skill"),
        bot("free text is only in the transcript"),
        bot("Pick one", "utter_pick", [{"title": "A"}, {"title": "B"}]),
        ev("slot", name="x"),
    )
    assert render_ledger(conversation) == "\n".join(
        [
            "turn 1:",
            "  skill s started",
            "  block s/main cancelled at step confirm",
            "  skill s cancelled at step confirm",
            '  memory s.k = {"a":[1,true]}',
            "  memory s.k cleared",
            "  tool pay(amount=5) [mcp bank] -> error: 'limit'",
            "  template utter_pick [buttons: A | B]",
        ]
    )


def test_long_values_are_cut():
    line = render_ledger(conv(ev("memory_set", key="k", value="x" * 500))).splitlines()[1]
    assert len(line) < 90 and line.endswith("…")


def test_empty_ledger():
    assert render_ledger(conv(user("hi"), bot("hello"))) == "(no events recorded)"


def test_transcript_leaves_out_commands_and_shows_buttons():
    conversation = conv(user("/session_start"), bot("Hi!"), user("  replace my card "), bot(None, buttons=[{"title": "Yes"}]))
    assert render_transcript(conversation) == "AGENT: Hi!\nUSER: replace my card\nAGENT: [buttons: Yes]"


def test_the_ledger_leaves_out_the_framework_tools_its_subject_names():
    """An agent that owns a tool named `cancel` sets `framework_tools`; the judge then sees that tool run."""
    from dataclasses import replace

    from dialogcheck.judging import judge_requests
    from dialogcheck.scenario.model import Goals, Scenario

    conversation = conv(user("hi"), tool("cancel", {"order": "o-1"}), tool("activate"))
    assert render_ledger(conversation) == "(no events recorded)"
    assert render_ledger(conversation, framework_tools=frozenset({"activate"})) == "turn 1:\n  tool cancel(order='o-1') -> ok"
    scenario = Scenario("s", "s", "c", goals=Goals(criteria=("c",)))
    assert [r.framework_tools for _, r in judge_requests(replace(scenario, framework_tools=frozenset({"activate"})))] == [
        frozenset({"activate"})
    ]
