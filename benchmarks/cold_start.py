"""Cold start of the dialogcheck CLI against starting Python and importing json.

Measures the wall time of fresh processes, best of N, every command sampled
in turn in each round so a busy machine slows them alike:

* baseline: `python -c "import json"` with the same venv's python (it pays
  the same interpreter start, `site` and `.pth` files as the CLI);
* `dialogcheck --help`, `dialogcheck validate examples/card_replace` and
  `dialogcheck check --help`, through the venv's `dialogcheck` console script
  (so the wrapper's own cost is included);
* for reference, importing click and ruamel.yaml alone (the floor: validate
  cannot run without its command-line framework and its YAML parser), then
  importing only the third-party libraries validate imports
  on this project (found by running it once: click, ruamel.yaml, orjson,
  regex for its patterns, ...), then every module validate imports, in the
  same order, without doing any work. The differences split validate's time
  into interpreter, libraries, dialogcheck's own modules, and the work itself
  (reading and checking the files).

The commands run with bytecode written and used (`PYTHONDONTWRITEBYTECODE`
unset), as an installed package has its `.pyc` files.

Target (issue 8): validate at most 3x the baseline. Exit code 1 when missed.
`--json` prints one JSON document on stdout (`{"rows": [...]}`) instead of
the table; `benchmarks/out/cold_start.json` is written either way.
`--importtime` adds the self time of every imported module of validate
(`python -X importtime`, best of the runs), summed by top-level package.

Run: .venv/bin/python benchmarks/cold_start.py [--repeats N] [--json] [--importtime]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, cli_command, environ, save

EXAMPLE = "examples/card_replace"
TARGET = 3.0


def _commands(python: str, script: str, env: dict[str, str]) -> list[dict]:
    """The rows, in order: name, argv, target ratio (None: measured for information)."""
    imported = validate_imports(python, env)
    libraries = [m for m in imported if m.split(".")[0] not in _STDLIB | {"dialogcheck"}]
    return [
        {"name": "baseline: python -c 'import json'", "argv": [python, "-c", "import json"], "target": None},
        {"name": "dialogcheck --help", "argv": [script, "--help"], "target": None},
        {"name": f"dialogcheck validate {EXAMPLE}", "argv": [script, "validate", EXAMPLE], "target": TARGET},
        {"name": "dialogcheck check --help", "argv": [script, "check", "--help"], "target": None},
        # The floor: no validate runs without its command-line framework and its YAML parser.
        {"name": "reference: click and ruamel.yaml alone", "argv": [python, "-c", "import click, ruamel.yaml"], "target": None},
        {"name": "reference: libraries validate needs", "argv": [python, "-c", "import " + ", ".join(libraries)],
         "target": None, "libraries": sorted({m.split(".")[0] for m in libraries})},
        {"name": "reference: all validate imports, no work", "argv": [python, "-c", "import " + ", ".join(imported)],
         "target": None},
    ]


_STDLIB = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | {"_distutils_hack", "sitecustomize"}

#: Runs validate on the example in-process, then prints every module it added, in the order they were imported.
_PROBE = f"""
import sys
before = set(sys.modules)
sys.argv = ["dialogcheck", "validate", "{EXAMPLE}"]
from dialogcheck._cli.main import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + " ".join(m for m in sys.modules if m not in before and not m.startswith("__")))
"""


def validate_imports(python: str, env: dict[str, str]) -> list[str]:
    """The modules `dialogcheck validate` imports on the example, found by running it once."""
    done = subprocess.run([python, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return done.stderr.rsplit("\nMODULES ", 1)[1].split()


def breakdown(rows: list[dict]) -> dict[str, float]:
    """validate's seconds split by the reference rows (each the previous plus one more part)."""
    seconds = {row["name"]: row["seconds"] for row in rows}
    start, libraries, imports = (seconds[n] for n in (
        "baseline: python -c 'import json'", "reference: libraries validate needs", "reference: all validate imports, no work"))
    total = seconds[f"dialogcheck validate {EXAMPLE}"]
    return {
        "python start + import json (the baseline)": start,
        "third-party library imports": round(libraries - start, 4),
        "dialogcheck's own modules": round(imports - libraries, 4),
        "the work: the files read, parsed, checked; output": round(total - imports, 4),
        "total": total,
    }


