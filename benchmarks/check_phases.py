"""Where `dialogcheck check --format json` spends its instructions, phase by phase, on one or more versions of the code.

`check_e2e.py` says whether a version is slower end to end; this says where.
Each phase is counted by valgrind (cachegrind without its cache simulation,
hash seed fixed: exact, unmoved by the machine's load) as the difference
between two runs of the same small program that stop one phase apart:

* start-up: starting Python, importing what reads, judges and encodes, and
  loading the scenario or SOP;
* decoding: reading the file into typed conversations (`iter_conversation_file`);
* judging: every check of every conversation (`iter_results`, no judge);
* encoding: each result as the JSON line `check --format json` prints of it;
* statistics: the per-check statistics of the batch (versions that count them);
* the rest: the whole command (`check --jobs 1 --no-judge --format json`)
  minus all of the above: the engine, the writer, the tally, the options.

Beside them, the baseline of issue 16's throughput target: decoding every
line of the same file with `msgspec.json.decode` and with `orjson.loads`,
the decoder's import taken off. Sides are given as in `check_e2e.py`
(`NAME=WHERE`: a commit, a checkout folder); the library's names of each
version are looked up, so a commit before the redesign of issue 15 runs too.

Run: .venv/bin/python benchmarks/check_phases.py                               # base=feb73f5 and this checkout, 1000 conversations
     .venv/bin/python benchmarks/check_phases.py --side new=. --profile failing --conversations 2000 --subject sop
Writes `benchmarks/out/check_phases.json`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_e2e
from common import ROOT, SCENARIO, SOP, environ, log, save, table
from scale import DECODE, instructions, profile_dataset

#: The program each phase count runs: it stops after phase `UPTO` (0: start-up only).
PROGRAM = """
import sys
data, subject_path, upto = sys.argv[1], sys.argv[2], int(sys.argv[3])
from dialogcheck.events.load import iter_conversation_file
try:
    from dialogcheck.judging import iter_results
    from dialogcheck.results.codec import conversation_line as encode
except ImportError:  # before the redesign of issue 15
    from dialogcheck.batch import iter_results
    from dialogcheck.report.json import conversation_json as encode
try:
    from dialogcheck.results.stats import CheckStats
except ImportError:  # before issue 16's per-check statistics
    CheckStats = None
from dialogcheck.scenario.load import load_scenario
from dialogcheck.sop.load import load_sop
subject = load_sop(subject_path) if subject_path.endswith("sop.yml") else load_scenario(subject_path)
if upto >= 1:
    conversations = list(iter_conversation_file(data))
if upto >= 2:
    results = list(iter_results(subject, conversations, no_judge=True))
if upto >= 3:
    encoded = [encode(result) for result in results]
if upto >= 4 and CheckStats is not None:
    stats = CheckStats()
    for result in results:
        stats.add(result, result.source)
"""
PHASES = ("start-up", "decoding", "judging", "encoding", "statistics")
def phases(side: check_e2e.Side, data: Path, subject: Path) -> dict[str, int]:
    """Instructions of each phase, and of the whole command, for one side."""
    python = side.command[0]
    totals = [instructions([python, "-c", PROGRAM, str(data), str(subject), str(upto)], side.env) for upto in range(len(PHASES))]
    found = {PHASES[0]: totals[0], **{PHASES[i]: totals[i] - totals[i - 1] for i in range(1, len(PHASES))}}
    option = "--sop" if subject == SOP else "--scenario"
    whole = instructions([*side.command, "check", "--jobs", "1", "--no-judge", "--format", "json", option, str(subject), str(data)], side.env)
    found["the rest"] = whole - totals[-1]
    found["the whole command"] = whole
    return found


def baseline(data: Path) -> dict[str, int]:
    """Issue 16's baseline: decoding every line of the file with `msgspec.json.decode` and with `orjson.loads`,
    the decoder's import taken off (`scale.py`'s program)."""
    env = environ()
    return {name: instructions([sys.executable, "-c", DECODE, name, str(data)], env) - instructions([sys.executable, "-c", DECODE, name, "-"], env)
            for name in ("msgspec", "orjson")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--side", action="append", metavar="NAME=WHERE", help=f"as check_e2e.py (default: base={check_e2e.BASE_COMMIT} new={ROOT})")
    parser.add_argument("--conversations", type=int, default=1000, help="generated conversations (default 1000)")
    parser.add_argument("--profile", default="tau", help="synth.py's profile of the data (default tau: check_e2e.py's data)")
    parser.add_argument("--subject", choices=("scenario", "sop"), default="scenario", help="the fixtures' scenario or SOP")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    check_e2e.WORK.mkdir(parents=True, exist_ok=True)
    sides = [check_e2e.resolve(spec) for spec in (args.side or [f"base={check_e2e.BASE_COMMIT}", f"new={ROOT}"])]
    data, stats = profile_dataset(args.conversations, args.seed, args.profile)
    subject = SOP if args.subject == "sop" else SCENARIO
    found = {}
    for side in sides:
        log(f"{side.name}: {side.where} ({side.commit})")
        found[side.name] = phases(side, data, subject)
    decoders = baseline(data)
    fastest = min(decoders.values())
    names = list(found[sides[0].name])
    last = sides[-1]
    rows = [[name, *(f"{found[s.name][name] / 1e6:,.0f}" for s in sides), f"{found[last.name][name] / fastest:.2f}x"] for name in names]
    after_start_up = found[last.name]["the whole command"] - found[last.name]["start-up"]
    rows.append(["the whole command, start-up taken off", *(f"{(found[s.name]['the whole command'] - found[s.name]['start-up']) / 1e6:,.0f}" for s in sides),
                 f"{after_start_up / fastest:.2f}x"])
    print(f"\n## check --format json, {args.subject}, phase by phase: {stats['conversations']:,} conversations ({args.profile}), "
          f"{stats['events']:,} events, {stats['bytes'] / 1e6:.0f} MB\n")
    headers = ["phase", *(f"{s.name} ({s.commit}), M instructions" for s in sides), f"{last.name} over the faster decoder"]
    print(table(headers, rows))
    spelled = {"msgspec": "msgspec.json.decode", "orjson": "orjson.loads"}
    print("\n" + ", ".join(f"{spelled[name]} of every line: {n / 1e6:,.0f} M instructions" for name, n in decoders.items()))
    save("check_phases", {"data": {**stats, "profile": args.profile, "seed": args.seed}, "subject": args.subject,
                          "sides": {s.name: {"where": s.where, "commit": s.commit, "instructions": found[s.name]} for s in sides},
                          "decoders": decoders})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
