"""Run every benchmark and print one table: benchmark, figure, target, met?

Each script runs as its own process with this python and writes its figures to
`benchmarks/out/NAME.json`, which this script reads back (`tau_bench.py`
writes none: its agreement line is read from its output). A script that
breaks, or leaves no fresh JSON, is "error" with the last lines of its stderr.
The table also goes to `benchmarks/out/run_all.md`, each script's output to
`benchmarks/out/run_all_logs/`.

Run: .venv/bin/python benchmarks/run_all.py            # default sizes (over an hour)
     .venv/bin/python benchmarks/run_all.py --quick    # small sizes (minutes)
     .venv/bin/python benchmarks/run_all.py --only scale cold_start
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import HERE, OUT, ROOT, table

from dialogcheck.checking import STREAM_ABOVE_BYTES


@dataclass
class Row:
    benchmark: str
    figure: str
    target: str = ""
    met: bool | None = None  # None: nothing to meet


def fresh_json(name: str, since: float) -> dict:
    """The figures a script wrote during this run (an older file holds an earlier run's)."""
    path = OUT / f"{name}.json"
    if not path.exists() or path.stat().st_mtime < since:
        raise RuntimeError(f"benchmarks/out/{name}.json was not written")
    return json.loads(path.read_text())


def read_check_e2e(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("check_e2e", since)
    base, *others = data["sides"].items()
    return [Row(f"check_e2e: CPU time of check, {name} ({side['commit']}) / {base[0]} ({base[1]['commit']})",
                f"{side['cpu_ratio_geomean']:.3f}", "same stdout", all(side["same_output_as_base"].values()))
            for name, side in others]


def read_scale(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    rows = []
    for name in ("check", "outcomes", "linear", "memory", "jobs", "ray", "agentevals"):
        try:
            data = fresh_json(f"scale_{name}", since)
        except RuntimeError as err:
            rows.append(Row(f"scale {name}", f"error: {err}", met=False))
            continue
        if data.get("available") is False:
            rows.append(Row(f"scale {name}", f"not available: {data['why']}"))
        elif name == "check":
            for run, ratio in data["ratios"].items():
                if run != data["baseline"] and "decode" not in run:
                    rows.append(Row(f"scale check: {run}, {data['data']['conversations']:,} conversations, vs {data['baseline']}",
                                    f"{ratio:.2f}x"))
        elif name == "outcomes":
            rows.append(Row("scale outcomes: time per conversation / per event, all failing over all passing",
                            f"{data['ratio_fail_over_pass_per_conversation']:.2f}x / {data['ratio_fail_over_pass']:.2f}x"))
        elif name == "linear":
            rows.append(Row(f"scale linear: 10x the events, every check alone (worst: {data['max_family']}; one pass "
                            f"over the events {', '.join(f'{v:.2f}x' for v in data['baseline_ratios'].values())})",
                            f"{data['max_ratio']:.2f}x", f"<= {data['target']:g}x", data["met"]))
        elif name == "memory":
            small, large = data["runs"]
            rows.append(Row(f"scale memory: peak RSS, {int(large):,} / {int(small):,} conversations",
                            f"{data['ratio']:.3f}x", f"<= {data['target']:g}x", data["met"]))
        elif name == "jobs":
            for output, speedup in data["speedups"].items():
                rows.append(Row(f"scale jobs: --jobs 2 vs --jobs 1, {output}", f"{speedup:.2f}x faster",
                                "same verdicts", data["same_verdicts"]))
        elif name == "ray":
            rows.append(Row("scale ray: --engine ray vs local, verdicts that differ",
                            f"{data['verdicts_differ']} of {data['conversations_compared']:,}", "0", data["met"]))
        elif name == "agentevals":
            rows.append(Row(f"scale agentevals: conversations/s, dialogcheck / agentevals strict ({data['conversations']:,})",
                            f"{data['ratio_dialogcheck_over_agentevals']:.2f}x", "0 judged apart", data["disagree"] == 0))
    return rows


def read_run_parallel(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("run_parallel", since)
    return [Row(f"run_parallel: {m['agent']}, {m['user']} user, (wall - start-up) / ideal", f"{m['ratio']:.2f}x",
                f"<= {data['target']:g}x", m["met"]) for m in data["measures"]]


def read_cold_start(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("cold_start", since)
    return [Row(f"cold_start: {row['name']}", f"{row['ratio']:.2f}x", f"<= {row['target']:g}x", row["met"])
            for row in data["rows"] if row.get("target") is not None]


def read_tau_bench(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    match = re.search(r"agreement with the recorded rewards: (\d+)/(\d+)", done.stdout)
    if not match:
        raise RuntimeError("no agreement line in its output")
    agree, total = int(match[1]), int(match[2])
    return [Row("tau_bench: verdicts agreeing with tau-bench's rewards", f"{agree}/{total}", ">= 195/200", agree >= 195)]


def read_compare(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("compare", since)
    large = data["results"][str(data["sizes"][1])]
    return [
        Row(f"compare: CPU time over decoding both documents, {data['sizes'][1]:,} conversations a side, pairs / --match",
            f"{large['compare']['ratio']:.2f}x / {large['compare_match']['ratio']:.2f}x"),
        Row(f"compare: peak RSS, {data['sizes'][1]:,} / {data['sizes'][0]:,} conversations a side",
            f"{data['rss_growth']['compare']:.2f}x"),
    ]


def read_html_report(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("html_report", since)
    targets = data["targets"]
    conversations = data["data"]["conversations"]
    memory_row = Row(f"html_report: peak RSS with --html, {conversations:,} / {conversations // 10:,} conversations",
                     f"{data['memory_ratio']:.3f}x", f"<= {targets['memory_ratio']:g}x", data["memory_ratio"] <= targets["memory_ratio"])
    if data["data"]["bytes"] <= STREAM_ABOVE_BYTES:  # read whole before judging (docs/commands-reference.md): memory grows with it, as it should
        memory_row.target, memory_row.met = f"none: input under {STREAM_ABOVE_BYTES >> 20} MiB is read whole", None
    return [
        Row(f"html_report: check --html / without, wall time, {conversations:,} conversations", f"{data['wall_ratio']:.2f}x",
            f"<= {targets['time_ratio']:g}x", data["wall_ratio"] <= targets["time_ratio"]),
        Row("html_report: the page's size", f"{data['page_bytes'] / 2**20:.1f} MiB", f"< {targets['page_mb']} MB",
            data["page_bytes"] < targets["page_mb"] * 2**20),
        memory_row,
    ]


def read_otlp_import(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("otlp_import", since)
    small, large = (data["results"][str(n)] for n in (data["sizes"][0], data["sizes"][-1]))
    spans = f"{large['data']['spans']:,} / {small['data']['spans']:,} spans"
    return [
        Row(f"otlp_import: peak RSS of import --from otlp, {spans}", f"{data['rss_growth']['import']:.3f}x",
            f"<= {data['target']:g}x", data["rss_growth"]["import"] <= data["target"]),
        Row(f"otlp_import: peak RSS of check --input-format otlp --stream, {spans}", f"{data['rss_growth']['check']:.3f}x",
            f"<= {data['target']:g}x", data["rss_growth"]["check"] <= data["target"]),
        Row(f"otlp_import: CPU time over decoding the file, import / check, {large['data']['spans']:,} spans",
            f"{large['import']['cpu_over_decode']:.2f}x / {large['check']['cpu_over_decode']:.2f}x"),
    ]


def read_user_review(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("user_review", since)
    planted = sum(kind["planted"] for kind in data["planted"].values())
    caught = sum(kind["caught"] for kind in data["planted"].values())
    return [
        Row("user_review: real simulated runs flagged", f"{data['flagged']}/{data['runs']}", "<= 1 in 20", data["flagged"] * 20 <= data["runs"]),
        Row("user_review: planted simulator faults caught", f"{caught}/{planted}", "all", caught == planted),
    ]


def read_environment_calls(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("environment_calls", since)
    rows = {row["key"]: row for row in data["rows"]}
    return [
        Row(f"environment_calls: a tool call over {way} / a direct call, wall time / the environment's CPU",
            f"{rows[key]['wall_ratio']:.1f}x / {rows[key]['cpu_ratio']:.1f}x")
        for key, way in (("http", "HTTP"), ("mcp", "MCP"))
    ]


def read_environment_run(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json("environment_run", since)
    rows = {row["key"]: row for row in data["rows"]}
    return [
        Row(f"environment_run: run_order_placed with its environment / without, {agent}, wall time / CPU per run",
            f"{rows[key]['wall_ratio']['median']:.2f}x / {rows[key]['cpu_ratio']['median']:.2f}x")
        for key, agent in (("python_placed", "Python agent"), ("http_placed", "HTTP agent"))
    ]


@dataclass
class Script:
    name: str
    argv: list[str]
    quick: list[str]
    read: Callable[[subprocess.CompletedProcess, float], list[Row]]


SCRIPTS = [
    Script("check_e2e", ["check_e2e.py"], ["--rounds", "3", "--conversations", "1000"], read_check_e2e),
    Script("scale", ["scale.py", "all"], ["--quick"], read_scale),
    Script("run_parallel", ["run_parallel.py"], ["--runs", "50", "--repeats", "1"], read_run_parallel),
    Script("cold_start", ["cold_start.py"], ["--repeats", "5"], read_cold_start),
    Script("tau_bench", ["tau_bench.py"], [], read_tau_bench),
    Script("user_review", ["user_review.py"], [], read_user_review),
    Script("compare", ["compare.py"], ["--conversations", "2000", "--rounds", "1"], read_compare),
    Script("html_report", ["html_report.py"], ["--conversations", "2000", "--short", "--rounds", "1"], read_html_report),
    Script("otlp_import", ["otlp_import.py"], ["--quick"], read_otlp_import),
    Script("environment_calls", ["environment_calls.py"], ["--rounds", "2", "--calls", "500", "--mcp-calls", "100"], read_environment_calls),
    Script("environment_run", ["environment_run.py"], ["--rounds", "3", "--runs", "20"], read_environment_run),
]


def run(script: Script, quick: bool) -> list[Row]:
    argv = [sys.executable, str(HERE / script.argv[0]), *script.argv[1:], *(script.quick if quick else [])]
    print(f"== {' '.join(argv[1:])}", file=sys.stderr, flush=True)
    since = time.time()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT)
    (OUT / "run_all_logs").mkdir(parents=True, exist_ok=True)
    (OUT / "run_all_logs" / f"{script.name}.log").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
    try:
        return script.read(done, since)
    except (RuntimeError, ValueError, KeyError) as err:  # a script that broke, or changed its output
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return [Row(script.name, f"error (exit {done.returncode}): {err}; {tail}"[:300], met=False)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a few minutes in all")
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SCRIPTS], help="run only these")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for script in SCRIPTS:
        if not args.only or script.name in args.only:
            rows += run(script, args.quick)
    text = table(["benchmark", "figure", "target", "met?"],
                 [[r.benchmark, r.figure, r.target, {True: "yes", False: "NO", None: "-"}[r.met]] for r in rows])
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "run_all.md").write_text(text + "\n")
    return 1 if any(r.met is False for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
