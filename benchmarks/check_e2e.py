"""`dialogcheck check` end to end on two (or more) versions of the code: the ratio new / base, with its spread.

The figure the redesign of issue 15 is held to ("check end to end is no slower
than before"). Four commands, each a fresh process, on generated conversations
like users' logs (`synth.py`, most of them failing the scenario):

    dialogcheck check --jobs 1 --no-judge --format json --scenario fixtures/scale_scenario.yml DATA
    dialogcheck check --jobs 1 --no-judge --format text --scenario fixtures/scale_scenario.yml DATA
    dialogcheck check --jobs 1 --no-judge --format json --sop fixtures/scale_sop.yml DATA
    dialogcheck check --jobs 1 --no-judge --format text --sop fixtures/scale_sop.yml DATA

stdout goes to a file (the text output is the plain, piped form). Each side is
`NAME=WHERE`, the first one the baseline; WHERE is

* a commit of this repository: archived to `benchmarks/out/check_e2e/trees/SHA/`
  and run with this script's python, its `src/` first on `PYTHONPATH`;
* a folder holding a checkout (`src/` and `pyproject.toml`): the same, without archiving;
* a python executable with dialogcheck installed: the `dialogcheck` script beside it.

Every round runs every command on every side, the sides in a rotating order,
so a busy moment of a shared machine falls on all of them alike; the ratio of
a round is the side's time over the baseline's in the same round. Reported per
command and side: the median ratio, its quartiles and its range over the
rounds, for CPU time (user + system of the process: what contention on a
shared machine disturbs least) and wall time, and whether stdout held the same
bytes as the baseline's, and for the JSON commands whether it held the same
results: the same conversations and the same four counts of the summary (a
version may add to the summary, as issue 16 added each check's statistics).
The last line is the geometric mean of the four median CPU ratios.

Run: .venv/bin/python benchmarks/check_e2e.py                                # base=feb73f5 against this checkout
     .venv/bin/python benchmarks/check_e2e.py --side base=feb73f5 --side new=/path/to/checkout --rounds 15
     .venv/bin/python benchmarks/check_e2e.py --side a=feb73f5 --side b=feb73f5   # the noise floor (A/A)
Writes `benchmarks/out/check_e2e.json`. Exit code 1 when a side's output differs from the baseline's.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, ROOT, SCENARIO, SOP, dataset, environ, git_revision, log, save, spread, table

#: The commit the redesign of issue 15 started from.
BASE_COMMIT = "feb73f5"
WORK = OUT / "check_e2e"

COMMANDS = {
    "scenario, json": ["--scenario", str(SCENARIO), "--format", "json"],
    "scenario, text": ["--scenario", str(SCENARIO), "--format", "text"],
    "sop, json": ["--sop", str(SOP), "--format", "json"],
    "sop, text": ["--sop", str(SOP), "--format", "text"],
}


@dataclass
class Side:
    name: str
    where: str
    command: list[str]
    env: dict[str, str]
    commit: str
    #: Per command: CPU and wall seconds of each round, the sha256 of stdout.
    cpu: dict[str, list[float]] = field(default_factory=dict)
    wall: dict[str, list[float]] = field(default_factory=dict)
    output: dict[str, str] = field(default_factory=dict)
    instructions: dict[str, int] = field(default_factory=dict)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _launcher(tree: Path) -> str:
    """Python code that runs the tree's `dialogcheck` console script (as its pyproject.toml names it)."""
    target = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["dialogcheck"]
    module, function = target.split(":")
    return f"import sys; from {module} import {function}; sys.exit({function}())"


