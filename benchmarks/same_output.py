"""Does every command print and write the same bytes on two versions of dialogcheck?

A refactoring promises that nothing a user sees changes. This script holds it to that: it runs
every command (validate, check in each format and with a results folder, run, report, import,
compare, calibrate) on the bundled example, on tau-bench's recorded airline sample and on
generated conversations, once per side, each side in its own copy of the inputs, and compares
exit codes, stdout, stderr and every file written, byte for byte.

Only what a clock decides is blanked first: ISO times and the seconds a run took (a run of the same
version twice differs there and nowhere else; `--side a=. --side b=.` shows it).

Sides as in `check_e2e.py`: a commit, a checkout folder, or a python executable with dialogcheck
installed. The first side is the baseline.

    .venv/bin/python benchmarks/same_output.py --side base=b788e1f --side new=.
    .venv/bin/python benchmarks/same_output.py --side a=. --side b=.     # the noise floor: none

Exit code 1 when a side differs from the baseline; the first lines of each difference are printed.
Writes `benchmarks/out/same_output.json`.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_e2e import Side, resolve
from common import OUT, ROOT, SCENARIO, SOP, dataset, log, save

WORK = OUT / "same_output"
EXAMPLE = ROOT / "examples" / "card_replace"
TAU_SAMPLE = ROOT / "tests" / "importers" / "data" / "tau_bench_airline_sample.json"
OTLP_SAMPLE = ROOT / "tests" / "importers" / "data" / "otlp_weather.jsonl"
OTLP_SOP = ROOT / "tests" / "importers" / "data" / "weather_sop.yml"

#: Each command: a name and its arguments, run in the side's work folder (which holds `example/`,
#: `tau.json`, `otlp.jsonl`, `weather_sop.yml`, `synth.jsonl`, `scenario.yml` and `sop.yml`), in this order
#: (later ones read what earlier ones wrote). A third item names a file that stdout is written to as well.
COMMANDS: list[tuple[str, list[str]] | tuple[str, list[str], str]] = [
    ("validate example", ["validate", "example"]),
    ("validate bad path", ["validate", "missing"]),
    ("check scenario text", ["check", "--no-judge", "--scenario", "example/eval/scenarios/card_replace_damaged.yml",
                             "example/conversations/"]),
    ("check scenario json", ["check", "--no-judge", "--scenario", "example/eval/scenarios/card_replace_damaged.yml",
                             "example/conversations/", "--format", "json"]),
    ("check scenario junit", ["check", "--no-judge", "--scenario", "example/eval/scenarios/card_replace_damaged.yml",
                              "example/conversations/", "--junit", "out/check.xml", "--html", "out/check.html"]),
    ("check scenario output", ["check", "--no-judge", "--scenario", "example/eval/scenarios/card_replace_damaged.yml",
                               "example/conversations/", "--output", "out/check_folder", "--show", "all"]),
    ("check scenarios unpaired", ["check", "--no-judge", "--scenario", "example/eval/scenarios",
                                  "example/conversations/"]),
    ("check sop text", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml", "example/conversations/"]),
    ("check sop json", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml", "example/conversations/",
                        "--format", "json"]),
    ("check sop jobs 2", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml", "example/conversations/",
                          "--jobs", "2", "--format", "json"]),
    ("check sop json file", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml", "example/conversations/",
                             "--format", "json", "--otlp-out", "out/sop_otlp.jsonl",
                             "--openinference-out", "out/sop_oi.jsonl"], "out/sop.json"),
    ("check sop jobs json file", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml",
                                  "example/conversations/", "--jobs", "2", "--format", "json"], "out/sop_jobs.json"),
    ("check sop output", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml", "example/conversations/",
                          "--output", "out/sop_folder", "--junit", "out/sop.xml"]),
    ("check sop one", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml",
                       "example/conversations/sop_orders_without_confirming.jsonl", "--max-failures", "1"]),
    ("check parquet", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml", "example/conversations/",
                       "--output", "out/parquet_folder", "--output-format", "parquet"]),
    ("report parquet folder", ["report", "out/parquet_folder"]),
    ("check bad input", ["check", "--no-judge", "--sop", "example/sops/replace_card.yml", "missing.jsonl"]),
    ("report check folder", ["report", "out/check_folder"]),
    ("report sop folder", ["report", "out/sop_folder", "--html", "out/sop_report.html"]),
    ("run example", ["run", "--no-judge", "example", "--results", "out/run"]),
    ("run faults off", ["run", "--no-judge", "example/eval/scenarios/run_order_timeout.yml", "--runs", "3",
                        "--faults", "off", "--results", "out/run_base"]),
    ("run faults on", ["run", "--no-judge", "example/eval/scenarios/run_order_timeout.yml", "--runs", "3",
                       "--results", "out/run_new"]),
    ("report run", ["report", "out/run", "--html", "out/run_report.html"]),
    ("compare runs", ["compare", "out/run_base", "out/run_new"]),
    ("compare runs json", ["compare", "out/run_base", "out/run_new", "--format", "json", "--fail-on", "regression"]),
    ("import tau", ["import", "--from", "tau-bench", "tau.json", "-o", "out/tau/runs.jsonl",
                    "--derive-scenarios", "out/tau/scenarios"]),
    ("check tau", ["check", "--no-judge", "--scenario", "out/tau/scenarios", "--pair", r"task-(\d+)",
                   "out/tau/runs.jsonl", "--format", "json"]),
    ("check tau text", ["check", "--no-judge", "--scenario", "out/tau/scenarios", "--pair", r"task-(\d+)",
                        "out/tau/runs.jsonl", "--review-user"]),
    ("check tau input format", ["check", "--no-judge", "--input-format", "tau-bench", "--sop", "sop.yml", "tau.json"]),
    ("check otlp", ["check", "--no-judge", "--sop", "weather_sop.yml", "--input-format", "otlp", "otlp.jsonl",
                    "--otlp-out", "out/verdicts.jsonl"]),
    ("import otlp", ["import", "--from", "otlp", "otlp.jsonl", "-o", "out/otlp.jsonl"]),
    ("check synth scenario text", ["check", "--no-judge", "--scenario", "scenario.yml", "synth.jsonl"]),
    ("check synth scenario json", ["check", "--no-judge", "--scenario", "scenario.yml", "synth.jsonl",
                                   "--format", "json"]),
    ("check synth sop json", ["check", "--no-judge", "--sop", "sop.yml", "synth.jsonl", "--format", "json",
                              "--junit", "out/synth.xml"]),
    ("check synth sop stream", ["check", "--no-judge", "--sop", "sop.yml", "synth.jsonl", "--stream",
                                "--format", "json"]),
    ("check synth sop output", ["check", "--no-judge", "--sop", "sop.yml", "synth.jsonl", "--output",
                                "out/synth_folder", "--html", "out/synth.html"]),
    ("report synth folder", ["report", "out/synth_folder"]),
    ("compare checks", ["compare", "out/sop.json", "out/sop_jobs.json"]),
]

#: What a clock decides: ISO times, and the seconds a run or a batch took.
_CLOCK = [
    (re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"), b"<time>"),
    (re.compile(rb'"(duration_s|seconds|elapsed_s|started|finished|started_at|finished_at|timestamp|latency_s)"'
                rb"\s*:\s*[0-9.e+-]+"), rb'"\1": <n>'),
    (re.compile(rb"\b\d+(?:\.\d+)? ?(?:s|ms|seconds)\b"), b"<n s>"),
    (re.compile(rb"\b\d{10}(?:\.\d+)?\b"), b"<epoch>"),
    (re.compile(rb"\b\d{19}\b"), b"<epoch ns>"),
    (re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), b"<uuid>"),
    (re.compile(rb' time="[0-9.]+"'), b' time="<n>"'),
    (re.compile(rb'"latency_s": \[[^\]]*\]'), b'"latency_s": <list>'),
]


def blank_clock(data: bytes) -> bytes:
    for pattern, replacement in _CLOCK:
        data = pattern.sub(replacement, data)
    return data


def prepare(side: Side, synth: Path) -> Path:
    work = WORK / side.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(EXAMPLE, work / "example", ignore=shutil.ignore_patterns("__pycache__", "results", ".dialogcheck"))
    shutil.copy(TAU_SAMPLE, work / "tau.json")
    shutil.copy(OTLP_SAMPLE, work / "otlp.jsonl")
    shutil.copy(OTLP_SOP, work / "weather_sop.yml")
    shutil.copy(synth, work / "synth.jsonl")
    shutil.copy(SCENARIO, work / "scenario.yml")
    shutil.copy(SOP, work / "sop.yml")
    (work / "out").mkdir()
    return work


def run_side(side: Side, synth: Path) -> dict[str, bytes]:
    """Every command's exit code, stdout and stderr, then every file written, by name."""
    work = prepare(side, synth)
    before = {p for p in work.rglob("*") if p.is_file()}
    seen: dict[str, bytes] = {}
    env = {**side.env, "NO_COLOR": "1", "COLUMNS": "120", "PYTHONHASHSEED": "0"}
    for name, args, *into in COMMANDS:
        done = subprocess.run([*side.command, *args], cwd=work, env=env, capture_output=True,
                              stdin=subprocess.DEVNULL, check=False)
        if into:
            (work / into[0]).write_bytes(done.stdout)
        if b"Traceback" in done.stderr:
            log(f"{side.name}: `{name}` raised:\n{done.stderr.decode(errors='replace')[-1500:]}")
        seen[f"{name} / exit code"] = str(done.returncode).encode()
        seen[f"{name} / stdout"] = done.stdout
        seen[f"{name} / stderr"] = done.stderr
    for path in sorted(p for p in work.rglob("*") if p.is_file() and p not in before):
        if "__pycache__" in path.parts or ".dialogcheck" in path.parts or path.name == ".dialogcheck.lock":
            continue
        seen[f"file {path.relative_to(work)}"] = path.read_bytes()
    return {key: blank_clock(value.replace(str(work).encode(), b"<work>")) for key, value in seen.items()}


