"""Results folder: atomic files, run documents, the summary's pass rate, pass^k and flaky scenarios."""

import os

import orjson
import pytest

from dialogcheck.checks.base import Outcome
from dialogcheck.report.batch_text import render_run, render_summary
from dialogcheck.results.atomic import write_atomic
from dialogcheck.results.files import ResultsFolder, run_document, summary_document
from dialogcheck.results.model import RunRecord, pass_hat_k, scenario_stats
from dialogcheck.results.plan import Plan, PlannedScenario


def record(slug="a", number=1, verdict=Outcome.PASS, error=None):
    return RunRecord(
        slug=slug,
        number=number,
        scenario_name=f"Scenario {slug}",
        scenario_path=f"eval/scenarios/{slug}.yml",
        verdict=verdict,
        error=error,
        conversation_id="sim-1",
        events=[{"event": "user", "text": "hi"}, {"event": "bot", "text": "hello"}],
        transcript=[("USER", "hi"), ("AGENT", "hello")],
        latencies=[0.25],
        ended_because="the user said done",
        duration=0.5,
        tags=("smoke",),
    )


def test_pass_hat_k_is_the_unbiased_estimator():
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(2, 4, 1) == 0.5
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(1, 4, 2) == 0.0
    assert pass_hat_k(3, 2, 3) is None  # fewer runs than k


def test_scenario_stats_count_errored_apart():
    docs = [run_document(r) for r in (record("a", 1), record("a", 2, Outcome.FAIL), record("a", 3, Outcome.ERROR, "agent: down"), record("b", 1))]
    a, b = scenario_stats(docs)
    assert (a.slug, a.runs, a.passed, a.failed, a.errored, a.pass_rate, a.flaky) == ("a", 3, 1, 1, 1, 0.5, True)
    assert a.pass_hat() == {1: 0.5, 2: 0.0}
    assert (b.pass_rate, b.flaky) == (1.0, False)


def test_all_errored_has_no_pass_rate():
    (stats,) = scenario_stats([run_document(record(verdict=Outcome.ERROR, error="x"))])
    assert stats.pass_rate is None and stats.pass_hat() == {}


def test_run_document_holds_what_spec_8_lists():
    document = run_document(record())
    assert document["scenario"] == {"slug": "a", "name": "Scenario a", "path": "eval/scenarios/a.yml", "type": None, "tags": ["smoke"]}
    assert (document["run"], document["verdict"], document["error"]) == (1, "pass", None)
    assert document["latency_s"] == [0.25]
    assert document["transcript"] == [{"role": "user", "text": "hi"}, {"role": "agent", "text": "hello"}]


def test_summary_document_and_text():
    docs = [run_document(r) for r in (record("a", 1), record("a", 2, Outcome.FAIL), record("b", 1, Outcome.ERROR, "agent: down"))]
    summary = summary_document(docs, {"started": "t", "total_runs": 4})
    assert (summary["completed_runs"], summary["passed"], summary["failed"], summary["errored"]) == (3, 1, 1, 1)
    assert summary["errored_runs"] == [{"slug": "b", "run": 1, "error": "agent: down"}]
    text = render_summary(summary).plain
    assert "a                                1/2 passed, 1 failed, 0 errored  pass rate 50%  pass^1 50% pass^2 0%  flaky" in text
    assert "errored: b run 1: agent: down" in text
    assert text.endswith("3 runs of 4 planned: 1 passed, 1 failed, 1 errored\n")


def test_run_text():
    text = render_run(run_document(record(verdict=Outcome.ERROR, error="agent: down"))).plain
    assert text.startswith("a run 1  Scenario a\nverdict: ERROR  (0.50 s; ended: the user said done)\nerror: agent: down\n")
    assert "  USER  hi   (0.25 s)\n  AGENT hello\n" in text


def test_folder_round_trip_and_unfinished_runs(tmp_path):
    folder = ResultsFolder(tmp_path / "batch")
    plan = Plan(scenarios=[PlannedScenario(slug="a", path="a.yml", runs=3)], total_runs=3)
    folder.write_plan(plan)
    assert folder.read_plan() == plan
    for r in (record("a", 1), record("a", 3, Outcome.FAIL)):
        document = run_document(r)
        folder.write_run(r, document, render_run(document).plain)
    assert [d["run"] for d in folder.runs()] == [1, 3]
    assert (tmp_path / "batch" / "a" / "run_1.events.jsonl").read_bytes().splitlines()[0] == b'{"event":"user","text":"hi"}'
    (tmp_path / "batch" / "a" / "run_2.json").write_text('{"verdict": "pa')  # a file cut short is not a finished run
    assert [d["run"] for d in folder.runs()] == [1, 3]


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


def test_pass_hat_is_linear_to_compute_and_capped_at_eight_ks():
    from dialogcheck.results.model import ScenarioStats

    stats = ScenarioStats("a", "A", 400, 300, 100, 0)
    hats = stats.pass_hat()
    assert list(hats) == list(range(1, 9))
    for k, value in hats.items():
        assert value == pytest.approx(pass_hat_k(300, 400, k))
