"""The scale benchmarks of issue 8, each a ratio measured against a baseline in the same run.

Sub-benchmarks (`python benchmarks/scale.py NAME...`, or `all`):

* `check`: `dialogcheck check --jobs 1` of the 100k generated conversations
  with the 20-assertion scenario and, in a second run, the 7-step SOP
  (`benchmarks/fixtures/`), summed, against only decoding the same file with
  the fastest of `orjson.loads` per line, `msgspec.json.decode` per line and
  `msgspec.json.Decoder().decode_lines` (16 MB blocks). Target: at most 2.0x.
* `linear`: every assertion key and SOP evaluator type alone, on one
  conversation of E and 10E events (index built once), in the fixtures' form
  and in a worst-case form that matches nothing. Target: 10E costs at most 11x.
* `memory`: peak RSS of `dialogcheck check --stream` (a fresh process) on 10k
  and on 1M small conversations (`synth.py --short`). Target: at most 1.2x.
* `jobs`: `--jobs 1` against `--jobs 2` on the 100k set. Target: 1.7x faster.
* `ray`: `--engine ray` against `--engine local` on the 100k set: the same
  verdict for every conversation, and both times.
* `agentevals`: `agentevals_compare.py` (LangChain's trajectory match, strict,
  in its own venv) against dialogcheck on the same trajectories.

Each writes `benchmarks/out/scale/NAME.json` (figures, target, met) and
prints a summary; data files stay under `benchmarks/out/scale/` (gitignored)
and are reused while the generator and its fit are unchanged. `--jobs` and
`--engine` are reported "not available" when `dialogcheck check` lacks them.

Run: .venv/bin/python benchmarks/scale.py all            # full sizes (about an hour)
     .venv/bin/python benchmarks/scale.py all --quick    # small sizes (minutes)
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "scale"
FIXTURES = HERE / "fixtures"
SCENARIO = FIXTURES / "scale_scenario.yml"
SOP = FIXTURES / "scale_sop.yml"
sys.path.insert(0, str(HERE))

import synth  # noqa: E402 - benchmarks/ is not a package
from check_throughput import cli_command, decode_lines, flush_caches, git_revision, table, warm  # noqa: E402

import dialogcheck  # noqa: E402

TARGETS = {"check": 2.0, "linear": 11.0, "memory": 1.2, "jobs": 1.7}

# --------------------------------------------------------------------------- shared


def machine() -> dict[str, Any]:
    versions = {"orjson": orjson.__version__, "dialogcheck": dialogcheck.__version__}
    try:
        import msgspec

        versions["msgspec"] = msgspec.__version__
    except ImportError:
        versions["msgspec"] = None
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(), "platform": platform.platform(),
            "commit": git_revision(), "load_average": round(os.getloadavg()[0], 2), **versions}


@functools.cache
def check_help() -> str:
    return subprocess.run(cli_command() + ["check", "--help"], capture_output=True, text=True, check=True).stdout


def has_option(flag: str) -> bool:
    return flag in check_help()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def generator_digest() -> str:
    """Changes whenever the generator or its fit does, so stale data files are remade."""
    return hashlib.sha256((HERE / "synth.py").read_bytes() + synth.FIT_PATH.read_bytes()).hexdigest()[:16]


def dataset(n: int, seed: int, *, short: bool = False) -> tuple[Path, dict[str, int]]:
    """Generated conversations (reused when the same generator already wrote them)."""
    path = OUT / f"convs_{n}_{seed}{'_short' if short else ''}.jsonl"
    meta = path.with_suffix(".meta.json")
    key = {"n": n, "seed": seed, "short": short, "generator": generator_digest()}
    if path.exists() and meta.exists() and orjson.loads(meta.read_bytes()).get("key") == key:
        return path, orjson.loads(meta.read_bytes())["stats"]
    log(f"generating {n:,} conversations (seed {seed}{', short' if short else ''}) to {path}…")
    start = time.perf_counter()
    stats = synth.write_jsonl(path, n, seed, short=short)
    stats["generate_seconds"] = round(time.perf_counter() - start, 1)
    meta.write_bytes(orjson.dumps({"key": key, "stats": stats}))
    log(f"  {stats['events']:,} events, {stats['bytes'] / 1e6:,.0f} MB in {stats['generate_seconds']}s")
    return path, stats


def timed_cli(args: list[str], stdout: Path | None = None) -> float:
    """Wall seconds of one `dialogcheck` run; output to `stdout` or /dev/null. Exit 0 or 1 (some failed) only."""
    handle = stdout.open("wb") if stdout else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        done = subprocess.run(cli_command() + args, stdout=handle, stderr=subprocess.PIPE, check=False)
        seconds = time.perf_counter() - start
    finally:
        if stdout:
            handle.close()
    if done.returncode not in (0, 1) or b"Traceback" in done.stderr:  # exit 1 is also what a crash gives
        raise SystemExit(f"dialogcheck {' '.join(args[:6])}… exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return seconds


def verdicts(path: Path) -> list[tuple[str, str]]:
    """(source, verdict) of every conversation in a `check --format json` document."""
    document = orjson.loads(path.read_bytes())
    items = document.get("conversations", [document])
    return [(item.get("source", ""), item["verdict"]) for item in items]


def shard_verdicts(folder: Path) -> list[tuple[str, str]]:
    """(source, verdict) of every conversation in the `part-*.jsonl` shards of a `check --output` folder."""
    found = []
    for shard in sorted(folder.glob("part-*.jsonl")):
        with shard.open("rb") as lines:
            found += [(item["source"], item["verdict"]) for item in map(orjson.loads, lines)]
    return found


def save(name: str, result: dict[str, Any]) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": name, "command": "python benchmarks/scale.py " + " ".join(sys.argv[1:]),
              "machine": machine(), **result}
    (OUT / f"{name}.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return result


def not_available(name: str, why: str) -> dict[str, Any]:
    log(f"{name}: not available ({why})")
    return save(name, {"available": False, "why": why, "met": None})


# --------------------------------------------------------------------------- check


def decode_orjson(path: Path) -> int:
    return decode_lines(path, orjson.loads)


def decode_msgspec(path: Path) -> int:
    import msgspec

    return decode_lines(path, msgspec.json.decode)


def decode_msgspec_lines(path: Path, block: int = 16 * 2**20) -> int:
    """`Decoder.decode_lines` on blocks cut at a newline, so the whole file is never decoded at once."""
    import msgspec

    decoder = msgspec.json.Decoder()
    rest = b""
    with path.open("rb") as handle:
        while chunk := handle.read(block):
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            decoder.decode_lines(data[:cut])
            rest = data[cut:]
    if rest.strip():
        decoder.decode_lines(rest)
    return 0


def scenario_with_sop(folder: Path = OUT) -> Path:
    """The benchmark scenario with the SOP's 7 steps as its `goals.sop`: the issue's "scenario of 20 assertions
    ... plus a 7-step SOP" as one file, so one `check` decodes the data once and runs all 27 (a list of steps has
    no `threshold`, so only the SOP part's overall outcome can differ from the SOP file's; the work is the same)."""
    steps = SOP.read_text(encoding="utf-8").split("\n  steps:\n", 1)[1]
    nested = "\n".join(f"  {line}" if line.strip() else line for line in steps.split("\n"))
    path = folder / "scale_scenario_with_sop.yml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(SCENARIO.read_text(encoding="utf-8").rstrip("\n") + "\n    sop:\n" + nested, encoding="utf-8")
    return path


def bench_check(args: argparse.Namespace) -> dict[str, Any]:
    path, stats = dataset(args.conversations, args.seed)
    both = scenario_with_sop()
    decoders = {"orjson.loads per line": decode_orjson}
    try:
        import msgspec  # noqa: F401

        decoders["msgspec.json.decode per line"] = decode_msgspec
        decoders["msgspec Decoder().decode_lines, 16 MB blocks"] = decode_msgspec_lines
    except ImportError:
        log("msgspec is not installed (pip install -r benchmarks/requirements.txt): baseline is orjson only")
    jobs = ["--jobs", "1"] if has_option("--jobs") else []
    runs = {
        "scenario": ["check", *jobs, "--scenario", str(SCENARIO), "--format", "json", "--no-judge", str(path)],
        "sop": ["check", *jobs, "--sop", str(SOP), "--format", "json", "--no-judge", str(path)],
        "both": ["check", *jobs, "--scenario", str(both), "--format", "json", "--no-judge", str(path)],
    }
    best = {name: float("inf") for name in [*decoders, *runs]}
    for round_no in range(max(args.repeats, args.cli_repeats)):  # in turn, so drift hits all alike
        if round_no < args.repeats:
            for name, decode in decoders.items():
                gc.collect()
                start = time.perf_counter()
                decode(path)
                best[name] = min(best[name], time.perf_counter() - start)
                log(f"  {name}: {best[name]:.2f}s")
        if round_no < args.cli_repeats:
            for name, argv in runs.items():
                best[name] = min(best[name], timed_cli(argv))
                log(f"  dialogcheck check, {name}: {best[name]:.2f}s")
    baseline_name = min(decoders, key=best.get)
    baseline = best[baseline_name]
    total = best["scenario"] + best["sop"]
    ratio, ratio_summed = best["both"] / baseline, total / baseline
    rows = [[name, f"{best[name]:.2f}", f"{stats['events'] / best[name]:,.0f}", f"{best[name] / baseline:.2f}x"]
            for name in decoders]
    rows += [[f"dialogcheck check {' '.join(jobs)} --scenario (20 assertions)", f"{best['scenario']:.2f}",
              f"{stats['events'] / best['scenario']:,.0f}", f"{best['scenario'] / baseline:.2f}x"],
             [f"dialogcheck check {' '.join(jobs)} --sop (7 steps)", f"{best['sop']:.2f}",
              f"{stats['events'] / best['sop']:,.0f}", f"{best['sop'] / baseline:.2f}x"],
             ["scenario + SOP (two runs, summed)", f"{total:.2f}", f"{stats['events'] / total:,.0f}", f"{ratio_summed:.2f}x"],
             [f"dialogcheck check {' '.join(jobs)} --scenario with the SOP as goals.sop (27 checks, one run)",
              f"{best['both']:.2f}", f"{stats['events'] / best['both']:,.0f}", f"{ratio:.2f}x"]]
    print(f"\n## check: {stats['conversations']:,} conversations, {stats['events']:,} events, {stats['bytes'] / 1e6:,.0f} MB\n")
    print(table(["path", "seconds", "events/s", "vs fastest decoder"], rows))
    print(f"\nratio {ratio:.2f}x (one run; {ratio_summed:.2f}x as two runs summed) against {baseline_name} (target <= {TARGETS['check']}): "
          f"{'met' if ratio <= TARGETS['check'] else 'MISSED'}")
    return save("check", {
        "data": stats, "seed": args.seed, "jobs_flag": bool(jobs), "output": "/dev/null", "judge": "--no-judge",
        "repeats": {"decoders": args.repeats, "cli": args.cli_repeats}, "seconds": {k: round(v, 3) for k, v in best.items()},
        "baseline": baseline_name, "ratio": round(ratio, 3), "ratio_two_runs_summed": round(ratio_summed, 3),
        "target": TARGETS["check"], "met": ratio <= TARGETS["check"],
    })


# --------------------------------------------------------------------------- linear

# Each key in the form that does the most work on the generated data: nothing matches, so every
# candidate is compared (and the closest miss explained).
WORST_SCENARIO = """\
scenario:
  name: Scale benchmark - worst case of every key
  simulation_context: benchmark
  goals:
    assertions:
      - skill_activated: {skill_id: no_such_skill}
      - skill_completed: {skill_id: no_such_skill}
      - skill_cancelled: {skill_id: authenticate, step_id: no_such_step}
      - skill_interrupted: {skill_id: authenticate, step_id: no_such_step}
      - skill_resumed: {skill_id: authenticate, step_id: no_such_step}
      - ordered_block_entered: {skill_id: authenticate, block_id: no_such_block}
      - ordered_block_completed: {skill_id: authenticate, block_id: verify, step_id: no_such_step}
      - ordered_block_cancelled: {skill_id: authenticate, block_id: verify, step_id: no_such_step}
      - ordered_block_interrupted: {skill_id: authenticate, block_id: verify, step_id: no_such_step}
      - ordered_block_resumed: {skill_id: authenticate, block_id: verify, step_id: no_such_step}
      - memory_was_set:
          - name: project.user_id
            value: nobody_0000
          - name: project.customer_authenticated
            value: {not: a boolean}
      - memory_was_not_set:
          - name: project.fraud_flag
          - name: project.user_id
            value: nobody_0000
      - memory_was_cleared:
          - name: project.user_id
      - tool_executed:
          tool_name: get_reservation_details
          source: mcp
          mcp_server: airline
          arguments: {reservation_id: NOPE00}
      - tool_executed:
          tool_name: get_reservation_details
          source: mcp
          mcp_server: airline
          times: 1
      - tools_within_one_turn:
          ordered: true
          allow_extra_calls: false
          calls:
            - tool_executed: {tool_name: get_user_details, source: mcp, mcp_server: airline}
            - tool_executed: {tool_name: get_reservation_details, source: mcp, mcp_server: airline, arguments: {reservation_id: NOPE00}}
      - tools_within_one_turn:
          allow_extra_calls: false
          calls:
            - tool_executed: {tool_name: get_reservation_details, source: mcp, mcp_server: airline}
            - tool_executed: {tool_name: get_reservation_details, source: mcp, mcp_server: airline}
            - tool_executed: {tool_name: search_direct_flight, source: mcp, mcp_server: airline, is_error: true}
      - bot_uttered:
          utter_name: utter_ask_user_id
          text_matches: "(?i)never said"
          buttons: [{title: Yes}]
      - bot_did_not_utter:
          text_matches: "(?i)as an ai language model"
      - sequencing:
          - skill_activated: {skill_id: authenticate}
          - tool_executed: {tool_name: get_reservation_details, source: mcp, mcp_server: airline}
          - memory_was_set: project.user_id
          - bot_uttered: {utter_name: utter_no_such_response}
