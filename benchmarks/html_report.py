"""What does `check --html` cost on 100,000 conversations, and does Chromium open the page?

`check --no-judge --format json --jobs 1 --scenario SCENARIO DATA` (stdout to /dev/null) with and without
`--html OUT`, each a fresh process, taken in turn for `--rounds` rounds: wall and CPU seconds (the medians,
and the median of each round's ratio) and peak RSS of both; the page's size; peak RSS of the same command
with `--html` on a tenth of the conversations (memory stays flat when it does not grow with them); and
the time headless Chromium (Debian's, through Playwright) takes from opening the file to the list drawn,
best of 3, with the list filtered once by a failing check.

Targets (issue 16): the page under 25 MB, the time with --html within 2x of without, flat memory.

Run: .venv/bin/python benchmarks/html_report.py [--conversations 100000] [--short] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, SCENARIO, cli_command, dataset, environ, log, save, table

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-quic", "--no-first-run"]
WORK = OUT / "html_report"
SIZE_TARGET_MB, TIME_TARGET, MEMORY_TARGET = 25, 2.0, 1.2


#: Runs the command from a fresh small process and prints its rusage: a child's peak RSS starts from its
#: parent's at fork, and this script's own (the cache-evicting buffer of `common`, the browser) would count.
MEASURE = """\
import os, subprocess, sys, time
start = time.perf_counter()
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
stderr = process.stderr.read()
_, status, usage = os.wait4(process.pid, 0)
code = os.waitstatus_to_exitcode(status)
if code not in (0, 1) or b"Traceback" in stderr:  # exit 1 is also what a crash gives
    sys.exit(f"exit {code}: " + stderr.decode()[-2000:])
print(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
"""


def measured(argv: list[str]) -> dict[str, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one command, from its own rusage."""
    done = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True, text=True, env=environ(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:8])}... failed: {done.stderr[-2000:]}")
    wall, cpu, rss = map(float, done.stdout.split())
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss}


def check_argv(data: Path, html: Path | None) -> list[str]:
    argv = cli_command() + ["check", "--no-judge", "--format", "json", "--jobs", "1", "--scenario", str(SCENARIO), str(data)]
    return argv + (["--html", str(html)] if html else [])


def open_in_chromium(page: Path, tries: int = 3) -> dict[str, Any]:
    """Seconds from navigating to the list drawn (best of `tries`), and to the list filtered by the most failing check."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        return {"available": False, "why": "playwright is not installed"}
    if not CHROMIUM.exists():
        return {"available": False, "why": f"no Chromium at {CHROMIUM}"}
    opened, filtered = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        for _ in range(tries):
            tab = browser.new_page(viewport={"width": 1366, "height": 900})
            errors: list[str] = []
            tab.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            start = time.perf_counter()
            tab.goto(page.as_uri())
            expect(tab.locator("#shown")).not_to_have_text("", timeout=120_000)
            opened.append(time.perf_counter() - start)
            shown = tab.locator("#shown").inner_text()
            link = tab.locator('#check-table a[href^="#check-"]').first
            start = time.perf_counter()
            link.click()
            expect(tab.locator("#shown")).not_to_have_text(shown, timeout=120_000)
            filtered.append(time.perf_counter() - start)
            if errors:
                raise SystemExit(f"the page raised: {errors}")
            tab.close()
        browser.close()
    return {"available": True, "open_s": min(opened), "filter_s": min(filtered), "shown": shown}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--short", action="store_true", help="short generated conversations (one request, about 15 events)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    data, stats = dataset(args.conversations, short=args.short)
    tenth, _ = dataset(args.conversations // 10, short=args.short)
    WORK.mkdir(parents=True, exist_ok=True)
    page = WORK / "report.html"
    runs: dict[str, list[dict[str, float]]] = {"without": [], "with": []}
    for r in range(args.rounds):
        for side in ("without", "with"):
            runs[side].append(measured(check_argv(data, page if side == "with" else None)))
        log(f"round {r + 1}: " + ", ".join(f"{side} {m[-1]['wall_s']:.1f} s wall, {m[-1]['cpu_s']:.1f} s CPU" for side, m in runs.items()))
    small = measured(check_argv(tenth, WORK / "tenth.html"))
    size = page.stat().st_size
    browser = open_in_chromium(page)

    def median(side: str, key: str) -> float:
        return statistics.median(m[key] for m in runs[side])

    def ratio(key: str) -> float:
        return statistics.median(w[key] / wo[key] for w, wo in zip(runs["with"], runs["without"]))

    result = {
        "data": stats | {"short": args.short},
        "rounds": runs,
        "median": {side: {key: median(side, key) for key in ("wall_s", "cpu_s", "peak_rss_mib")} for side in runs},
        "wall_ratio": ratio("wall_s"),
        "cpu_ratio": ratio("cpu_s"),
        "page_bytes": size,
        "page_bytes_per_conversation": size / args.conversations,
        "peak_rss_mib_tenth_with_html": small["peak_rss_mib"],
        "memory_ratio": median("with", "peak_rss_mib") / small["peak_rss_mib"],
        "chromium": browser,
        "targets": {"page_mb": SIZE_TARGET_MB, "time_ratio": TIME_TARGET, "memory_ratio": MEMORY_TARGET},
    }
    result["met"] = size < SIZE_TARGET_MB * 2**20 and result["wall_ratio"] <= TIME_TARGET and result["memory_ratio"] <= MEMORY_TARGET
    save("html_report", result)
    m = result["median"]
    print(table(
        ["check --format json --jobs 1", "wall s", "CPU s", "peak RSS MiB"],
        [[f"{args.conversations:,} conversations", f"{m['without']['wall_s']:.1f}", f"{m['without']['cpu_s']:.1f}", f"{m['without']['peak_rss_mib']:.1f}"],
         [f"{args.conversations:,} conversations, --html", f"{m['with']['wall_s']:.1f}", f"{m['with']['cpu_s']:.1f}", f"{m['with']['peak_rss_mib']:.1f}"],
         [f"{args.conversations // 10:,} conversations, --html", f"{small['wall_s']:.1f}", f"{small['cpu_s']:.1f}", f"{small['peak_rss_mib']:.1f}"]],
    ))
    print(f"\n--html / without: wall {result['wall_ratio']:.2f}x, CPU {result['cpu_ratio']:.2f}x (target <= {TIME_TARGET:g}x)")
    print(f"page: {size / 2**20:.1f} MiB, {result['page_bytes_per_conversation']:.0f} bytes a conversation (target < {SIZE_TARGET_MB} MB)")
    print(f"peak RSS with --html, {args.conversations:,} / {args.conversations // 10:,} conversations: {result['memory_ratio']:.3f}x "
          f"(target <= {MEMORY_TARGET:g}x)")
    if browser.get("available"):
        print(f"Chromium: list drawn {browser['open_s']:.2f} s after opening; filtered by a check in {browser['filter_s']:.2f} s")
    else:
        print(f"Chromium: not measured ({browser['why']})")
    return 0 if result["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
