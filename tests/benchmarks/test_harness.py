"""The benchmarks' own machinery: what it generates must be what it claims, or its figures measure something else.

Small sizes keep each test to a few seconds; the scripts run as the benchmarks run them (the
`dialogcheck` command in subprocesses, real files, real loopback servers), but where a test says its script's
commands run in process (`commands_in_process`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import shutil
import stat
import subprocess
import sys
import types
from pathlib import Path

import orjson
import pytest

from dialogcheck import Outcome, evaluate, evaluate_sop, iter_conversations, load_scenario, load_sop
from dialogcheck.checks import ASSERTIONS
from dialogcheck.checks.state import STATE_CHECKS
from tests import inprocess
from tests.conftest import REPO

#: Every assertion key that judges a conversation's events: the benchmark's recorded conversations hold no
#: environment state, which the state checks judge.
EVENT_KEYS = set(ASSERTIONS) - {cls.key for cls in STATE_CHECKS}

BENCHMARKS = REPO / "benchmarks"
FIXTURES = BENCHMARKS / "fixtures"


def _script(name: str):
    """A benchmark script as a module (each puts benchmarks/ on sys.path for `common` and `synth`)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it is executed
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def out(tmp_path: Path, monkeypatch) -> Path:
    """Everything the scripts write goes to a temporary folder, not benchmarks/out."""
    common = _script("common")
    sys.modules["common"] = common  # the module the scripts import by name
    monkeypatch.setattr(common, "OUT", tmp_path)
    yield tmp_path
    sys.modules.pop("common", None)


@pytest.fixture(scope="module")
def conversations(tmp_path_factory) -> Path:
    synth = _script("synth")
    path = tmp_path_factory.mktemp("data") / "convs.jsonl"
    synth.write_jsonl(path, 600, 5)
    return path


def test_linear_cuts_the_scenario_and_sop_into_one_check_each_judged_as_in_the_whole(out: Path, conversations: Path):
    scale = _script("scale")
    scenario_files = scale.one_check_files(scale.SCENARIO.read_text(encoding="utf-8"), out, "fixture_scenario")
    sop_files = scale.one_check_files(scale.SOP.read_text(encoding="utf-8"), out, "fixture_sop")
    worst = scale.one_check_files(scale.WORST_SCENARIO, out, "worst_scenario") + scale.one_check_files(scale.WORST_SOP, out, "worst_sop")
    assert len(scenario_files) == 20 and {family.split(" #")[0] for family, _ in scenario_files} == EVENT_KEYS
    assert len({family for family, _ in scenario_files + sop_files}) == 20 + 6  # each named once
    assert [family for family, _ in sop_files] == ["tool_called", "tool_sequence", "tool_input_contains",
                                                   "tool_output_contains", "no_tool_called", "confirmation_requested"]
    assert len(worst) == 20 + 7
    whole_scenario, whole_sop = load_scenario(FIXTURES / "scale_scenario.yml"), load_sop(FIXTURES / "scale_sop.yml")
    ones = [load_scenario(path) for _, path in scenario_files]
    steps = [load_sop(path) for _, path in sop_files]
    assert all(len(one.goals.assertions) == 1 for one in ones) and all(len(one.steps.steps) == 1 for one in steps)
    for conversation in list(iter_conversations([conversations]))[:40]:
        assert [evaluate(one, conversation).assertions[0] for one in ones] == list(evaluate(whole_scenario, conversation).assertions)
        judged = evaluate_sop(whole_sop, conversation, no_judge=True).sop.results
        assert [evaluate_sop(one, conversation, no_judge=True).sop.results[0] for one in steps] == list(judged[:6])


def test_outcomes_picks_conversations_that_all_pass_and_all_fail(out: Path, conversations: Path):
    scale = _script("scale")
    files = scale.split_by_verdict(conversations, 15, out)
    scenario = load_scenario(FIXTURES / "scale_scenario.yml")
    verdicts = {name: [evaluate(scenario, c).verdict for c in iter_conversations([files[name]])] for name in ("pass", "fail")}
    assert verdicts == {"pass": [Outcome.PASS] * 15, "fail": [Outcome.FAIL] * 15}
    assert len(files["one"].read_bytes().splitlines()) == 1
    with pytest.raises(SystemExit, match="fewer than 1,000 passing or failing"):
        scale.split_by_verdict(conversations, 1000, out)


