"""Run every benchmark and print one table: benchmark, figure, target, met?

Each script runs as its own process with this python and writes its figures
as JSON under `benchmarks/out/`, which this script reads back (`tau_bench.py`
writes no JSON: its agreement line is read from its output). A script that is
missing is "not available"; one that breaks, or leaves no fresh JSON, is
"error" with its last lines of stderr. The table is also written to
`benchmarks/out/run_all.json` and `run_all.md`.

Run: .venv/bin/python benchmarks/run_all.py            # full sizes (well over an hour)
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
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


@dataclass
class Row:
    benchmark: str
    figure: str
    target: str
    met: bool | None  # None: not applicable or not available

    @property
    def verdict(self) -> str:
        return {True: "yes", False: "NO", None: "-"}[self.met]


@dataclass
class Script:
    name: str
    argv: list[str]
    quick: list[str]
    read: Callable[[subprocess.CompletedProcess, float], list[Row]]


def fresh_json(path: Path, since: float) -> dict:
    """The JSON a script wrote during this run (an older file would be last run's figures)."""
    if not path.exists() or path.stat().st_mtime < since:
        raise RuntimeError(f"{path.relative_to(HERE.parent)} was not written")
    return json.loads(path.read_text())


def read_check_throughput(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json(OUT / "check_throughput" / "results.json", since)
    ratio = data["ratios"]["load_check_vs_orjson"]
    flagged = data.get("flagged", [])
    sizes = sorted({int(key.rsplit("|", 1)[1]) for key in data["linearity"] if "|" in key})
    span = f"{sizes[0] // 1000}k-{sizes[-1] // 1000}k events"
    return [
        Row(f"check_throughput: load + check vs orjson.loads ({data['batch']['conversations']:,} conversations, in process)",
            f"{ratio:.1f}x", "(reported)", None),
        Row(f"check_throughput: assertion keys super-linear ({span})",
            str(len(flagged)) + (f": {', '.join(flagged)}" if flagged else ""), "0", not flagged),
    ]


def read_tau_bench(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    match = re.search(r"agreement with the recorded rewards: (\d+)/(\d+)", done.stdout)
    if not match:
        raise RuntimeError("no agreement line in its output")
    agree, total = int(match[1]), int(match[2])
    return [Row("tau_bench: verdicts agreeing with tau-bench's rewards", f"{agree}/{total}", ">= 195/200", agree >= 195)]


def read_run_parallel(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = fresh_json(OUT / "parallel" / "results.json", since)
    target = data["target_ratio"]
    return [Row(f"run_parallel: {m['name']}", f"{m['ratio']:.2f}x of ideal", f"<= {target:g}x", m["ratio"] <= target)
            for m in data["measures"] if m.get("target")]


def read_scale(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    rows = []
    for name in ("check", "linear", "memory", "jobs", "ray", "agentevals"):
        try:
            data = fresh_json(OUT / "scale" / f"{name}.json", since)
        except RuntimeError as err:
            rows.append(Row(f"scale {name}", f"error: {err}", "", False))
            continue
        if data.get("available") is False:
            rows.append(Row(f"scale {name}", f"not available: {data['why']}", "", None))
        elif name == "check":
            events = data["data"]["events"]
            rows.append(Row(f"scale check: scenario with the SOP as goals.sop, one run, {data['data']['conversations']:,} conversations ({events:,} events) vs {data['baseline']}",
                            f"{data['ratio']:.2f}x", f"<= {data['target']:g}x", data["met"]))
        elif name == "linear":
            scan = f"; one pass over the events {data['scan_ratio']:.2f}x" if "scan_ratio" in data else ""
            rows.append(Row(f"scale linear: 10x the events, every check family alone (worst: {data['max_family']}{scan})",
                            f"{data['max_ratio']:.2f}x", f"<= {data['target']:g}x", data["met"]))
        elif name == "memory":
            sizes = list(data["runs"])
            rows.append(Row(f"scale memory: peak RSS {int(sizes[1]):,} / {int(sizes[0]):,} conversations",
                            f"{data['ratio']:.3f}x", f"<= {data['target']:g}x", data["met"]))
        elif name == "jobs":
            rows.append(Row("scale jobs: --jobs 2 vs --jobs 1", f"{data['speedup']:.2f}x faster"
                            + ("" if data["same_verdicts"] else ", verdicts differ"), f">= {data['target']:g}x", data["met"]))
        elif name == "ray":
            rows.append(Row("scale ray: --engine ray vs local, verdicts that differ",
                            f"{data['verdicts_differ']} of {data['conversations_compared']:,}", "0", data["met"]))
        elif name == "agentevals":
            rows.append(Row(f"scale agentevals: conversations/s, dialogcheck / agentevals strict ({data['conversations']:,})",
                            f"{data['ratio_dialogcheck_over_agentevals']:.2f}x", "(reported)", None))
            rows.append(Row("scale agentevals: trajectories judged differently", str(data["disagree"]), "0", data["disagree"] == 0))
    return rows


def read_cold_start(done: subprocess.CompletedProcess, since: float) -> list[Row]:
    data = json.loads(done.stdout)
    return [Row(f"cold_start: {row['name']}", f"{row['ratio']:.2f}x", f"<= {row['target']:g}x", row["met"])
            for row in data["rows"] if row.get("target") is not None]


SCRIPTS = [
    Script("check_throughput", ["check_throughput.py"], ["--conversations", "300", "--sizes", "5000,10000,20000", "--repeats", "1", "--no-cli"], read_check_throughput),
    Script("tau_bench", ["tau_bench.py"], [], read_tau_bench),
    Script("run_parallel", ["run_parallel.py"], ["--runs", "50", "--repeats", "1", "--no-fixes", "--no-cli"], read_run_parallel),
    Script("scale", ["scale.py", "all"], ["--quick"], read_scale),
    Script("cold_start", ["cold_start.py", "--json"], ["--repeats", "5"], read_cold_start),
]


def run(script: Script, quick: bool) -> list[Row]:
    path = HERE / script.argv[0]
    if not path.exists():
        return [Row(script.name, "not available (no benchmarks/" + script.argv[0] + ")", "", None)]
    argv = [sys.executable, str(path), *script.argv[1:], *(script.quick if quick else [])]
    print(f"== {' '.join(argv[1:])}", file=sys.stderr, flush=True)
    since = time.time()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=HERE.parent)
    (OUT / "run_all_logs").mkdir(parents=True, exist_ok=True)
    (OUT / "run_all_logs" / f"{script.name}.log").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
    try:
        return script.read(done, since)
    except (RuntimeError, ValueError, KeyError) as err:  # a script that broke, or changed its output
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return [Row(script.name, f"error (exit {done.returncode}): {err}; {tail}"[:300], "", False)]


def render(rows: list[Row]) -> str:
    heads = ["benchmark", "figure", "target", "met?"]
    cells = [[r.benchmark, r.figure, r.target, r.verdict] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    line = lambda c: "| " + " | ".join(x.ljust(w) for x, w in zip(c, widths)) + " |"  # noqa: E731
    return "\n".join([line(heads), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, cells)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a few minutes in all")
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SCRIPTS], help="run only these")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for script in SCRIPTS:
        if not args.only or script.name in args.only:
            rows += run(script, args.quick)
    text = render(rows)
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "run_all.md").write_text(text + "\n")
    (OUT / "run_all.json").write_text(json.dumps({"quick": args.quick, "rows": [asdict(r) for r in rows]}, indent=2) + "\n")
    return 1 if any(r.met is False for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
