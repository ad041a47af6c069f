"""Per-check statistics: each check's outcome counts, failure rate and failing examples, and the SOP score spread,
the same counted at once or chunk by chunk and merged."""

import pickle

import pytest

from dialogcheck import check_conversations, load_scenario, load_sop
from dialogcheck.checks.base import Outcome
from dialogcheck.report.check_text import render_check_table
from dialogcheck.report.run_text import render_summary
from dialogcheck.results.codec import conversation_document, stats_document
from dialogcheck.results.model import BatchResult, CheckKind, RunResult, ScenarioInfo
from dialogcheck.results.stats import EXAMPLES, CheckStats, SopScores, run_stats
from tests.conftest import EXAMPLE
from tests.stats_helpers import per_check_stats

CONVERSATIONS = sorted((EXAMPLE / "conversations").iterdir())
SCENARIO = load_scenario(EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml")
SOP = load_sop(EXAMPLE / "sops" / "replace_card.yml")


@pytest.fixture(scope="module")
def results():
    return list(check_conversations(SCENARIO, CONVERSATIONS, no_judge=True))


@pytest.fixture(scope="module")
def sop_results():
    return list(check_conversations(SOP, CONVERSATIONS))


def stats_of(results):
    stats = CheckStats()
    for result in results:
        stats.add(result, result.source)
    return stats


def test_each_check_counts_what_the_conversations_say(results):
    stats = stats_of(results)
    documents = [conversation_document(r, with_source=True) for r in results]
    assert stats_document(stats)["checks"] == per_check_stats(documents)
    rows = list(stats)
    assert [row.index for row in rows if row.kind is CheckKind.ASSERTION] == list(range(1, len(SCENARIO.goals.assertions) + 1))
    assert all(row.counts.total == len(CONVERSATIONS) for row in rows)
    cleared = next(row for row in rows if row.label == "memory_was_cleared card_replace.draft_order_id")
    assert (cleared.counts.failed, cleared.counts.passed, cleared.failure_rate) == (5, 3, 5 / 8)
    assert len(cleared.examples) == EXAMPLES and cleared.examples[0].endswith("damaged_card_digression.jsonl")


@pytest.mark.parametrize("held", [1, 2, 1024])
def test_patterns_counted_into_the_rows_early_or_late_give_the_same_rows(results, held, monkeypatch):
    """However few outcome patterns are held before they are spread over the rows, the rows come out the same,
    and a batch read halfway through and added to again counts everything once."""
    monkeypatch.setattr(CheckStats, "PATTERNS_HELD", held)
    documents = [conversation_document(r, with_source=True) for r in results]
    stats = stats_of(results[:4])
    assert stats_document(stats)["checks"] == per_check_stats(documents[:4])
    for result in results[4:]:
        stats.add(result, result.source)
    assert stats_document(stats)["checks"] == per_check_stats(documents)
    assert len(stats._patterns) < max(held, 2) and len(stats._marks) <= held


def test_the_same_pattern_is_counted_once_per_conversation(results):
    stats = stats_of([results[0]] * 5)
    assert all(row.counts.total == 5 for row in stats)
    failing = [row for row in stats if row.counts.failed]
    assert failing and all(row.counts.failed == 5 and row.examples == [results[0].source] * EXAMPLES for row in failing)


def test_a_check_that_decided_nothing_has_no_failure_rate(results):
    criterion = next(row for row in stats_of(results) if row.kind is CheckKind.CRITERION)
    assert (criterion.counts.skipped, criterion.failure_rate, criterion.examples) == (8, None, [])


@pytest.mark.parametrize("cut", [1, 3, 7])
def test_chunks_merged_in_order_give_the_rows_of_one_pass(results, cut):
    first, second = stats_of(results[:cut]), pickle.loads(pickle.dumps(stats_of(results[cut:])))  # as a worker sends it
    merged = CheckStats()
    merged.merge(first)
    merged.merge(second)
    assert stats_document(merged) == stats_document(stats_of(results))


def test_merging_into_an_empty_batch_copies_nothing_it_would_then_change(results):
    chunk = stats_of(results[:2])
    before = stats_document(chunk)
    merged = CheckStats()
    merged.merge(chunk)
    merged.merge(stats_of(results[2:]))
    assert stats_document(chunk) == before  # the chunk's own rows untouched


def test_sop_scores_spread_and_threshold(sop_results):
    stats = stats_of(sop_results)
    scores = [r.sop.score for r in sop_results]
    spread = stats_document(stats)["sop_scores"]
    assert spread["conversations"] == len(scores) and spread["mean"] == pytest.approx(sum(scores) / len(scores))
    assert (spread["min"], spread["max"]) == (min(scores), max(scores))
    assert sum(spread["histogram"]) == len(scores)
    threshold = SOP.steps.threshold
    assert spread["with_threshold"] == (len(scores) if threshold is not None else 0)
    assert spread["below_threshold"] == sum(threshold is not None and s < threshold for s in scores)


def test_sop_score_buckets_and_merge():
    one, two = SopScores(), SopScores()
    for score in (0.0, 0.05, 0.1, 0.99, 1.0):
        one.add(score, 0.5)
    two.add(0.5, None)
    one.merge(two)
    one.merge(SopScores())
    assert one.buckets == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    assert (one.conversations, one.with_threshold, one.below_threshold, one.lowest, one.highest) == (6, 5, 3, 0.0, 1.0)
    assert one.mean == pytest.approx(2.64 / 6)
    assert SopScores().mean is None


def test_no_sop_no_spread(results):
    assert "sop_scores" not in stats_document(stats_of(results))


def test_runs_count_by_scenario_and_name_their_failures_by_run(results):
    runs = [RunResult(ScenarioInfo(slug, slug, f"{slug}.yml"), n, r.verdict, conversation=r) for n, (slug, r) in enumerate(
        [("a", results[0]), ("a", results[1]), ("b", results[0])], 1)]
    runs.append(RunResult(ScenarioInfo("b", "b", "b.yml"), 4, Outcome.ERROR, error="agent down"))  # never judged: no checks
    stats = run_stats(runs)
    rows = list(stats)
    assert {row.scenario for row in rows} == {"a", "b"}
    assert len(rows) == 2 * len(list(results[0].checks()))
    failed = next(row for row in rows if row.scenario == "a" and row.counts.failed)
    assert failed.examples[0].startswith("a run ")


def test_the_table_puts_most_failures_first_and_counts_the_quiet_checks(results):
    text = render_check_table(stats_of(results)).plain
    lines = text.splitlines()
    assert lines[0] == "checks, most failures first:"
    fails = [int(line.split()[0]) for line in lines[2:] if line.startswith("  ") and line.split()[0].isdigit()]
    assert fails == sorted(fails, reverse=True) and fails[0] == 5
    assert "  #7 memory_was_cleared card_replace.draft_order_id  e.g. " in lines[2]
    quiet = sum(1 for row in stats_of(results) if not row.counts.failed and not row.counts.errored)
    assert lines[-1] == f"{quiet} checks never failed or errored"


def test_a_batch_where_nothing_failed_has_no_table(results):
    passing = [r for r in results if r.verdict is Outcome.PASS]
    assert render_check_table(stats_of(passing)).plain == f"{len(list(passing[0].checks()))} checks never failed or errored\n"


def test_run_summary_groups_the_same_failure_of_repeated_runs(results):
    failing = next(r for r in results if r.source.endswith("damaged_card_express.jsonl"))  # fails one check
    other = next(r for r in results if r.source.endswith("lost_card_cancelled.jsonl"))  # fails seven, none alike
    info = ScenarioInfo("s", "S", "s.yml")
    runs = [RunResult(info, n, Outcome.FAIL, conversation=failing) for n in (1, 2, 3, 5)]
    runs.append(RunResult(info, 4, Outcome.FAIL, conversation=other))
    text = render_summary(BatchResult(tuple(runs))).plain
    (line,) = [line for line in text.splitlines() if line.startswith("FAIL  s runs ")]
    assert line.startswith("FAIL  s runs 1-3, 5: ")  # four runs, one line
    assert sum(line.startswith("FAIL  s run 4: ") for line in text.splitlines()) == other.check_counts().failed
    capped = render_summary(BatchResult(tuple(runs)), max_failures=1).plain
    assert sum(line.startswith("FAIL  ") for line in capped.splitlines()) == 1
    assert f"{other.check_counts().failed:,} more failures: see summary.json" in capped
    every = render_summary(BatchResult(tuple(runs)), show_all=True).plain
    assert every.count("\ns run ") == 5 and every.count("  PASS  ") == 4 * failing.check_counts().passed + other.check_counts().passed


def test_the_verdicts_per_scenario_are_the_same_counted_at_once_or_merged_from_pickled_chunks(results):
    whole = stats_of(results)
    merged = CheckStats()
    for chunk in (results[:2], results[2:]):
        merged.merge(pickle.loads(pickle.dumps(stats_of(chunk))))
    [row] = whole.scenarios()
    assert (row.slug, row.runs, row.counts.passed, row.counts.failed) == (SCENARIO.name, len(results), 2, len(results) - 2)
    assert [(s.slug, s.name, dict(s.counts.by_outcome), s.pass_hat()) for s in merged.scenarios()] == [
        (s.slug, s.name, dict(s.counts.by_outcome), s.pass_hat()) for s in whole.scenarios()
    ]
    assert whole.repeated and not stats_of(results[:1]).repeated
