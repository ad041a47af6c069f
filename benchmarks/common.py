"""What the benchmark scripts share: the generated data, running the CLI, timing, tables, the machine.

Not a benchmark. Every script puts `benchmarks/` on `sys.path` and imports this module.
"""

from __future__ import annotations

import hashlib
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
FIXTURES = HERE / "fixtures"
SCENARIO = FIXTURES / "scale_scenario.yml"
SOP = FIXTURES / "scale_sop.yml"

sys.path.insert(0, str(HERE))
import synth  # noqa: E402 - benchmarks/ is not a package


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def git_revision(root: Path = ROOT) -> str:
    """The commit measured, with `+dirty` when files under `src/` differ from it."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    return (rev or "unknown") + ("+dirty" if dirty.strip() else "")


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPUs, Python, the commit, and how busy the machine was."""
    cpuinfo = Path("/proc/cpuinfo")
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")),
               platform.processor()) if cpuinfo.exists() else platform.processor()
    return {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(), "platform": platform.platform(),
            "commit": git_revision(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table that also reads well in a terminal; every column but the first right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    rule = "|" + "|".join(("-" * (w + 2)) if i == 0 else ("-" * (w + 1) + ":") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(headers), rule, *map(line, rows)])


def spread(ratios: list[float]) -> dict[str, float]:
    """The median of a figure's per-round ratios, with their quartiles and range: how much the rounds agree."""
    q1, median, q3 = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else ratios * 3
    return {"median": round(median, 4), "q1": round(q1, 4), "q3": round(q3, 4),
            "min": round(min(ratios), 4), "max": round(max(ratios), 4)}


def save(name: str, result: dict[str, Any]) -> dict[str, Any]:
    """Write `benchmarks/out/NAME.json`: the figures with the command and the machine."""
    path = OUT / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": name, "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]), "machine": machine(), **result}
    path.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return result


# --------------------------------------------------------------------------- data


def _generator_digest() -> str:
    """Changes whenever the generator or its fit does, so stale data files are remade."""
    return hashlib.sha256((HERE / "synth.py").read_bytes() + synth.FIT_PATH.read_bytes()).hexdigest()[:16]


def dataset(n: int, seed: int = 1, *, short: bool = False) -> tuple[Path, dict[str, int]]:
    """`n` generated conversations in `benchmarks/out/data/`, remade only when the generator changed."""
    path = OUT / "data" / f"convs_{n}_{seed}{'_short' if short else ''}.jsonl"
    meta = path.with_suffix(".meta.json")
    key = {"n": n, "seed": seed, "short": short, "generator": _generator_digest()}
    if path.exists() and meta.exists() and orjson.loads(meta.read_bytes()).get("key") == key:
        return path, orjson.loads(meta.read_bytes())["stats"]
    log(f"generating {n:,} conversations (seed {seed}{', short' if short else ''}) to {path}")
    stats = synth.write_jsonl(path, n, seed, short=short)
    meta.write_bytes(orjson.dumps({"key": key, "stats": stats}))
    return path, stats


def decode_lines(path: Path, loads: Callable[[bytes], object]) -> int:
    """Decode every line of `path` with `loads`: the baseline any reader of the file pays."""
    n = 0
    with path.open("rb") as handle:
        for line in handle:
            loads(line)
            n += 1
    return n


_EVICT = bytearray(128 << 20)  # larger than the last-level cache


def flush_caches() -> None:
    """Read 128 MB, so the data of the previous sample is no longer in the CPU caches."""
    _EVICT.find(b"\x01")


# --------------------------------------------------------------------------- the command line


def cli_command(python: str = sys.executable) -> list[str]:
    """The `dialogcheck` console script installed beside `python`."""
    script = Path(python).with_name("dialogcheck")
    if not script.exists():
        raise SystemExit(f"no dialogcheck script next to {python}: install the project (pip install -e .)")
    return [str(script)]


#: Unset for every timed command: colour forced on a pipe, and no bytecode written (an installed
#: package has its .pyc files; without them every run compiles dialogcheck's sources again).
UNSET = ("FORCE_COLOR", "TTY_COMPATIBLE", "PYTHONDONTWRITEBYTECODE")


def environ(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in UNSET}, **extra}


def timed_cli(args: list[str], stdout: Path | None = None, command: list[str] | None = None,
              env: dict[str, str] | None = None) -> float:
    """Wall seconds of one `dialogcheck ARGS`, output to `stdout` or /dev/null; exit 0 or 1 (some failed) only."""
    handle = stdout.open("wb") if stdout else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        done = subprocess.run((command or cli_command()) + args, stdout=handle, stderr=subprocess.PIPE, check=False,
                              env=env or environ())
        seconds = time.perf_counter() - start
    finally:
        if stdout:
            handle.close()
    if done.returncode not in (0, 1) or b"Traceback" in done.stderr:  # exit 1 is also what a crash gives
        raise SystemExit(f"dialogcheck {' '.join(args[:6])}... exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return seconds