def commands_in_process(script, monkeypatch) -> None:
    """`script`'s runs of the installed `dialogcheck` go through `tests/inprocess.py` (the same arguments, exit code and
    output, without a process start each); every other command it starts (its servers) is still a subprocess."""
    script_path = sys.modules["common"].cli_command()[0]

    def run(argv, **options):
        if argv and str(argv[0]) == script_path:
            return inprocess.run(argv, **options)
        return subprocess.run(argv, **options)

    monkeypatch.setattr(script, "subprocess", types.SimpleNamespace(**{**vars(subprocess), "run": run}))


def test_run_parallel_batches_pass_with_every_agent_and_user(out: Path, monkeypatch):
    """Every row's batch: every run passed after exactly its turns (the script stops otherwise). The batches run in
    process, the agent's and the LLM's servers in their own."""
    run_parallel = _script("run_parallel")
    monkeypatch.setattr(run_parallel, "WORK", out / "parallel")
    commands_in_process(run_parallel, monkeypatch)
    assert run_parallel.main(["--runs", "2", "--parallel", "2", "--latency", "0.01", "--turns", "2", "--repeats", "1",
                              "--target", "1000"]) == 0
    measures = json.loads((out / "run_parallel.json").read_text())["measures"]
    assert [(m["agent"], m["user"]) for m in measures] == [
        ("async Python agent", "scripted"), ("sync Python agent (threads)", "scripted"), ("HTTP agent", "scripted"),
        ("async Python agent", "LLM"), ("HTTP agent", "LLM")]
    assert all(m["ideal_s"] > 0 and m["best_s"] > 0 for m in measures)


def test_check_e2e_compares_the_bytes_each_side_prints(out: Path, monkeypatch, tmp_path: Path):
    """A side that prints one more line than the baseline (a checkout) is told apart; the baseline is itself."""
    check_e2e = _script("check_e2e")
    monkeypatch.setattr(check_e2e, "WORK", out / "check_e2e")
    odd = tmp_path / "odd"
    odd.mkdir()
    for name, body in (("python", f'exec "{sys.executable}" "$@"\n'),
                       ("dialogcheck", f'"{Path(sys.executable).with_name("dialogcheck")}" "$@"; code=$?; echo; exit $code\n')):
        (odd / name).write_text("#!/bin/sh\n" + body)
        (odd / name).chmod((odd / name).stat().st_mode | stat.S_IXUSR)
    status = check_e2e.main(["--side", f"checkout={REPO}", "--side", f"odd={odd / 'python'}", "--rounds", "1",
                             "--conversations", "20"])
    assert status == 1
    sides = json.loads((out / "check_e2e.json").read_text())["sides"]
    assert set(sides["checkout"]["same_output_as_base"].values()) == {True}
    assert set(sides["odd"]["same_output_as_base"].values()) == {False}
    assert sides["odd"]["same_results_as_base"] == {"scenario, json": True, "scenario, text": None, "sop, json": True, "sop, text": None}
    assert set(sides["odd"]["time"]) == {"scenario, json", "scenario, text", "sop, json", "sop, text"}
    assert all(0 < figures["cpu_ratio"]["median"] < 10 for figures in sides["odd"]["time"].values())
    with pytest.raises(SystemExit, match="expected NAME=WHERE"):
        check_e2e.resolve("no-equals-sign")
    with pytest.raises(SystemExit, match="no python executable, folder or commit"):
        check_e2e.resolve("x=no-such-commit-or-folder")


def test_check_e2e_tells_a_summary_that_only_adds_from_other_results(out: Path, monkeypatch):
    check_e2e = _script("check_e2e")
    monkeypatch.setattr(check_e2e, "WORK", out / "check_e2e")
    (out / "check_e2e").mkdir(parents=True, exist_ok=True)
    base, new = (check_e2e.Side(name, "", [], {}, "") for name in ("base", "new"))
    conversation = {"source": "a.jsonl#1", "verdict": "fail", "assertions": []}
    summary = {"conversations": 1, "passed": 0, "failed": 1, "errored": 0}

    def printed(side, conversations, **more):
        document = {"conversations": conversations, "summary": summary | more}
        check_e2e.kept_output(side, "sop, json").write_text(json.dumps(document))

    printed(base, [conversation])
    printed(new, [conversation], checks=[{"kind": "sop"}])
    assert check_e2e.same_results(new, base, "sop, json") is True
    printed(new, [conversation | {"verdict": "pass"}], checks=[])
    assert check_e2e.same_results(new, base, "sop, json") is False
    assert check_e2e.same_results(new, base, "sop, text") is None


