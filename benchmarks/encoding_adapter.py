"""Is encoding in the worker processes worth its adapter? `check --jobs 2` with and without it.

`engines.work.Encoding` lets a worker send back its chunk's results encoded
(the JSON lines, or the plain text blocks) instead of the typed results, which
the main process would otherwise unpickle and encode itself. This runs

    dialogcheck check --jobs 2 --no-judge --format json|text --scenario fixtures/scale_scenario.yml DATA

on generated conversations, stdout to a file, as shipped (`adapter`) and with
the adapter switched off in the process (`typed`: `Fanout.encoding` forced to
None, so the typed results come back), the two in turn, best of `--rounds`.
Reported: wall seconds, and the CPU seconds of the main process alone (the
part the adapter moves to the workers, and what a busy machine disturbs
least), and whether stdout held the same bytes.

Run: .venv/bin/python benchmarks/encoding_adapter.py [--conversations 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SCENARIO, dataset, log, table

#: The child: the CLI, with the adapter off when asked, printing its own CPU seconds (not its workers') at exit.
CHILD = """
import atexit, os, resource, sys
if sys.argv[1] == "typed":
    import dialogcheck._cli.check_output as out
    start = out.Fanout.__init__
    def typed(self, *args, **kwargs):
        start(self, *args, **kwargs)
        self.encoding = None
    out.Fanout.__init__ = typed
def cpu():
    used = resource.getrusage(resource.RUSAGE_SELF)
    os.write(2, f"CPU {used.ru_utime + used.ru_stime}\\n".encode())
atexit.register(cpu)
from dialogcheck._cli.main import cli
sys.argv = ["dialogcheck", *sys.argv[2:]]
cli()
"""


def run_once(mode: str, output_format: str, data: Path, out: Path) -> tuple[float, float, str]:
    argv = ["check", "--jobs", "2", "--no-judge", "--format", output_format, "--scenario", str(SCENARIO), str(data)]
    started = time.perf_counter()
    with out.open("wb") as stdout:
        done = subprocess.run([sys.executable, "-c", CHILD, mode, *argv], stdout=stdout, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    cpu = float(next(line for line in done.stderr.decode().splitlines() if line.startswith("CPU ")).split()[1])
    return wall, cpu, hashlib.sha256(out.read_bytes()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data, _ = dataset(args.conversations)
    best: dict[tuple[str, str], tuple[float, float]] = {}
    digests: dict[tuple[str, str], set[str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds):
            for output_format in ("json", "text"):
                for mode in (("adapter", "typed") if round_ % 2 == 0 else ("typed", "adapter")):
                    wall, cpu, digest = run_once(mode, output_format, data, Path(scratch) / "out")
                    key = (mode, output_format)
                    log(f"round {round_ + 1}: {mode}, {output_format}: {wall:.2f} s wall, {cpu:.2f} s CPU in the main process")
                    old = best.get(key, (float("inf"), float("inf")))
                    best[key] = (min(old[0], wall), min(old[1], cpu))
                    digests.setdefault(key, set()).add(digest)
    rows = []
    for output_format in ("json", "text"):
        same = digests[("adapter", output_format)] == digests[("typed", output_format)] and len(digests[("adapter", output_format)]) == 1
        for mode in ("adapter", "typed"):
            wall, cpu = best[(mode, output_format)]
            rows.append([output_format, mode, f"{wall:.2f}", f"{cpu:.2f}", "yes" if same else "NO"])
    print(f"\n## check --jobs 2 on {args.conversations:,} conversations, best of {args.rounds}\n")
    print(table(["format", "results from the workers", "wall s", "main process CPU s", "same stdout"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