def _time_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode(errors='replace')}")
    return elapsed


def measure(commands: list[dict], repeats: int, env: dict[str, str]) -> list[dict]:
    samples: dict[str, list[float]] = defaultdict(list)
    for command in commands:  # warm the OS file cache and write bytecode (__pycache__, gitignored) before timing
        _time_once(command["argv"], env)
    for round_no in range(repeats):
        shift = round_no % len(commands)  # each command takes each position in turn
        for command in commands[shift:] + commands[:shift]:
            samples[command["name"]].append(_time_once(command["argv"], env))
    baseline = min(samples[commands[0]["name"]])
    rows = []
    for command in commands:
        best = min(samples[command["name"]])
        ratio = best / baseline
        target = command["target"]
        rows.append({
            "name": command["name"],
            "seconds": round(best, 4),
            "ratio": round(ratio, 2),
            "target": target,
            "met": None if target is None else ratio <= target,
            "command": " ".join(Path(a).name if i == 0 else a for i, a in enumerate(command["argv"]))[:200],
            **({"libraries": command["libraries"]} if "libraries" in command else {}),
        })
    return rows


_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+\d+ \| *(\S+)")


def import_breakdown(script: str, repeats: int, env: dict[str, str]) -> dict[str, float]:
    """Milliseconds of import (self time, best of `repeats` runs) per top-level package, for validate."""
    env = {**env, "PYTHONPROFILEIMPORTTIME": "1"}
    best: dict[str, int] = {}
    for _ in range(repeats):
        done = subprocess.run([script, "validate", EXAMPLE], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=True)
        for match in _IMPORTTIME.finditer(done.stderr):
            micros, module = int(match.group(1)), match.group(2)
            best[module] = min(best.get(module, micros), micros)
    by_package: dict[str, float] = defaultdict(float)
    for module, micros in best.items():
        top = module.split(".")[0]
        if top == "dialogcheck":
            top = ".".join(module.split(".")[:2])
        elif top in _STDLIB or top.lstrip("_") in _STDLIB:
            top = "(standard library)"
        by_package[top] += micros / 1000
    return dict(sorted(by_package.items(), key=lambda item: -item[1]))


def _table(rows: list[dict]) -> str:
    lines = [f"{'command':<56} {'seconds':>8} {'ratio':>7}  target", "-" * 84]
    for row in rows:
        target = "" if row["target"] is None else f"<= {row['target']:g}x  {'met' if row['met'] else 'MISSED'}"
        lines.append(f"{row['name']:<56} {row['seconds']:>8.4f} {row['ratio']:>6.2f}x  {target}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20, help="rounds; the best of them is kept (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout instead of the table")
    parser.add_argument("--importtime", action="store_true", help="also break validate's imports down by package")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    script = cli_command()[0]
    env = environ()
    commands = _commands(sys.executable, script, env)
    rows = measure(commands, args.repeats, env)
    document: dict = {"rows": rows, "validate_breakdown_seconds": breakdown(rows), "repeats": args.repeats}
    if args.importtime:
        document["import_breakdown_ms"] = {k: round(v, 2) for k, v in import_breakdown(script, args.repeats, env).items()}
    document = save("cold_start", document)
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        print(_table(rows))
        print("\nvalidate, split by the reference rows:")
        for part, part_seconds in document["validate_breakdown_seconds"].items():
            print(f"  {part:<56} {part_seconds:8.4f} s  {part_seconds / rows[0]['seconds']:5.2f}x")
        if args.importtime:
            print("\nvalidate's imports, self time in ms (best of the runs, with -X importtime's own overhead):")
            for package, ms in document["import_breakdown_ms"].items():
                print(f"  {package:<40} {ms:7.2f}")
        machine = document["machine"]
        print(f"\nPython {machine['python']} on {machine['platform']}, {machine['nproc']} CPUs, "
              f"load {machine['load_average']}, commit {machine['commit']}; best of {args.repeats}; wrote benchmarks/out/cold_start.json")
    return 0 if all(row["met"] is not False for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
