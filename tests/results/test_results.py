"""Results folder: atomic files, the codec's run documents, the summary's pass rate, pass^k and flaky scenarios."""

import os
from math import comb

import orjson
import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.report.run_text import render_run, render_summary
from dialogcheck.results.atomic import write_atomic
from dialogcheck.results.codec import decode_run, run_document, summary_document
from dialogcheck.results.files import ResultsFolder
from dialogcheck.results.load import finished_runs
from dialogcheck.results.model import BatchResult, Counts, RunResult, ScenarioInfo, ScenarioStats, TranscriptLine, scenario_stats
from dialogcheck.results.plan import Plan, PlannedScenario


def record(slug="a", number=1, verdict=Outcome.PASS, error=None):
    return RunResult(
        scenario=ScenarioInfo(slug, f"Scenario {slug}", f"eval/scenarios/{slug}.yml", tags=("smoke",)),
        number=number,
        verdict=verdict,
        error=error,
        conversation_id="sim-1",
        events=[{"event": "user", "text": "hi"}, {"event": "bot", "text": "hello"}],
        transcript=(TranscriptLine("user", "hi"), TranscriptLine("agent", "hello")),
        latencies=(0.25,),
        ended_because="the user said done",
        duration=0.5,
    )


@pytest.mark.parametrize("passed, runs", [(4, 4), (2, 4), (1, 4), (300, 400), (0, 3)])
def test_pass_hat_k_is_the_unbiased_estimator(passed, runs):
    stats = ScenarioStats("a", "A", Counts([Outcome.PASS] * passed + [Outcome.FAIL] * (runs - passed)))
    hats = stats.pass_hat()
    assert list(hats) == list(range(1, min(runs, 8) + 1))  # capped at eight ks
    for k, value in hats.items():
        assert value == pytest.approx(comb(passed, k) / comb(runs, k))


def test_scenario_stats_count_errored_apart():
    runs = [record("a", 1), record("a", 2, Outcome.FAIL), record("a", 3, Outcome.ERROR, "agent: down"), record("b", 1)]
    a, b = scenario_stats(runs)
    assert (a.slug, a.runs, a.counts.passed, a.counts.failed, a.counts.errored, a.pass_rate, a.flaky) == ("a", 3, 1, 1, 1, 0.5, True)
    assert a.pass_hat() == {1: 0.5, 2: 0.0}
    assert (b.pass_rate, b.flaky) == (1.0, False)


def test_all_errored_has_no_pass_rate():
    (stats,) = scenario_stats([record(verdict=Outcome.ERROR, error="x")])
    assert stats.pass_rate is None and stats.pass_hat() == {}


def test_run_document_holds_what_spec_8_lists_and_reads_back_the_same():
    run = record()
    document = run_document(run)
    assert document["scenario"] == {"slug": "a", "name": "Scenario a", "path": "eval/scenarios/a.yml", "type": None, "tags": ["smoke"]}
    assert (document["run"], document["verdict"], document["error"]) == (1, "pass", None)
    assert document["latency_s"] == [0.25]
    assert document["transcript"] == [{"role": "user", "text": "hi"}, {"role": "agent", "text": "hello"}]
    assert run_document(decode_run(orjson.loads(orjson.dumps(document)), "run_1.json")) == document


def test_summary_document_and_text():
    runs = (record("a", 1), record("a", 2, Outcome.FAIL), record("b", 1, Outcome.ERROR, "agent: down"))
    batch = BatchResult(runs, planned=4, started="t")
    summary = summary_document(batch)
    assert (summary["completed_runs"], summary["passed"], summary["failed"], summary["errored"]) == (3, 1, 1, 1)
    assert summary["errored_runs"] == [{"slug": "b", "run": 1, "error": "agent: down"}]
    assert "interrupted" not in summary  # while it runs; the final summary says whether it was
    text = render_summary(batch).plain
    assert "a                                1/2 passed, 1 failed, 0 errored  pass rate 50%  pass^1 50% pass^2 0%  flaky" in text
    assert "errored: b run 1: agent: down" in text
    assert text.endswith("3 runs of 4 planned: 1 passed, 1 failed, 1 errored\n")


def test_run_text():
    text = render_run(record(verdict=Outcome.ERROR, error="agent: down")).plain
    assert text.startswith("a run 1  Scenario a\nverdict: ERROR  (0.50 s; ended: the user said done)\nerror: agent: down\n")
    assert "  USER  hi   (0.25 s)\n  AGENT hello\n" in text


def test_folder_round_trip_and_unfinished_runs(tmp_path):
    folder = ResultsFolder(tmp_path / "batch")
    plan = Plan(scenarios=[PlannedScenario(slug="a", path="a.yml", runs=3)], total_runs=3)
    folder.write_plan(plan)
    assert folder.read_plan() == plan
    for run in (record("a", 1), record("a", 3, Outcome.FAIL)):
        folder.write_run(run, render_run(run).plain)
    read = finished_runs(folder, plan)
    assert [run.number for run in read] == [1, 3]
    assert [event.kind for event in read[0].record.events] == ["user", "bot"]  # the events, read as the typed record
    assert (tmp_path / "batch" / "a" / "run_1.events.jsonl").read_bytes().splitlines()[0] == b'{"event":"user","text":"hi"}'
    (tmp_path / "batch" / "a" / "run_2.json").write_text('{"verdict": "pa')  # a file cut short is not a finished run
    assert [run.number for run in finished_runs(folder, plan)] == [1, 3]


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    target = tmp_path / "summary.json"
    write_atomic(target, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]  # no temporary file left behind
    monkeypatch.undo()
    write_atomic(target, orjson.dumps({"a": 1}))
    assert orjson.loads(target.read_bytes()) == {"a": 1}


def test_atomic_files_are_readable_by_others(tmp_path):
    write_atomic(tmp_path / "run_1.json", "{}")
    assert (tmp_path / "run_1.json").stat().st_mode & 0o777 == 0o644
