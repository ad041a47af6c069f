"""A suspect run or conversation in the results: counted apart, read back whole, out of the per-check statistics,
shown apart by the text summary, the exit code and JUnit."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import orjson
import pytest

from dialogcheck._cli.output import EXIT_ERRORED, EXIT_FAILED, EXIT_OK, check_exit_code, exit_code_of
from dialogcheck.checks.base import CheckResult, Outcome
from dialogcheck.errors import LoadError
from dialogcheck.report.check_text import render_conversation
from dialogcheck.report.junit import render_junit, render_junit_check
from dialogcheck.report.run_text import render_run, render_summary
from dialogcheck.results.codec import conversation_document, decode_conversation, decode_run, run_document, summary_document
from dialogcheck.results.model import BatchResult, CheckRef, ConversationResult, Counts, Reason, UserReview
from dialogcheck.results.stats import CheckStats, run_stats
from tests.results.test_results import record

SUSPECT = UserReview.of([Reason(1, "prompt_wording", 'repeats the prompt\'s own words: "Your next message."'), Reason(None, "goal_unstated", "never said")])


def judged(outcome: Outcome, review: UserReview | None = None) -> ConversationResult:
    check = CheckResult(CheckRef("bot_uttered", "bot_uttered 'ordered'"), outcome, f"it {outcome}")
    return ConversationResult("a/run_1", "Scenario a", assertions=(check,), user_review=review)


def suspect_run(number=1, attempts=2):
    return replace(record(number=number, verdict=Outcome.SUSPECT), conversation=judged(Outcome.FAIL), user_review=SUSPECT, suspect_attempts=attempts)


def test_suspect_is_counted_apart_and_is_the_worst_only_of_runs_that_neither_failed_nor_errored():
    assert Counts([Outcome.PASS, Outcome.SUSPECT]).worst is Outcome.SUSPECT
    assert Counts([Outcome.SUSPECT, Outcome.ERROR]).worst is Outcome.ERROR
    assert Counts([Outcome.SUSPECT, Outcome.FAIL]).worst is Outcome.FAIL
    counts = Counts([Outcome.PASS, Outcome.SUSPECT, Outcome.SUSPECT])
    assert (counts.passed, counts.failed, counts.errored, counts.suspect, counts.total) == (1, 0, 0, 2, 3)
    assert UserReview.of([]) == UserReview("ok") and not UserReview("ok").suspect and SUSPECT.suspect


def test_suspect_runs_exit_3_as_errored_ones_and_failures_still_come_first():
    assert exit_code_of(Outcome.SUSPECT) == EXIT_ERRORED == 3
    assert exit_code_of(Counts([Outcome.PASS, Outcome.SUSPECT]).worst) == 3
    assert exit_code_of(Counts([Outcome.FAIL, Outcome.SUSPECT]).worst) == EXIT_FAILED
    assert check_exit_code(Counts([Outcome.PASS, Outcome.SUSPECT]), False) == 3
    assert check_exit_code(Counts([Outcome.PASS]), False) == EXIT_OK


def test_a_conversation_whose_user_is_suspect_is_suspect_whatever_its_checks():
    assert judged(Outcome.FAIL, SUSPECT).verdict is Outcome.SUSPECT
    assert judged(Outcome.FAIL, UserReview("ok")).verdict is Outcome.FAIL
    assert judged(Outcome.PASS).verdict is Outcome.PASS


def test_a_run_and_its_review_are_read_back_as_written():
    run = suspect_run()
    document = orjson.loads(orjson.dumps(run_document(run)))
    assert document["verdict"] == "suspect" and document["suspect_attempts"] == 2
    assert document["user_review"] == {
        "verdict": "suspect",
        "reasons": [
            {"turn": 1, "rule": "prompt_wording", "text": 'repeats the prompt\'s own words: "Your next message."'},
            {"turn": None, "rule": "goal_unstated", "text": "never said"},
        ],
    }
    back = decode_run(document, "run_1.json")
    assert (back.verdict, back.user_review, back.suspect_attempts) == (Outcome.SUSPECT, SUSPECT, 2)
    assert back.conversation.user_review is None and back.conversation.verdict is Outcome.FAIL  # the review is the run's
    plain = decode_run(orjson.loads(orjson.dumps(run_document(record()))), "run_1.json")
    assert "user_review" not in run_document(record()) and plain.user_review is None and plain.suspect_attempts == 0


def test_a_conversations_review_is_read_back_and_a_broken_one_is_bad_input():
    document = orjson.loads(orjson.dumps(conversation_document(judged(Outcome.PASS, SUSPECT), with_source=True)))
    assert document["verdict"] == "suspect"
    back = decode_conversation(document, "part-00000.jsonl", 1)
    assert back.user_review == SUSPECT and back.verdict is Outcome.SUSPECT
    with pytest.raises(LoadError, match="`maybe` in `user_review.verdict` is not a review verdict"):
        decode_conversation(document | {"user_review": {"verdict": "maybe", "reasons": []}}, "part-00000.jsonl", 1)


def test_a_suspect_runs_checks_are_left_out_of_the_per_check_statistics():
    passed = replace(record(number=2), conversation=judged(Outcome.PASS))
    rows = list(run_stats([suspect_run(), passed]))
    assert [(row.counts.passed, row.counts.failed) for row in rows] == [(1, 0)]
    stats = CheckStats()
    stats.add(judged(Outcome.FAIL, SUSPECT), "x")
    stats.add(judged(Outcome.FAIL), "y")
    assert [(row.counts.failed, row.examples) for row in stats] == [(1, ["y"])]


def test_the_summary_counts_suspect_runs_apart_with_their_reasons():
    batch = BatchResult((suspect_run(), replace(record(number=2), conversation=judged(Outcome.PASS))), planned=2)
    document = summary_document(batch)
    assert (document["passed"], document["failed"], document["errored"], document["suspect"]) == (1, 0, 0, 1)
    assert document["scenarios"][0]["pass_rate"] == 1.0 and document["scenarios"][0]["suspect"] == 1
    assert document["failed_runs"] == []
    assert document["suspect_runs"][0]["attempts"] == 2 and document["suspect_runs"][0]["user_review"]["verdict"] == "suspect"
    assert document["retried_runs"] == [{"slug": "a", "run": 1, "suspect_attempts": 2, "verdict": "suspect"}]
    text = render_summary(batch).plain
    assert "1/2 passed, 0 failed, 0 errored, 1 suspect  pass rate 100%" in text
    assert "suspect: a run 1: turn 1 prompt_wording: repeats the prompt's own words" in text and "(2 suspect attempts)" in text
    assert "FAIL" not in text
    assert text.endswith("2 runs: 1 passed, 0 failed, 0 errored, 1 suspect\n")
    every = render_summary(batch, show_all=True).plain
    assert "a run 1: SUSPECT" in every and "  overall goal_unstated: never said" in every


def test_a_run_says_what_its_review_found():
    text = render_run(suspect_run()).plain
    assert "verdict: SUSPECT" in text
    assert "simulated user: suspect (2 suspect attempts)\n  turn 1 prompt_wording: " in text
    ok = render_run(replace(record(), user_review=UserReview("ok"), suspect_attempts=1)).plain
    assert "simulated user: ok (1 suspect attempt)\n" in ok
    assert "simulated user" not in render_run(record()).plain


def test_check_text_shows_a_suspect_conversations_review():
    text = render_conversation(judged(Outcome.FAIL, SUSPECT), failing_only=True).plain
    assert "simulated user: suspect" in text and "verdict: SUSPECT" in text
    assert "simulated user: ok" not in render_conversation(judged(Outcome.FAIL, UserReview("ok")), failing_only=True).plain
    assert "simulated user: ok" in render_conversation(judged(Outcome.FAIL, UserReview("ok"))).plain


def test_junit_skips_a_suspect_run_with_its_reasons_and_reports_no_failure_of_it():
    batch = BatchResult((suspect_run(), replace(record(number=2, verdict=Outcome.FAIL), conversation=judged(Outcome.FAIL))))
    root = ET.fromstring(render_junit(batch))
    suite = root.find("testsuite")
    assert (root.get("failures"), root.get("skipped"), suite.get("failures"), suite.get("skipped")) == ("1", "1", "1", "1")
    suspect, failed = suite.findall("testcase")
    assert suspect.find("failure") is None and suspect.find("skipped").get("type") == "user_review"
    assert "turn 1 prompt_wording" in suspect.find("skipped").text and "overall goal_unstated: never said" in suspect.find("skipped").text
    properties = [(p.get("name"), p.get("value")) for p in suspect.find("properties")]
    assert properties[0] == ("user_review.verdict", "suspect") and ("user_review.suspect_attempts", "2") in properties
    assert failed.find("failure") is not None and failed.find("properties") is None
    check = ET.fromstring(render_junit_check([judged(Outcome.FAIL, SUSPECT), judged(Outcome.PASS, UserReview("ok"))]))
    cases = check.find("testsuite").findall("testcase")
    assert cases[0].find("skipped") is not None and cases[0].find("failure") is None
    assert [(p.get("name"), p.get("value")) for p in cases[1].find("properties")] == [("user_review.verdict", "ok")]


def test_a_suspect_run_is_a_pytest_error_explained_by_its_review():
    from dialogcheck.pytest_plugin import outcome_of
    from dialogcheck.report.explain import render_run_explanation

    run = suspect_run()
    assert outcome_of(run) == "error"  # not the agent's failure, not a pass: `run` exits 3 for it
    assert outcome_of(replace(run, verdict=Outcome.FAIL, user_review=None)) == "failed"
    explained = render_run_explanation(run).plain
    assert "simulated user: suspect (2 suspect attempts)" in explained
    assert "turn 1 prompt_wording: repeats the prompt's own words" in explained
    assert "simulated user" not in render_run_explanation(replace(run, verdict=Outcome.FAIL, user_review=None)).plain