"""

WORST_SOP = """\
sop:
  id: worst_case
  name: Scale benchmark - worst case of every SOP evaluator
  steps:
    - {id: tool_called, evaluator: {type: tool_called, toolSlug: no_such_tool, catalogSlug: airline}}
    - id: tool_sequence
      evaluator: {type: tool_sequence, sequence: [get_reservation_details, no_such_tool], contiguous: false}
    - id: tool_sequence_contiguous
      evaluator: {type: tool_sequence, sequence: [get_reservation_details, get_reservation_details, no_such_tool], contiguous: true}
    - id: tool_input_contains
      evaluator:
        type: tool_input_contains
        toolSlug: get_reservation_details
        assertions: {reservation_id: {op: matches, pattern: "^NOPE"}}
    - id: tool_output_contains
      evaluator:
        type: tool_output_contains
        toolSlug: get_reservation_details
        assertions: {flights.0.flight_number: {op: equals, value: NOPE}}
    - {id: no_tool_called, evaluator: {type: no_tool_called, toolSlugs: [no_such_tool, another_missing_tool]}}
    - id: confirmation_requested
      evaluator: {type: confirmation_requested, beforeToolSlug: get_reservation_details, pattern: "(?i)never said", withinLastNTurns: 4}
    - id: llm_judge
      evaluator: {type: llm_judge, criterion: The agent identified the customer first., rubric: Be strict.}