def differences(base: dict[str, bytes], other: dict[str, bytes]) -> list[str]:
    lines: list[str] = []
    for key in sorted(set(base) | set(other)):
        if key not in other or key not in base:
            lines.append(f"{key}: only on {'the baseline' if key in base else 'this side'}")
        elif base[key] != other[key]:
            diff = difflib.unified_diff(base[key].decode(errors="replace").splitlines(),
                                        other[key].decode(errors="replace").splitlines(), lineterm="", n=1)
            lines.append(f"{key}:\n  " + "\n  ".join(list(diff)[2:14]))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", action="append", required=True, help="NAME=WHERE; the first is the baseline")
    parser.add_argument("--conversations", type=int, default=300, help="generated conversations checked")
    args = parser.parse_args()
    if len(args.side) < 2:
        raise SystemExit("give two --side or more: the first is the baseline")
    sides = [resolve(spec) for spec in args.side]
    synth, _ = dataset(args.conversations)
    outputs = {side.name: run_side(side, synth) for side in sides}
    base = sides[0]
    result: dict[str, object] = {"commands": len(COMMANDS), "conversations": args.conversations,
                                 "sides": {s.name: s.commit for s in sides}, "differences": {}}
    failed = False
    for side in sides[1:]:
        found = differences(outputs[base.name], outputs[side.name])
        result["differences"][side.name] = found  # type: ignore[index]
        digest = hashlib.sha256(b"".join(k.encode() + v for k, v in sorted(outputs[side.name].items()))).hexdigest()
        print(f"{side.name} ({side.commit}) against {base.name} ({base.commit}): {len(COMMANDS)} commands, "
              f"{len(outputs[side.name])} outputs, {len(found)} differ (sha256 {digest[:12]})")
        for line in found:
            print("  " + line.replace("\n", "\n  "))
        failed = failed or bool(found)
    save("same_output", result)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
