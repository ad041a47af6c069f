"""`dialogcheck compare` of two big `check --format json` documents, against only decoding them, in the same run.

The documents are real `check` output: generated conversations (`synth.py
--short`, seeds 1 and 2, so the same conversation ids with different
conversations behind them) checked against `fixtures/scale_scenario.yml` (20
assertions each), made once into `benchmarks/out/compare/` and reused while
the data and the scenario are unchanged. Each round runs, each in a fresh
process, best of `--rounds`:

* the baseline: decoding every conversation line of both documents with
  orjson, a line at a time, as any reader of them must;
* `compare BASE NEW --format json`: pairs by conversation id, one run a side
  at every key (exact McNemar);
* `compare BASE NEW --match REGEX --format json`: the last three digits of
  the id as the key, so 1,000 keys of N/1,000 runs a side (the permutation
  test on per-key pass rates).

It reports the CPU and wall seconds and the peak RSS of each, the ratio of CPU
time against the baseline's (on a shared machine wall time moves with the
load far more), and, from the same commands on a tenth of the conversations,
how peak RSS grows with the number of conversations.

Run: .venv/bin/python benchmarks/compare.py                     # 100,000 conversations a side
     .venv/bin/python benchmarks/compare.py --conversations 20000 --rounds 1
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, SCENARIO, cli_command, dataset, environ, log, save, table

WORK = OUT / "compare"
#: The key of a conversation under `--match`: the last three digits of its id, so 1,000 keys.
MATCH = r"synth-\d*(\d{3})$"

#: The baseline: every conversation line of each document decoded with orjson, a line at a time.
DECODE = """\
import sys, orjson
decoded = 0
for name in sys.argv[1:]:
    with open(name, "rb") as lines:
        next(lines)  # {"conversations": [
        for line in lines:
            if line.startswith(b"]"):
                break
            orjson.loads(line.rstrip().removesuffix(b","))
            decoded += 1
print(decoded)
"""


#: Runs a command from a fresh process (so no other child counts): its peak RSS (KiB), wall seconds and CPU seconds.
MEASURE = """\
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
seconds = time.perf_counter() - start
if done.returncode != 0 or b"Traceback" in done.stderr:
    sys.exit(done.stderr.decode()[-2000:])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, seconds, usage.ru_utime + usage.ru_stime)
"""


def document(n: int, seed: int) -> Path:
    """`check --format json` of `n` generated conversations (seed `seed`), made once while its inputs are unchanged."""
    data, _ = dataset(n, seed, short=True)
    path = WORK / f"check_{n}_{seed}.json"
    key = hashlib.sha256(data.with_suffix(".meta.json").read_bytes() + SCENARIO.read_bytes()).hexdigest()
    stamp = path.with_suffix(".key")
    if path.exists() and stamp.exists() and stamp.read_text() == key:
        return path
    log(f"checking {n:,} conversations (seed {seed}) into {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        done = subprocess.run(cli_command() + ["check", "--jobs", "2", "--no-judge", "--format", "json", "--scenario", str(SCENARIO), str(data)],
                              stdout=out, stderr=subprocess.PIPE, env=environ(), check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"check exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    stamp.write_text(key)
    return path


def measure(argv: list[str], rounds: int) -> dict[str, float]:
    """Least CPU and wall seconds, and highest peak RSS (MiB), of `argv` over `rounds` fresh processes.

    CPU time (user + system) is the figure compared: on a shared machine wall time moves with the
    other sessions' load far more than CPU time does.
    """
    runs = []
    for _ in range(rounds):
        done = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True, text=True, env=environ(), check=False)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:3])}... failed: {done.stderr[-2000:]}")
        kib, wall, cpu = done.stdout.split()
        runs.append((int(kib), float(wall), float(cpu)))
    return {"cpu_seconds": round(min(r[2] for r in runs), 3), "seconds": round(min(r[1] for r in runs), 3),
            "peak_rss_mib": round(max(r[0] for r in runs) / 1024, 1)}


def verdict(base: Path, new: Path, *options: str) -> dict[str, Any]:
    done = subprocess.run(cli_command() + ["compare", str(base), str(new), *options, "--format", "json"],
                          capture_output=True, env=environ(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"compare exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    result = orjson.loads(done.stdout)
    return {"verdict": result["verdict"], "p_value": result["p_value"], "test": result["test"], "keys": len(result["keys"])}


def run_size(n: int, rounds: int) -> dict[str, Any]:
    base, new = document(n, 1), document(n, 2)
    sides = [str(base), str(new)]
    found: dict[str, Any] = {"megabytes": round((base.stat().st_size + new.stat().st_size) / 1e6, 1)}
    log(f"{n:,} conversations a side ({found['megabytes']:,} MB in all): baseline, compare, compare --match")
    found["decode"] = measure([sys.executable, "-c", DECODE, *sides], rounds)
    found["compare"] = measure(cli_command() + ["compare", *sides, "--format", "json"], rounds)
    found["compare_match"] = measure(cli_command() + ["compare", *sides, "--match", MATCH, "--format", "json"], rounds)
    found["result"] = verdict(base, new)
    found["result_match"] = verdict(base, new, "--match", MATCH)
    for name in ("compare", "compare_match"):
        found[name]["ratio"] = round(found[name]["cpu_seconds"] / found["decode"]["cpu_seconds"], 2)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100_000, help="conversations a side (default 100,000)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per command, best time kept (default 3)")
    args = parser.parse_args(argv)
    sizes = (args.conversations // 10, args.conversations)
    found = {n: run_size(n, args.rounds) for n in sizes}
    rows = []
    for n, f in found.items():
        for name, label in (("decode", "decode both (orjson, by line)"), ("compare", "compare"), ("compare_match", "compare --match (1,000 keys)")):
            ratio = f"{f[name]['ratio']:.2f}" if "ratio" in f[name] else ""
            rows.append([f"{n:,}", label, f"{f[name]['cpu_seconds']:.2f}", ratio, f"{f[name]['seconds']:.2f}", f"{f[name]['peak_rss_mib']:,.1f}"])
    print(f"\n## compare: two check --format json documents, best of {args.rounds}\n")
    print(table(["conversations a side", "command", "CPU s", "x decode", "wall s", "peak RSS MiB"], rows))
    small, large = (found[n] for n in sizes)
    growth = {name: round(large[name]["peak_rss_mib"] / small[name]["peak_rss_mib"], 2) for name in ("decode", "compare", "compare_match")}
    per_thousand = round((large["compare"]["peak_rss_mib"] - small["compare"]["peak_rss_mib"]) / ((sizes[1] - sizes[0]) / 1000), 2)
    print(f"\npeak RSS at {sizes[1]:,} over {sizes[0]:,}: " + ", ".join(f"{k} {v:.2f}x" for k, v in growth.items())
          + f"; compare adds {per_thousand} MiB per 1,000 conversations a side")
    for n, f in found.items():
        print(f"verdicts at {n:,}: {f['result']}; with --match: {f['result_match']}")
    save("compare", {"sizes": list(sizes), "rounds": args.rounds, "match": MATCH, "results": {str(n): f for n, f in found.items()},
                     "rss_growth": growth, "mib_per_1000_conversations": per_thousand})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