def test_every_generated_conversation_of_the_check_data_loads(out: Path):
    common = sys.modules["common"]
    path, stats = common.dataset(50, 2)
    assert path.parent == out / "data"
    assert sum(1 for _ in iter_conversations([path])) == stats["conversations"] == 50
    again, _ = common.dataset(50, 2)
    assert again == path and orjson.loads(path.with_suffix(".meta.json").read_bytes())["stats"] == stats


def test_compare_measures_real_check_documents_against_decoding_every_line_of_them_and_run_all_reads_it(out: Path, monkeypatch):
    """The documents are `check` output of two seeds with the same ids; the baseline decodes every conversation line;
    run_all's rows are the saved figures. One run of the script, small, for real (each size costs 6 fresh processes
    measured; the documents and verdicts are made in process)."""
    compare = _script("compare")
    run_all = _script("run_all")
    commands_in_process(compare, monkeypatch)  # the documents and verdicts; what is measured still runs in fresh processes
    assert compare.main(["--conversations", "200", "--rounds", "1"]) == 0
    base, new = compare.document(200, 1), compare.document(200, 2)
    assert compare.document(200, 1) == base  # made once
    ids = [[line.split(b'"conversation_id":"')[1].split(b'"')[0] for line in path.read_bytes().splitlines()[1:-1]] for path in (base, new)]
    assert ids[0] == ids[1] and len(ids[0]) == 200
    assert base.read_bytes() != new.read_bytes()
    done = subprocess.run([sys.executable, "-c", compare.DECODE, str(base), str(new)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "400"
    saved = json.loads((out / "compare.json").read_text())
    assert saved["sizes"] == [20, 200]
    found = saved["results"]["200"]
    assert found["result"]["keys"] == 200 and found["result"]["test"] == "mcnemar"
    assert found["result_match"]["keys"] == 200  # the last 3 digits of 200 ids: 1,000 keys take 1,000 conversations or more
    assert found["compare"]["ratio"] == pytest.approx(found["compare"]["cpu_seconds"] / found["decode"]["cpu_seconds"], rel=0.01)
    assert 0 < found["decode"]["cpu_seconds"] and found["compare"]["peak_rss_mib"] > found["decode"]["peak_rss_mib"]
    rows = run_all.read_compare(None, 0)
    assert rows[0].figure == f"{found['compare']['ratio']:.2f}x / {found['compare_match']['ratio']:.2f}x"
    assert rows[1].figure == f"{saved['rss_growth']['compare']:.2f}x"


def test_profile_data_is_kept_per_profile_and_remade_when_the_generator_changes(out: Path):
    scale = _script("scale")
    failing, stats = scale.profile_dataset(40, 3, "failing")
    passing, _ = scale.profile_dataset(40, 3, "passing")
    assert failing != passing and failing.parent == passing.parent == out / "data"
    assert stats == {"conversations": 40, "events": stats["events"], "bytes": failing.stat().st_size}
    assert scale.profile_dataset(40, 3, "failing") == (failing, stats)
    meta = failing.with_suffix(".meta.json")
    key = orjson.loads(meta.read_bytes())
    meta.write_bytes(orjson.dumps({**key, "key": {**key["key"], "generator": "an older generator"}}))
    failing.write_bytes(b"stale\n")
    assert scale.profile_dataset(40, 3, "failing")[0].read_bytes() != b"stale\n"
    assert scale.profile_dataset(40, 1, "tau")[0] == sys.modules["common"].dataset(40, 1)[0]


def test_the_check_benchmark_times_each_side_on_each_profile_and_compares_what_they_print(out: Path):
    """A checkout as the base side prints what this checkout prints; every ratio is a time over the decoder's."""
    scale = _script("scale")
    args = scale.argparse.Namespace(profiles=["failing"], conversations=30, seed=2, repeats=1, base=str(REPO), instructions=False)
    result = scale.bench_check(args)
    entry = result["profiles"]["failing"]
    assert set(entry["same_output"].values()) == {True} and len(entry["same_output"]) == 8
    assert {name.split(": ", 1)[1] for name in entry["same_output"]} == set(scale.check_subjects())
    assert all(ratio > 1 for run, ratio in entry["ratios"].items() if run not in scale.DECODERS)
    assert entry["target"] == 4.0 and entry["met"] is (entry["held"] <= 4.0)
    saved = json.loads((out / "scale_check.json").read_text())
    assert saved["data"]["conversations"] == 30 and all(run.startswith("failing data, ") for run in saved["ratios"])


def test_the_outcome_of_every_check_is_read_from_what_check_prints(out: Path, conversations: Path):
    scale = _script("scale")
    scenario = scale.scenario_with_sop(out)
    outcomes = scale.check_outcomes(conversations, scenario)
    loaded = load_scenario(scenario)
    assert len(outcomes) == 600
    for conversation, seen in list(zip(iter_conversations([conversations]), outcomes))[:50]:
        result = evaluate(loaded, conversation, no_judge=True)
        assert seen == [r.outcome.value for r in result.assertions] + [s.result.outcome.value for s in result.sop.results]


def test_each_check_is_timed_on_as_many_conversations_it_passes_as_it_fails(out: Path, conversations: Path):
    scale = _script("scale")
    scenario = scale.scenario_with_sop(out)
    outcomes = scale.check_outcomes(conversations, scenario)
    timed = scale.time_checks(scenario, [conversations], outcomes, 40)
    assert len(timed) == 27 and timed[0]["check"] == "assertion 1: skill_activated authenticate"
    assert timed[-1] == {"check": "SOP step explains_policy: llm_judge", "n": 0}  # skipped without a judge: never timed
    for k, entry in enumerate(timed[:-1]):
        passes, fails = (sum(seen[k] == v for seen in outcomes) for v in ("pass", "fail"))
        assert entry["n"] == min(passes, fails, 40)
        if entry["n"]:
            assert entry["pass_ns"] > 0 and entry["fail_ns"] > 0
    wrong = [["fail" if seen[0] == "pass" else "pass", *seen[1:]] for seen in outcomes]
    with pytest.raises(SystemExit, match="where `check` said"):
        scale.time_checks(scenario, [conversations], wrong, 40)


def test_the_outcomes_benchmark_holds_each_check_to_twice_its_passing_cost(out: Path, monkeypatch):
    scale = _script("scale")
    args = scale.argparse.Namespace(check_pool=60, seed=2, outcome_conversations=40, cli_repeats=1)
    result = scale.outcomes_per_check(args, scale.code_sides(str(REPO)))
    this, base = result["sides"]["this"], result["sides"]["base"]
    assert [e["check"] for e in this] == [e["check"] for e in base] and len(this) == 27
    timed = [e for e in this if "ratio" in e]
    assert timed and all(e["ratio"] == pytest.approx(e["fail_us"] / e["pass_us"]) for e in timed)  # one repeat
    assert result["met"] is (result["max_ratio"] <= 2.0) and result["target"] == 2.0


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_decoding_a_file_counts_more_instructions_than_importing_the_decoder(out: Path, conversations: Path):
    scale = _script("scale")
    env = sys.modules["common"].environ()
    # Twenty conversations are decoded: each instruction costs tens under valgrind, and twenty already count more.
    some = out / "some.jsonl"
    with conversations.open("rb") as lines:
        some.write_bytes(b"".join(line for _, line in zip(range(20), lines)))
    imports = scale.instructions([sys.executable, "-c", scale.DECODE, "orjson", "-"], env)
    decoding = scale.instructions([sys.executable, "-c", scale.DECODE, "orjson", str(some)], env)
    assert 0 < imports < decoding
    assert scale.instructions([sys.executable, "-c", scale.DECODE, "orjson", "-"], env) == pytest.approx(imports, rel=0.01)
    with pytest.raises(SystemExit, match="valgrind"):
        scale.instructions(["sh", "-c", "exit 3"], env)  # a failing command that starts no Python under valgrind


def test_check_phases_runs_each_phase_of_this_checkout_and_counts_each_as_a_difference(out: Path, conversations: Path, monkeypatch):
    check_phases = _script("check_phases")
    monkeypatch.setattr(check_phases.check_e2e, "WORK", out / "check_e2e")
    (out / "check_e2e").mkdir()
    side = check_phases.check_e2e.resolve(f"checkout={REPO}")
    for upto in range(len(check_phases.PHASES)):  # the program each count runs, for real
        done = subprocess.run([*side.command[:1], "-c", check_phases.PROGRAM, str(conversations), str(check_phases.SOP), str(upto)],
                              env=side.env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    counted = []

    def fake_instructions(argv, env):  # each program stopping one phase later costs 100 more; the command 1000
        counted.append(argv)
        if "check" in argv:
            return 1000
        if argv[-1].isdigit():
            return 100 * (int(argv[-1]) + 1)
        return 20 if argv[-1] == "-" else 70  # a decoder imported only, and decoding the file

    monkeypatch.setattr(check_phases, "instructions", fake_instructions)
    found = check_phases.phases(side, conversations, check_phases.SOP)
    assert found == {"start-up": 100, "decoding": 100, "judging": 100, "encoding": 100, "statistics": 100,
                     "the rest": 500, "the whole command": 1000}
    assert counted[-1][-3:] == ["--sop", str(check_phases.SOP), str(conversations)]
    assert check_phases.main(["--side", f"checkout={REPO}", "--conversations", "5", "--subject", "sop"]) == 0
    saved = json.loads((out / "check_phases.json").read_text())
    assert saved["sides"]["checkout"]["instructions"] == found and saved["decoders"] == {"msgspec": 50, "orjson": 50}


def _span_keys(path: Path) -> dict[str, set[str]]:
    """The attribute keys of each kind of span (by `gen_ai.operation.name`) in an OTLP/JSON file."""
    keys: dict[str, set[str]] = {}
    for line in path.read_bytes().splitlines():
        for resource in orjson.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attributes = {a["key"]: a["value"] for a in span["attributes"]}
                    keys.setdefault(attributes["gen_ai.operation.name"]["stringValue"], set()).update(attributes)
    return keys


def test_otlp_traces_are_shaped_as_the_real_instrumentation_writes_them_and_import_as_generated(out: Path):
    """Every attribute key of the real trace's spans is in the generated ones (plus the failing tools' `error.type`);
    a conversation spans several traces or one, several run at once; each imports with every event it was made with."""
    from dialogcheck.importers import otlp

    bench = _script("otlp_import")
    path, expected = out / "traces.jsonl", {}
    stats = bench.write_traces(path, 600, 4, expected)
    real = _span_keys(REPO / "tests" / "importers" / "data" / "otlp_weather.jsonl")
    made = _span_keys(path)
    assert made["chat"] == real["chat"]
    assert made["execute_tool"] == real["execute_tool"] | {"error.type"}
    assert real["invoke_agent"] <= made["invoke_agent"]
    documents = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert len(documents) == stats["lines"] > stats["conversations"] > 50 and stats["spans"] >= 600
    traces_of: dict[str, set[str]] = {}
    trace_order = []
    for document in documents:
        for scope in document["resourceSpans"][0]["scopeSpans"]:
            for span in scope["spans"]:
                trace_order.append(span["traceId"])
                names = {a["key"]: a["value"]["stringValue"] for a in span["attributes"] if a["key"] == "gen_ai.conversation.id"}
                if names:
                    traces_of.setdefault(names["gen_ai.conversation.id"], set()).add(span["traceId"])
    assert sum(len(t) > 1 for t in traces_of.values()) > 10 and sum(len(t) == 1 for t in traces_of.values()) > 10
    assert len(expected) - len(traces_of) > 3  # conversations named by no id: grouped by their trace
    switches = sum(a != b for a, b in zip(trace_order, trace_order[1:]))
    assert switches > len(set(trace_order)) * 2  # the traces' spans interleave
    imported = {c.conversation_id: [(e["event"], e.get("text") or e.get("tool_name"), e.get("is_error", False)) for e in c.events]
                for c in otlp.read(path)}
    assert imported == {key: [tuple(e) for e in events] for key, events in expected.items()}
    assert sum(e[2] for events in expected.values() for e in events) > 5  # some tools failed
    assert sum(len(events) for events in expected.values()) == stats["events"]


def test_otlp_import_chain_imports_every_tool_span_of_one_deep_trace(out: Path):
    bench = _script("otlp_import")
    assert bench.main(["--chain", "300"]) == 0
    saved = json.loads((out / "otlp_import_chain.json").read_text())
    assert saved["spans"] == 300 and saved["import"]["cpu_s"] > 0
    assert not list((out / "otlp_import").glob("chain_*"))  # the trace and what it imported as are not kept


def test_otlp_import_quick_measures_import_and_check_against_decoding_and_run_all_reads_it(out: Path, monkeypatch):
    """`--quick` at a tenth of its sizes (200 and 2,000 spans): the same commands and figures, each process a few
    times quicker."""
    bench = _script("otlp_import")
    run_all = _script("run_all")
    assert bench.QUICK_SIZES == (2_000, 20_000)
    monkeypatch.setattr(bench, "QUICK_SIZES", (200, 2_000))
    assert bench.main(["--quick"]) == 0
    saved = json.loads((out / "otlp_import.json").read_text())
    small, large = saved["results"]["200"], saved["results"]["2000"]
    assert large["data"]["spans"] >= 2_000 and large["verdicts"]["conversations"] == large["data"]["conversations"]
    assert large["verdicts"]["passed"] and large["verdicts"]["failed"]
    for name in ("import", "check"):
        assert large[name]["cpu_over_decode"] == pytest.approx(large[name]["cpu_s"] / large["decode"]["cpu_s"], rel=0.02)
        assert saved["rss_growth"][name] == pytest.approx(large[name]["peak_rss_mib"] / small[name]["peak_rss_mib"], rel=0.01)
    assert saved["met"] is (max(saved["rss_growth"]["import"], saved["rss_growth"]["check"]) <= 1.5)
    assert not bench.trace_path(2000, 1).exists() and bench.trace_path(200, 1).exists()  # the largest file is not kept
    rows = run_all.read_otlp_import(None, 0)
    assert [r.figure for r in rows[:2]] == [f"{saved['rss_growth']['import']:.3f}x", f"{saved['rss_growth']['check']:.3f}x"]
    assert [r.met for r in rows] == [saved["rss_growth"]["import"] <= 1.5, saved["rss_growth"]["check"] <= 1.5, None]

    traces = bench.traces

    def short_by_one(spans, seed):  # a generator that claims one event more than it wrote
        path, stats = traces(spans, seed)
        return path, {**stats, "events": stats["events"] + 1}

    monkeypatch.setattr(bench, "traces", short_by_one)
    with pytest.raises(SystemExit, match="the generator made"):
        bench.run_size(200, 1)


def test_run_all_reads_the_html_report_figures(out: Path, monkeypatch):
    """The script runs small, for real (Chromium opens its page once, not best of 3); run_all's rows are its saved
    figures and targets. compare's rows are read in the compare test, which runs that script."""
    run_all = _script("run_all")
    assert {s.name for s in run_all.SCRIPTS} >= {"compare", "html_report", "otlp_import"}
    html_report = _script("html_report")
    monkeypatch.setattr(html_report, "open_in_chromium", functools.partial(html_report.open_in_chromium, tries=1))
    html_report.main(["--conversations", "200", "--short", "--rounds", "1"])
    saved = json.loads((out / "html_report.json").read_text())
    if html_report.CHROMIUM.exists():
        assert saved["chromium"]["available"] and saved["chromium"]["open_s"] > 0, saved["chromium"]  # the page opened
    rows = run_all.read_html_report(None, 0)
    assert [r.figure for r in rows] == [f"{saved['wall_ratio']:.2f}x", f"{saved['page_bytes'] / 2**20:.1f} MiB", f"{saved['memory_ratio']:.3f}x"]
    assert [r.met for r in rows] == [saved["wall_ratio"] <= 2.0, saved["page_bytes"] < 25 * 2**20, None]  # read whole: no target
    big = {**saved, "data": {**saved["data"], "bytes": 65 * 2**20}, "memory_ratio": 1.3}
    (out / "html_report.json").write_text(json.dumps(big))
    assert run_all.read_html_report(None, 0)[2].met is False
    (out / "html_report.json").write_text(json.dumps({**big, "memory_ratio": 1.1}))
    assert run_all.read_html_report(None, 0)[2].met is True
    with pytest.raises(RuntimeError, match="was not written"):
        run_all.read_html_report(None, 2**40)


def test_environment_calls_checks_every_answer_and_run_all_reads_its_ratios(out: Path, monkeypatch):
    """Each way makes its calls for real (a server on loopback, client processes); a server that answers the wrong
    order makes the script refuse its figures."""
    bench = _script("environment_calls")
    run_all = _script("run_all")
    assert "environment_calls" in {s.name for s in run_all.SCRIPTS}
    assert bench.main(["--rounds", "1", "--calls", "40", "--mcp-calls", "10"]) == 0
    saved = json.loads((out / "environment_calls.json").read_text())
    rows = {row["key"]: row for row in saved["rows"]}
    assert set(rows) == {"direct", "http", "mcp"} and rows["direct"]["wall_ratio"] == 1.0
    assert all(row["wall_us"] > 0 and row["cpu_us"] > 0 for row in rows.values())
    assert [r.figure for r in run_all.read_environment_calls(None, 0)] == [
        f"{rows[key]['wall_ratio']:.1f}x / {rows[key]['cpu_ratio']:.1f}x" for key in ("http", "mcp")
    ]
    monkeypatch.setattr(bench, "TOOL", bench.TOOL.replace('read: {path: "orders.{order_id}", not_found: "no order {order_id}"}', "returns: {id: O1}"))
    with pytest.raises(SystemExit, match="some answers were wrong"):
        bench.main(["--rounds", "1", "--calls", "40", "--mcp-calls", "10"])


def test_environment_run_times_every_batch_against_its_agents_baseline_and_run_all_reads_it(out: Path, monkeypatch):
    """Every batch runs for real on a copy of the example, the HTTP agent's calls over loopback; the baseline is the
    environment scenario without its environment and its state checks; a batch that does not give what its scenario
    must (here: the faulted order expected to pass) makes the script refuse its figures."""
    bench = _script("environment_run")
    run_all = _script("run_all")
    assert "environment_run" in {s.name for s in run_all.SCRIPTS}
    monkeypatch.setattr(bench, "WORK", out / "environment_run")
    assert bench.main(["--runs", "2", "--parallel", "2", "--rounds", "1"]) == 0
    saved = json.loads((out / "environment_run.json").read_text())
    rows = {row["key"]: row for row in saved["rows"]}
    assert list(rows) == [f"{agent}_{batch}" for agent in ("python", "http") for batch in ("baseline", "placed", "timeout_off", "timeout_on")]
    assert rows["python_baseline"]["wall_ratio"]["median"] == rows["http_baseline"]["cpu_ratio"]["median"] == 1.0
    assert all(row["wall_ms"] > 0 and row["cpu_ms"] > 0 for row in rows.values())
    assert {row["baseline"] for key, row in rows.items() if key.startswith("http")} == {"http_baseline"}
    baseline = load_scenario(out / "environment_run" / "project" / "eval" / "scenarios" / bench.BASELINE)
    placed = load_scenario(REPO / "examples" / "card_replace" / "eval" / "scenarios" / "run_order_placed.yml")
    assert baseline.environment is None and placed.environment is not None
    assert [type(a).key for a in baseline.goals.assertions] == ["bot_uttered"]
    assert [r.figure for r in run_all.read_environment_run(None, 0)] == [
        f"{rows[key]['wall_ratio']['median']:.2f}x / {rows[key]['cpu_ratio']['median']:.2f}x" for key in ("python_placed", "http_placed")
    ]
    every = bench.batches()
    monkeypatch.setattr(bench, "batches", lambda: [dataclasses.replace(b, verdict="pass") for b in every])
    with pytest.raises(SystemExit, match="batch python_timeout_on did not run as it must.*fail, not pass"):
        bench.main(["--runs", "1", "--parallel", "1", "--rounds", "1"])
