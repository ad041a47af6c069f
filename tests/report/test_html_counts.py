"""The HTML page counts checks and SOP scores as `CheckStats` does, for `check` and `report` alike: it asks it."""

from dialogcheck.checks.base import CheckResult, Outcome
from dialogcheck.report.html import conversations_page
from dialogcheck.results.model import CheckRef, ConversationResult, Reason, UserReview
from dialogcheck.results.stats import CheckStats
from dialogcheck.sop.model import Step, StepResult, StepSetResult

CALLED = CheckRef("tool_called", "tool_called")


def result(outcome: Outcome, score: float, suspect: bool = False) -> ConversationResult:
    step = StepResult(Step("look", None, True, 1.0, CALLED), CheckResult(CALLED, outcome, "detail"))
    review = UserReview.of([Reason(1, "repeats", "again")] if suspect else [])
    return ConversationResult(f"c{score}.jsonl", "Replace a card", sop=StepSetResult((step,), score, 0.8, outcome), user_review=review)


def test_the_page_counts_what_the_statistics_count_and_leaves_a_suspect_conversation_out():
    results = [result(Outcome.PASS, 1.0), result(Outcome.FAIL, 0.0), result(Outcome.FAIL, 0.5, suspect=True)]
    page, stats = conversations_page(), CheckStats()
    page.start()
    for one in results:
        page.add_conversation(one)
        stats.add(one, one.source)
    html = page.finish()
    assert [vars(row) for row in page.stats] == [vars(row) for row in stats]
    assert vars(page.stats.sop_scores) == vars(stats.sop_scores)
    assert stats.sop_scores.conversations == 2  # the suspect one's score says nothing of the agent
    assert "2 conversations scored: mean 0.50" in html
    assert "checks: 1 passed, 1 failed, 0 errored" in html