"""


class InstantChatClient:
    """Answers every judge request at once with a pass: what is left is dialogcheck's own llm_judge work
    (transcript, event ledger, prompt, answer validation)."""

    async def complete(self, request):
        from dialogcheck.llm.base import ChatResponse

        return ChatResponse('{"verdict": "PASS", "rationale": "ok"}', request.model)


#: The in-run baseline of the linear benchmark: what touching every event once costs at each size.
SCAN = "baseline: one pass over the events"


def scan_events(conversation) -> int:
    """Reads what every check reads at least: each event's type and turn, and each message's text."""
    total = 0
    for event in conversation.events:
        total += event.turn or 0
        if event.type in ("bot", "user"):
            total += len(event.text)
    return total


def bench_linear(args: argparse.Namespace) -> dict[str, Any]:
    from dialogcheck.checks import ASSERTIONS
    from dialogcheck.config import LLMSettings
    from dialogcheck.judge.chat_judge import ChatJudge
    from dialogcheck.scenario.model import Goals
    from dialogcheck.sop.model import StepSet

    small, large = args.events, args.events * 10
    OUT.mkdir(parents=True, exist_ok=True)
    worst_path, worst_sop_path = OUT / "linear_worst_scenario.yml", OUT / "linear_worst_sop.yml"
    worst_path.write_text(WORST_SCENARIO, encoding="utf-8")
    worst_sop_path.write_text(WORST_SOP, encoding="utf-8")
    scenarios = {"fixture": dialogcheck.load_scenario(SCENARIO), "worst": dialogcheck.load_scenario(worst_path)}
    sops = {"fixture": dialogcheck.load_sop(SOP), "worst": dialogcheck.load_sop(worst_sop_path)}
    judge = ChatJudge(InstantChatClient(), LLMSettings(provider="openai", model="instant"))
    # Past `max_prompt_chars` (1M characters by default; both sizes here pass it) the judge stops rendering
    # and errs, so its cost is bounded; a judge without the limit shows that the rendering itself is linear.
    unlimited = ChatJudge(InstantChatClient(), LLMSettings(provider="openai", model="instant", max_prompt_chars=10**12))
    log(f"linear: one conversation of {small:,} and {large:,} events…")
    events = synth.Generator(args.seed).long_events(large)
    convs = {size: warm(dialogcheck.load_conversation(events[:size])) for size in (small, large)}
    del events
    gc.collect()
    gc.freeze()  # long-lived conversations: keep collections short between samples

    families: list[tuple[str, str, Any]] = []  # (family, form, run(conversation))
    for key in ASSERTIONS:
        for form, scenario in scenarios.items():
            checks = tuple(c for c in scenario.goals.assertions if c.key == key)
            one = dataclasses.replace(scenario, goals=Goals(assertions=checks))
            families.append((key, form, lambda c, s=one: dialogcheck.evaluate(s, c)))
    sop_types = []
    for form, sop in sops.items():
        for step in sop.steps.steps:
            one = StepSet((step,))
            if step.type not in sop_types:
                sop_types.append(step.type)
            if step.type == "llm_judge":
                only = dataclasses.replace(sop, steps=one)
                run = lambda c, s=only: dialogcheck.evaluate_sop(s, c, judge=judge)  # noqa: E731
                if form == "fixture":
                    families.append((step.type, "no prompt limit",
                                     lambda c, s=only: dialogcheck.evaluate_sop(s, c, judge=unlimited)))
            else:
                run = lambda c, s=one: s.evaluate(c, None, True)  # noqa: E731
            families.append((step.type, f"{form}:{step.id}" if form == "worst" else form, run))
    families.append((SCAN, "every event's type and turn, every message's text", scan_events))
    families.append(("whole scenario (20 assertions)", "fixture", lambda c, s=scenarios["fixture"]: dialogcheck.evaluate(s, c)))
    families.append(("whole SOP (7 steps, judge skipped)", "fixture",
                     lambda c, s=sops["fixture"]: dialogcheck.evaluate_sop(s, c, no_judge=True)))

    # One call per sample, each after a 128 MB read that evicts the CPU caches, so the small
    # conversation gets no advantage from staying cached between calls; samples taken in turn.
    times: dict[str, float] = {}
    for _ in range(args.linear_repeats):
        for family, form, run in families:
            for size, conv in convs.items():
                flush_caches()
                start = time.perf_counter()
                run(conv)
                key = f"{family}/{form}|{size}"
                times[key] = min(times.get(key, float("inf")), time.perf_counter() - start)
    gc.unfreeze()

    rows, worst_by_family, results = [], {}, []
    scan_form = next(form for family, form, _ in families if family == SCAN)
    scan_ratio = times[f"{SCAN}/{scan_form}|{large}"] / times[f"{SCAN}/{scan_form}|{small}"]
    for family, form, _ in families:
        a, b = times[f"{family}/{form}|{small}"], times[f"{family}/{form}|{large}"]
        ratio = b / a
        results.append({"family": family, "form": form, "seconds_small": a, "seconds_large": b, "ratio": round(ratio, 3),
                        "ratio_over_scan": round(ratio / scan_ratio, 3)})
        if family != SCAN:
            worst_by_family[family] = max(worst_by_family.get(family, 0.0), ratio)
        rows.append([family, form, f"{a * 1e3:.3f}", f"{b * 1e3:.3f}", f"{ratio:.2f}", f"{ratio / scan_ratio:.2f}",
                     "" if family == SCAN else "met" if ratio <= TARGETS["linear"] else "MISSED"])
    met = all(r <= TARGETS["linear"] for r in worst_by_family.values())
    print(f"\n## linear: {small:,} and {large:,} events, each check alone, index prebuilt, caches evicted "
          f"(best of {args.linear_repeats})\n")
    print(table(["family", "form", f"ms @{small // 1000}k", f"ms @{large // 1000}k", "ratio", "ratio / scan's",
                 f"<= {TARGETS['linear']:g}"], rows))
    highest = max(worst_by_family, key=worst_by_family.get)
    print(f"\nhighest ratio {worst_by_family[highest]:.2f} ({highest}); every family within {TARGETS['linear']:g}x: {met}; "
          f"one pass over the same events: {scan_ratio:.2f}x")
    return save("linear", {
        "events": [small, large], "seed": args.seed, "repeats": args.linear_repeats, "results": results,
        "families": {"assertions": list(ASSERTIONS), "sop": sop_types},
        "max_ratio_by_family": {k: round(v, 3) for k, v in worst_by_family.items()},
        "max_ratio": round(worst_by_family[highest], 3), "max_family": highest, "scan_ratio": round(scan_ratio, 3),
        "target": TARGETS["linear"], "met": met,
    })


# --------------------------------------------------------------------------- memory

PEAK_RSS = """\
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
seconds = time.perf_counter() - start
if done.returncode not in (0, 1) or b"Traceback" in done.stderr:  # exit 1 is also what a crash gives
    sys.exit(done.stderr.decode()[-2000:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, seconds)
"""


def peak_rss(argv: list[str]) -> tuple[int, float]:
    """Peak RSS in KiB of the command (run from a fresh process, so no other child counts), and its seconds."""
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"memory run failed: {done.stderr[-2000:]}")
    kib, seconds = done.stdout.split()
    return int(kib), float(seconds)


def bench_memory(args: argparse.Namespace) -> dict[str, Any]:
    sizes = (args.memory_small, args.memory_large)
    found = {}
    for n in sizes:
        path, stats = dataset(n, args.seed, short=True)
        jobs = ["--jobs", "1"] if has_option("--jobs") else []  # one process: RUSAGE_CHILDREN is a maximum, not a sum
        argv = cli_command() + ["check", *jobs, "--stream", "--scenario", str(SCENARIO), "--format", "json", "--no-judge", str(path)]
        kib, seconds = peak_rss(argv)
        found[n] = {"data": stats, "peak_rss_kib": kib, "seconds": round(seconds, 2)}
        log(f"  {n:,} conversations: peak RSS {kib / 1024:,.1f} MiB in {seconds:.1f}s")
        if n == sizes[-1] and not args.keep_data:
            path.unlink()
            path.with_suffix(".meta.json").unlink()
    ratio = found[sizes[1]]["peak_rss_kib"] / found[sizes[0]]["peak_rss_kib"]
    rows = [[f"{n:,}", f"{f['data']['events']:,}", f"{f['data']['bytes'] / 1e6:,.0f}", f"{f['peak_rss_kib'] / 1024:,.1f}",
             f"{f['seconds']:.1f}"] for n, f in found.items()]
    print("\n## memory: dialogcheck check --jobs 1 --stream --scenario, small conversations (synth.py --short)\n")
    print(table(["conversations", "events", "MB", "peak RSS MiB", "seconds"], rows))
    print(f"\nratio {ratio:.3f} (target <= {TARGETS['memory']}): {'met' if ratio <= TARGETS['memory'] else 'MISSED'}")
    return save("memory", {"runs": {str(n): f for n, f in found.items()}, "short_conversations": True,
                           "command": "dialogcheck check --jobs 1 --stream --scenario ... --format json --no-judge > /dev/null",
                           "ratio": round(ratio, 3), "target": TARGETS["memory"], "met": ratio <= TARGETS["memory"]})


# --------------------------------------------------------------------------- jobs and ray


def bench_jobs(args: argparse.Namespace) -> dict[str, Any]:
    """`--jobs 1` against `--jobs 2`, output as one JSON document on stdout (to a file) and, when the
    CLI has it, as result shards in an `--output` folder (the main process then prints only the summary)."""
    if not has_option("--jobs"):
        return not_available("jobs", "`dialogcheck check` has no --jobs option yet")
    path, stats = dataset(args.conversations, args.seed)
    base = ["check", "--scenario", str(SCENARIO), "--format", "json", "--no-judge", str(path)]
    outputs = ["stdout"] + (["--output"] if has_option("--output") else [])
    seconds: dict[str, float] = {}
    found: dict[str, list] = {}
    for _ in range(args.cli_repeats):  # in turn, so drift hits both alike
        for output in outputs:
            for jobs in (1, 2):
                key = f"--jobs {jobs}, {output}"
                if output == "stdout":
                    out = OUT / f"jobs_{jobs}.json"
                    took = timed_cli([*base[:1], "--jobs", str(jobs), *base[1:]], stdout=out)
                    found[key] = verdicts(out)
                    out.unlink()
                else:
                    folder = OUT / f"jobs_{jobs}_output"
                    shutil.rmtree(folder, ignore_errors=True)
                    took = timed_cli([*base[:1], "--jobs", str(jobs), "--output", str(folder), *base[1:]])
                    found[key] = shard_verdicts(folder)
                    shutil.rmtree(folder)
                seconds[key] = min(seconds.get(key, float("inf")), took)
                log(f"  {key}: {took:.2f}s")
    speedups = {output: seconds[f"--jobs 1, {output}"] / seconds[f"--jobs 2, {output}"] for output in outputs}
    same = all(dict(v) == dict(found["--jobs 1, stdout"]) for v in found.values())
    speedup = speedups["stdout"]
    print(f"\n## jobs: {stats['conversations']:,} conversations, --scenario, best of {args.cli_repeats}\n")
    print(table(["output", "--jobs 1 s", "--jobs 2 s", "speedup"],
                [[o, f"{seconds[f'--jobs 1, {o}']:.2f}", f"{seconds[f'--jobs 2, {o}']:.2f}", f"{speedups[o]:.2f}x"]
                 for o in outputs]))
    print(f"\nJSON on stdout: {speedup:.2f}x faster (target >= {TARGETS['jobs']}); same verdicts everywhere: {same}")
    return save("jobs", {"data": stats, "seconds": {k: round(v, 3) for k, v in seconds.items()},
                         "speedups": {k: round(v, 3) for k, v in speedups.items()}, "speedup": round(speedup, 3),
                         "same_verdicts": same, "nproc": os.cpu_count(), "target": TARGETS["jobs"],
                         "met": speedup >= TARGETS["jobs"] and same})


def bench_ray(args: argparse.Namespace) -> dict[str, Any]:
    if not has_option("--engine"):
        return not_available("ray", "`dialogcheck check` has no --engine option yet")
    probe = subprocess.run([sys.executable, "-c", "import ray"], capture_output=True, check=False)
    if probe.returncode != 0:
        return not_available("ray", "ray is not installed (pip install 'dialogcheck[ray]')")
    path, stats = dataset(args.conversations, args.seed)
    seconds, found = {}, {}
    for engine in ("local", "ray"):  # --engine ray writes result shards to --output; local does the same with it
        folder = OUT / f"engine_{engine}"
        shutil.rmtree(folder, ignore_errors=True)
        seconds[engine] = timed_cli(["check", "--engine", engine, "--output", str(folder), "--scenario", str(SCENARIO),
                                     "--format", "json", "--no-judge", str(path)])
        found[engine] = shard_verdicts(folder)
        shutil.rmtree(folder)
        log(f"  --engine {engine}: {seconds[engine]:.2f}s")
    local, ray = dict(found["local"]), dict(found["ray"])
    differ = sum(local.get(source) != verdict for source, verdict in ray.items()) + len(local.keys() - ray.keys())
    examples = [f"{source}: local {local.get(source)}, ray {verdict}" for source, verdict in ray.items()
                if local.get(source) != verdict][:5]
    print(f"\n## ray: {stats['conversations']:,} conversations: local {seconds['local']:.2f}s, ray {seconds['ray']:.2f}s; "
          f"verdicts that differ: {differ}")
    return save("ray", {"data": stats, "seconds": seconds, "conversations_compared": len(local),
                        "same_order": found["local"] == found["ray"], "examples": examples,
                        "passed": {engine: sum(v == "pass" for _, v in found[engine]) for engine in found},
                        "verdicts_differ": differ, "met": differ == 0})


def bench_agentevals(args: argparse.Namespace) -> dict[str, Any]:
    import agentevals_compare

    result = agentevals_compare.compare(args.trajectories, args.seed, args.repeats, args.python, OUT)
    ours, theirs = result["dialogcheck"], result["agentevals"]
    print(f"\n## agentevals: {result['conversations']:,} tool-call trajectories, strict match against one reference per group\n")
    print(table(["side", "seconds", "conversations/s", "matches"],
                [["dialogcheck (tool_sequence contiguous + tool_executed times)", f"{ours['seconds']:.2f}",
                  f"{ours['conversations_per_second']:,.0f}", f"{ours['matches']:,}"],
                 [f"agentevals {theirs['versions']['agentevals']} trajectory match, strict", f"{theirs['seconds']:.2f}",
                  f"{theirs['conversations_per_second']:,.0f}", f"{theirs['matches']:,}"]]))
    print(f"\ndialogcheck / agentevals: {result['ratio_dialogcheck_over_agentevals']:.2f}x the conversations per second; "
          f"they agree on {result['agree']:,} of {result['conversations']:,}")
    return save("agentevals", {**result, "met": result["disagree"] == 0})


# --------------------------------------------------------------------------- main

BENCHMARKS = {"check": bench_check, "linear": bench_linear, "memory": bench_memory, "jobs": bench_jobs,
              "ray": bench_ray, "agentevals": bench_agentevals}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmarks", nargs="+", choices=[*BENCHMARKS, "all"], help="which to run")
    parser.add_argument("--quick", action="store_true", help="small sizes: 5k conversations, 2k/20k events, 2k/50k for memory")
    parser.add_argument("--conversations", type=int, help="conversations for check, jobs and ray (default 100000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="decoder and agentevals samples; the best is kept (default 3)")
    parser.add_argument("--cli-repeats", type=int, default=1, help="samples of each dialogcheck command (default 1)")
    parser.add_argument("--events", type=int, help="E of the linear benchmark (default 20000, so 200000 for 10E)")
    parser.add_argument("--linear-repeats", type=int, default=9, help="samples of each linear measurement (default 9)")
    parser.add_argument("--memory-small", type=int, help="conversations of the small memory run (default 10000)")
    parser.add_argument("--memory-large", type=int, help="conversations of the large memory run (default 1000000)")
    parser.add_argument("--trajectories", type=int, help="trajectories of the agentevals comparison (default 100000)")
    parser.add_argument("--python", type=Path, help="python with agentevals (default: benchmarks/.venv-agentevals, made if missing)")
    parser.add_argument("--keep-data", action="store_true", help="keep the 1M-conversation memory file")
    args = parser.parse_args(argv)
    quick = args.quick
    args.conversations = args.conversations or (5_000 if quick else 100_000)
    args.events = args.events or (2_000 if quick else 20_000)
    args.memory_small = args.memory_small or (2_000 if quick else 10_000)
    args.memory_large = args.memory_large or (50_000 if quick else 1_000_000)
    args.trajectories = args.trajectories or (5_000 if quick else 100_000)
    names = list(BENCHMARKS) if "all" in args.benchmarks else list(dict.fromkeys(args.benchmarks))
    OUT.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name in names:
        log(f"== {name}")
        summary[name] = BENCHMARKS[name](args).get("met")
    print("\n" + ", ".join(f"{name}: {'not available' if met is None else ('met' if met else 'MISSED')}"
                           for name, met in summary.items()))
    return 0 if all(met is not False for met in summary.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