def _tree_side(name: str, where: str, tree: Path, commit: str) -> Side:
    env = environ(PYTHONPATH=str(tree / "src"))
    # Bytecode written now, not by the first command counted: a fresh archive would otherwise count compiling
    # every module it imports into its first run (hundreds of millions of instructions).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "src")], env=env, check=True, stdout=subprocess.DEVNULL)
    found = subprocess.run([sys.executable, "-c", "import dialogcheck; print(dialogcheck.__file__)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    if not Path(found).resolve().is_relative_to((tree / "src").resolve()):
        raise SystemExit(f"{name}: dialogcheck imports from {found}, not from {tree / 'src'}")
    return Side(name, where, [sys.executable, "-c", _launcher(tree)], env, commit)


def resolve(spec: str) -> Side:
    """`NAME=WHERE` as a side: a python executable, a checkout folder, or a commit (archived once)."""
    name, sep, where = spec.partition("=")
    if not sep or not name or not where:
        raise SystemExit(f"--side {spec!r}: expected NAME=WHERE (a commit, a checkout folder or a python executable)")
    path = Path(where).expanduser()
    if path.is_file() and os.access(path, os.X_OK):
        script = path.with_name("dialogcheck")
        if not script.exists():
            raise SystemExit(f"--side {spec!r}: no dialogcheck script beside {path}")
        version = subprocess.run([str(path), "-c", "import dialogcheck; print(dialogcheck.__file__)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        return Side(name, where, [str(script)], environ(), f"installed at {version}")
    if path.is_dir():
        if not (path / "pyproject.toml").exists():
            raise SystemExit(f"--side {spec!r}: {path} holds no pyproject.toml")
        return _tree_side(name, where, path.resolve(), git_revision(path) if (path / ".git").exists() else "a folder")
    try:
        sha = _git("rev-parse", "--verify", f"{where}^{{commit}}")
    except subprocess.CalledProcessError:
        raise SystemExit(f"--side {spec!r}: {where} is no python executable, folder or commit of {ROOT}") from None
    tree = WORK / "trees" / sha
    if not (tree / "pyproject.toml").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return _tree_side(name, where, tree, sha[:7])


def check_argv(side: Side, label: str, data: Path) -> list[str]:
    return [*side.command, "check", "--jobs", "1", "--no-judge", *COMMANDS[label], str(data)]


def run_once(side: Side, label: str, data: Path) -> tuple[float, float, str]:
    """CPU and wall seconds of one command, and the sha256 of what it wrote on stdout."""
    argv = check_argv(side, label, data)
    stdout, stderr = WORK / f"stdout.{side.name}", WORK / f"stderr.{side.name}"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=side.env, cwd=WORK)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1) or b"Traceback" in stderr.read_bytes():  # exit 1: some conversation failed
        raise SystemExit(f"{side.name}: `{shlex.join(argv)}` exited {process.returncode}:\n{stderr.read_text()[-2000:]}")
    digest = subprocess.run(["sha256sum", str(stdout)], capture_output=True, text=True, check=True).stdout.split()[0]
    return usage.ru_utime + usage.ru_stime, wall, digest


def instructions(side: Side, label: str, data: Path) -> int:
    """Instructions one command executes, counted by valgrind (cachegrind without its cache simulation).

    Exact and the same from run to run (hash seed fixed), whatever else the machine runs, where CPU time moves
    by 10% between two runs of the same code on a shared machine; about 20 times slower than the command.
    """
    argv = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *check_argv(side, label, data)]
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          env={**side.env, "PYTHONHASHSEED": "0"}, cwd=WORK, check=False)
    found = re.search(rb"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode not in (0, 1) or found is None:
        raise SystemExit(f"{side.name}: valgrind on `{label}` exited {done.returncode}:\n{done.stderr.decode()[-2000:]}")
    return int(found[1].replace(b",", b""))


def kept_output(side: Side, label: str) -> Path:
    """Where the stdout of the side's untimed run of a command is kept, for `same_results`."""
    return WORK / f"kept.{side.name}.{label.replace(', ', '.')}"


def same_results(side: Side, base: Side, label: str) -> bool | None:
    """For a JSON command: whether both printed the same conversations and the same four counts of the summary
    (a version may add to the summary: issue 16 added each check's statistics); None for the text commands."""
    if not label.endswith("json"):
        return None
    mine, theirs = (orjson.loads(kept_output(s, label).read_bytes()) for s in (side, base))
    if "conversations" not in theirs:  # one conversation: its document
        return mine == theirs
    counts = ("conversations", "passed", "failed", "errored")
    return mine["conversations"] == theirs["conversations"] and all(mine["summary"][k] == theirs["summary"][k] for k in counts)


def measure(sides: list[Side], data: Path, rounds: int) -> None:
    for side in sides:  # untimed: fills the OS file cache and writes each tree's bytecode
        for label in COMMANDS:
            side.output[label] = run_once(side, label, data)[2]
            shutil.copyfile(WORK / f"stdout.{side.name}", kept_output(side, label))
    for round_no in range(rounds):
        for label in COMMANDS:
            shift = round_no % len(sides)
            for side in sides[shift:] + sides[:shift]:
                cpu, wall, digest = run_once(side, label, data)
                if digest != side.output[label]:
                    raise SystemExit(f"{side.name}: `{label}` printed other bytes in round {round_no + 1}: not deterministic")
                side.cpu.setdefault(label, []).append(cpu)
                side.wall.setdefault(label, []).append(wall)
        log(f"round {round_no + 1}/{rounds}: " + "; ".join(
            f"{s.name} {sum(s.cpu[label][-1] for label in COMMANDS):.2f} s CPU" for s in sides))


def geomean(values: list[float]) -> float:
    return round(math.prod(values) ** (1 / len(values)), 4)


def time_figures(side: Side, base: Side) -> dict:
    """Per command: the medians of the side's rounds, and (against the baseline) the ratios of the rounds."""
    found = {}
    for label in COMMANDS:
        entry = {"cpu_median_s": round(statistics.median(side.cpu[label]), 3),
                 "wall_median_s": round(statistics.median(side.wall[label]), 3),
                 "cpu_s": [round(x, 4) for x in side.cpu[label]], "wall_s": [round(x, 4) for x in side.wall[label]]}
        if side is not base:
            entry["cpu_ratio"] = spread([a / b for a, b in zip(side.cpu[label], base.cpu[label])])
            entry["wall_ratio"] = spread([a / b for a, b in zip(side.wall[label], base.wall[label])])
        found[label] = entry
    return found


def time_rows(side: Side, figures: dict) -> list[list[str]]:
    rows = []
    for label, entry in figures.items():
        cpu, wall = entry.get("cpu_ratio"), entry.get("wall_ratio")
        rows.append([
            f"{side.name}: {label}", f"{entry['cpu_median_s']:.3f}", f"{entry['wall_median_s']:.3f}",
            "-" if cpu is None else f"{cpu['median']:.3f} ({cpu['q1']:.3f}-{cpu['q3']:.3f}; {cpu['min']:.3f}-{cpu['max']:.3f})",
            "-" if wall is None else f"{wall['median']:.3f} ({wall['q1']:.3f}-{wall['q3']:.3f})",
        ])
    return rows


def report(sides: list[Side], stats: dict[str, int], rounds: int) -> dict:
    base = sides[0]
    figures: dict = {}
    time_table, count_table = [], []
    for side in sides:
        entry: dict = {"where": side.where, "commit": side.commit,
                       "same_output_as_base": {label: side.output[label] == base.output[label] for label in COMMANDS},
                       "same_results_as_base": {label: same_results(side, base, label) for label in COMMANDS}}
        if rounds:
            entry["time"] = time_figures(side, base)
            time_table += time_rows(side, entry["time"])
            if side is not base:
                entry["cpu_ratio_geomean"] = geomean([entry["time"][label]["cpu_ratio"]["median"] for label in COMMANDS])
        if side.instructions:
            entry["instructions"] = dict(side.instructions)
            if side is not base:
                ratios = {label: side.instructions[label] / base.instructions[label] for label in COMMANDS}
                entry["instruction_ratio"] = {label: round(r, 4) for label, r in ratios.items()}
                entry["instruction_ratio_geomean"] = geomean(list(ratios.values()))
            count_table += [[f"{side.name}: {label}", f"{side.instructions[label]:,}",
                             "-" if side is base else f"{side.instructions[label] / base.instructions[label]:.4f}",
                             "yes" if side.output[label] == base.output[label] else "NO",
                             {None: "-", True: "yes", False: "NO"}[entry["same_results_as_base"][label]]] for label in COMMANDS]
        figures[side.name] = entry
    print(f"\n## check end to end: {stats['conversations']:,} conversations, {stats['events']:,} events, "
          f"{stats['bytes'] / 1e6:.0f} MB; baseline {base.name} ({base.commit})\n")
    if time_table:
        print(f"{rounds} rounds\n")
        print(table(["side: command", "CPU s (median)", "wall s (median)", f"CPU / {base.name} (quartiles; range)",
                     f"wall / {base.name} (quartiles)"], time_table))
        print()
    if count_table:
        print(table(["side: command", "instructions", f"/ {base.name}", "same stdout", "same results (JSON)"], count_table))
        print()
    for side in sides[1:]:
        entry = figures[side.name]
        parts = [f"CPU time {entry['cpu_ratio_geomean']:.3f}" if "cpu_ratio_geomean" in entry else "",
                 f"instructions {entry['instruction_ratio_geomean']:.4f}" if "instruction_ratio_geomean" in entry else ""]
        same = all(entry["same_output_as_base"].values())
        results = "" if same else "; JSON results " + ("the same" if all(v is not False for v in entry["same_results_as_base"].values()) else "DIFFER")
        print(f"{side.name} ({side.commit}) / {base.name} ({base.commit}), geometric mean over the four commands: "
              + ", ".join(p for p in parts if p) + ("" if same else "; OUTPUT DIFFERS") + results)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--side", action="append", metavar="NAME=WHERE",
                        help=f"a version to run: a commit, a checkout folder or a python executable; the first is the "
                             f"baseline (default: base={BASE_COMMIT} new={ROOT})")
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds (default 10; 0 with --instructions: none)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions once per side under valgrind (exact, slow)")
    parser.add_argument("--conversations", type=int, default=5000, help="generated conversations (default 5000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    args = parser.parse_args(argv)
    if args.rounds < (0 if args.instructions else 1):
        parser.error("--rounds must be at least 1 (or 0 with --instructions)")
    specs = args.side or [f"base={BASE_COMMIT}", f"new={ROOT}"]
    if len(specs) < 2 or len({s.partition('=')[0] for s in specs}) != len(specs):
        parser.error("give at least two --side, each with its own NAME")
    WORK.mkdir(parents=True, exist_ok=True)
    sides = [resolve(spec) for spec in specs]
    data, stats = dataset(args.conversations, args.seed)
    for side in sides:
        log(f"{side.name}: {side.where} ({side.commit})")
    measure(sides, data, args.rounds)
    if args.instructions:
        for side in sides:
            for label in COMMANDS:
                side.instructions[label] = instructions(side, label, data)
            log(f"{side.name}: {sum(side.instructions.values()):,} instructions")
    figures = report(sides, stats, args.rounds)
    save("check_e2e", {"data": {**stats, "seed": args.seed}, "rounds": args.rounds, "instructions": args.instructions,
                       "commands": {label: "dialogcheck check --jobs 1 --no-judge " + " ".join(a.replace(str(ROOT) + "/", "") for a in args_)
                                    + " DATA" for label, args_ in COMMANDS.items()},
                       "sides": figures})
    different = [f"{s.name}: {label}" for s in sides for label in COMMANDS if s.output[label] != sides[0].output[label]]
    if different:
        log("stdout differs from the baseline's: " + ", ".join(different))
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
