"""Reading big OTLP trace files: `import --from otlp` and `check --input-format otlp` with flat memory.

The files are generated in the layout of the OpenTelemetry Collector's file
exporter (one `{"resourceSpans": [...]}` a line, one export batch of 1 to 8
spans a line, the spans grouped by instrumentation scope), with spans shaped
as `opentelemetry-instrumentation-openai-v2` writes them
(`tests/importers/data/otlp_weather.jsonl`): per user turn, a `chat` span per
model call whose `gen_ai.input.messages` re-send the whole history, an
`execute_tool` span per tool call (one in eight fails: status error and
`error.type`, no result), under an `invoke_agent` root span that ends last.
A third of the conversations put each turn in a trace of its own, threaded by
`gen_ai.conversation.id`; the others hold all their turns in one trace, one
in ten of those naming no conversation id (grouped by the trace). Sixteen
conversations are under way at once, their spans interleaved as an exporter
interleaves them. Files are made once into `benchmarks/out/data/` and remade
when this script changes.

For each size, each command runs in a fresh process, and its wall and CPU
seconds and peak RSS are taken from its own rusage:

* the baseline: decoding every line of the file with orjson, a line at a time;
* `dialogcheck import --from otlp FILE -o OUT`;
* `dialogcheck check --input-format otlp --sop fixtures/otlp_sop.yml --stream
  --jobs 1 --no-judge --format json FILE` (stdout to a file).

What both print is read back and must hold every generated conversation
with every event it should have. Memory is flat when peak RSS at the largest
size is within 1.5x of the smallest's; times are given as ratios over the
baseline's CPU seconds on the same file.

`--chain N` measures instead one trace of N `execute_tool` spans, each the
child of the last and each naming a tool of its own: the deepest span tree
there is, where a walk from every span to the root costs N*N/2 steps.

Run: .venv/bin/python benchmarks/otlp_import.py                 # 10k, 100k and 1M spans
     .venv/bin/python benchmarks/otlp_import.py --quick         # 2k and 20k spans (a test runs it)
     .venv/bin/python benchmarks/otlp_import.py --chain 12000   # a chain of 12,000 tool spans
"""

from __future__ import annotations

import argparse
import hashlib
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import FIXTURES, OUT, cli_command, environ, log, save, table

SOP = FIXTURES / "otlp_sop.yml"
WORK = OUT / "otlp_import"
MEMORY_TARGET = 1.5
CONCURRENT = 16  # conversations under way at once, their spans interleaved
SIZES, QUICK_SIZES = (10_000, 100_000, 1_000_000), (2_000, 20_000)

#: The baseline: every line of the file decoded with orjson, a line at a time, as any reader of it must.
DECODE = """\
import sys, orjson
with open(sys.argv[1], "rb") as lines:
    for line in lines:
        orjson.loads(line)
"""

#: Runs a command from a fresh small process, its stdout to the file named first, and prints its own
#: rusage: wall seconds, CPU seconds, peak RSS (KiB). Exit 1 (some conversation failed) is a result.
MEASURE = """\
import os, subprocess, sys, time
start = time.perf_counter()
with open(sys.argv[1], "wb") as out:
    process = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
code = os.waitstatus_to_exitcode(status)
if code not in (0, 1) or b"Traceback" in stderr:
    sys.exit(f"exit {code}: " + stderr.decode()[-2000:])
print(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""

# --------------------------------------------------------------------------- the traces

RESOURCE = {"attributes": [
    {"key": "telemetry.sdk.language", "value": {"stringValue": "python"}},
    {"key": "telemetry.sdk.name", "value": {"stringValue": "opentelemetry"}},
    {"key": "telemetry.sdk.version", "value": {"stringValue": "1.45.2"}},
    {"key": "service.name", "value": {"stringValue": "weather-agent"}},
]}
GENAI_SCOPE = {"name": "opentelemetry.util.genai.handler", "version": "1.1b0"}
AGENT_SCOPE = {"name": "weather-agent"}
SCHEMA = "https://opentelemetry.io/schemas/1.37.0"
CITIES = ["Paris", "Lyon", "Oslo", "Lima", "Kyoto", "Quito", "Dakar", "Perth", "Tunis", "Porto", "Riga", "Cork"]
SKIES = ["sunny", "cloudy", "rainy", "windy", "foggy"]


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


class _Clock:
    """Nanosecond timestamps that only go forward, a few milliseconds a step."""

    def __init__(self, rng: random.Random, start: int) -> None:
        self.rng, self.now = rng, start

    def tick(self) -> str:
        self.now += self.rng.randrange(1_000_000, 40_000_000)
        return str(self.now)


class _Conversation:
    """One generated conversation: its spans in the order they end, and the events an importer must find."""

    def __init__(self, number: int, rng: random.Random) -> None:
        self.rng = rng
        self.clock = _Clock(rng, 1_796_182_691_000_000_000 + number * 7_000_000_000)
        self.id = f"conv-{number:07d}"
        self.one_trace_per_turn = number % 3 == 0
        self.named = self.one_trace_per_turn or number % 10 != 9
        self.key = self.id  # its id once imported: its trace id when it names none
        self.expected: list[tuple[str, str, bool]] = []  # (event, text or tool name, is_error): what an importer must find
        self.history: list[dict[str, Any]] = []
        self.number = number

    def spans(self) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """(scope, span) in the order an exporter sees them: children as they end, each root after them."""
        turns = self.rng.choice((1, 1, 2, 2, 3))
        cities = self.rng.sample(CITIES, turns)
        trace = root = start = ""
        for turn, city in enumerate(cities):
            if turn == 0 or self.one_trace_per_turn:
                trace, root, start = self.rng.randbytes(16).hex(), self.rng.randbytes(8).hex(), self.clock.tick()
                self.key = self.key if self.named else trace
            yield from self.turn(trace, root, turn, city)
            if turn == turns - 1 or self.one_trace_per_turn:
                attributes = [_attr("gen_ai.operation.name", "invoke_agent"), _attr("gen_ai.agent.name", "weather")]
                if self.named:
                    attributes.append(_attr("gen_ai.conversation.id", self.id))
                yield AGENT_SCOPE, {"traceId": trace, "spanId": root, "flags": 256, "name": "invoke_agent weather", "kind": 1,
                                    "startTimeUnixNano": start, "endTimeUnixNano": self.clock.tick(),
                                    "attributes": attributes, "status": {}}

    def turn(self, trace: str, root: str, turn: int, city: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """A user question, 0 to 2 tool calls each a model call and a tool run, then the answer."""
        question = f"What's the weather in {city}? (question {turn + 1})"
        self.history.append({"role": "user", "parts": [{"content": question, "type": "text"}]})
        self.expected.append(("user", question, False))
        calls = self.rng.choice((0, 1, 1, 1, 2))
        tools = ["get_weather", "book_table", "cancel_booking"] if self.number % 50 == 7 else ["get_weather", "book_table"]
        failed = False
        for k in range(calls):
            name, call_id = tools[k], f"call_{turn}_{k}"
            arguments = {"city": city} if name == "get_weather" else {"city": city, "people": self.rng.randrange(1, 7)}
            call = {"role": "assistant", "parts": [{"arguments": arguments, "name": name, "id": call_id, "type": "tool_call"}]}
            yield GENAI_SCOPE, self.chat(trace, root, call, "tool_calls")
            fails = self.rng.randrange(8) == 0
            failed = failed or fails
            result = "upstream timeout" if fails else f"{self.rng.choice(SKIES)}, {self.rng.randrange(-5, 35)}C"
            yield GENAI_SCOPE, self.tool(trace, root, name, call_id, arguments, None if fails else result)
            self.history += [call, {"role": "tool", "parts": [{"response": result, "id": call_id, "type": "tool_call_response"}]}]
            self.expected.append(("tool_executed", name, fails))
        answer = (f"Sorry, I could not look {city} up just now." if failed
                  else f"It is {self.rng.choice(SKIES)} in {city} today (answer {turn + 1}).")
        reply = {"role": "assistant", "parts": [{"content": answer, "type": "text"}]}
        yield GENAI_SCOPE, self.chat(trace, root, reply, "stop")
        self.history.append(reply)
        self.expected.append(("bot", answer, False))

    def chat(self, trace: str, root: str, output: dict[str, Any], finish: str) -> dict[str, Any]:
        start = self.clock.tick()
        return {"traceId": trace, "spanId": self.rng.randbytes(8).hex(), "parentSpanId": root, "flags": 256,
                "name": "chat gpt-4o-mini", "kind": 3, "startTimeUnixNano": start, "endTimeUnixNano": self.clock.tick(),
                "attributes": [
                    _attr("gen_ai.operation.name", "chat"), _attr("gen_ai.request.model", "gpt-4o-mini"),
                    _attr("gen_ai.provider.name", "openai"),
                    {"key": "gen_ai.response.finish_reasons", "value": {"arrayValue": {"values": [{"stringValue": finish}]}}},
                    _attr("gen_ai.response.model", "gpt-4o-mini"), _attr("gen_ai.response.id", f"chatcmpl-{self.rng.randrange(10**9)}"),
                    _attr("gen_ai.usage.input_tokens", 20 * len(self.history)), _attr("gen_ai.usage.output_tokens", 12),
                    _attr("gen_ai.input.messages", orjson.dumps(self.history).decode()),
                    _attr("gen_ai.output.messages", orjson.dumps([output | {"finish_reason": finish}]).decode()),
                ], "status": {}}

    def tool(self, trace: str, root: str, name: str, call_id: str, arguments: dict[str, Any], result: str | None) -> dict[str, Any]:
        start = self.clock.tick()
        attributes = [_attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", name),
                      _attr("gen_ai.tool.call.id", call_id), _attr("gen_ai.tool.call.arguments", orjson.dumps(arguments).decode())]
        if result is None:
            attributes.append(_attr("error.type", "TimeoutError"))
        else:
            attributes.append(_attr("gen_ai.tool.call.result", result))
        return {"traceId": trace, "spanId": self.rng.randbytes(8).hex(), "parentSpanId": root, "flags": 256,
                "name": f"execute_tool {name}", "kind": 1, "startTimeUnixNano": start, "endTimeUnixNano": self.clock.tick(),
                "attributes": attributes,
                "status": {"code": 2, "message": "upstream timeout"} if result is None else {}}


def _document(batch: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """One export request: the batch's spans under one resource, grouped by scope in the order they came."""
    scopes: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for scope, span in batch:
        scopes.setdefault(scope["name"], (scope, []))[1].append(span)
    return {"resourceSpans": [{"resource": RESOURCE, "scopeSpans": [
        {"scope": scope, "spans": spans, "schemaUrl": SCHEMA} for scope, spans in scopes.values()]}]}


def write_traces(path: Path, spans: int, seed: int, expected: dict[str, list[tuple[str, str, bool]]] | None = None) -> dict[str, int]:
    """About `spans` spans (the conversations under way when the count is reached are finished) to `path`;
    with `expected`, what each conversation must import as, by its id."""
    rng = random.Random(seed)
    counts = {"spans": 0, "conversations": 0, "events": 0, "lines": 0}
    started = 0
    active: list[tuple[_Conversation, Iterator]] = []

    def start() -> None:
        nonlocal started
        conversation = _Conversation(started, rng)
        active.append((conversation, conversation.spans()))
        started += 1

    with path.open("wb") as out:
        for _ in range(CONCURRENT):
            start()
        while active:
            batch = []
            for _ in range(rng.randrange(1, 9)):
                if not active:
                    break
                k = rng.randrange(len(active))
                conversation, pending = active[k]
                span = next(pending, None)
                if span is None:
                    active.pop(k)
                    counts["conversations"] += 1
                    counts["events"] += len(conversation.expected)
                    if expected is not None:
                        expected[conversation.key] = conversation.expected
                    if counts["spans"] < spans:
                        start()
                    continue
                batch.append(span)
                counts["spans"] += 1
            if batch:
                out.write(orjson.dumps(_document(batch)) + b"\n")
                counts["lines"] += 1
    return counts | {"bytes": path.stat().st_size}


def write_chain(path: Path, spans: int) -> None:
    """One trace of `spans` tool spans, each the child of the one before and each of a tool of its own name."""
    trace = "c0ffee" + "0" * 25 + "1"
    chain = [{"traceId": trace, "spanId": f"{i + 1:016x}", **({"parentSpanId": f"{i:016x}"} if i else {}),
              "name": f"execute_tool tool_{i}", "kind": 1, "startTimeUnixNano": str(1_796_182_691_000_000_000 + i * 1000),
              "endTimeUnixNano": str(1_796_182_691_000_000_000 + (2 * spans - i) * 1000),
              "attributes": [_attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", f"tool_{i}")], "status": {}}
             for i in range(spans)]
    path.write_bytes(orjson.dumps(_document([(GENAI_SCOPE, span) for span in chain])) + b"\n")


def run_chain(spans: int) -> dict[str, Any]:
    """`import --from otlp` of one chain of `spans` tool spans: every span must come out as its tool run."""
    WORK.mkdir(parents=True, exist_ok=True)
    data, imported = WORK / f"chain_{spans}.jsonl", WORK / f"chain_{spans}_imported.jsonl"
    write_chain(data, spans)
    log(f"a chain of {spans:,} tool spans: import")
    found = measured(cli_command() + ["import", "--from", "otlp", str(data), "-o", str(imported)], WORK / "import.out")
    counts = imported_counts(imported)
    if counts != {"conversations": 1, "events": spans}:
        raise SystemExit(f"{data}: import found {counts}; the chain holds 1 conversation of {spans} tool runs")
    data.unlink()
    imported.unlink()
    print(f"\n## OTLP: a chain of {spans:,} tool spans, each the child of the last\n")
    print(table(["spans", "command", "CPU s", "wall s", "peak RSS MiB"],
                [[f"{spans:,}", "import --from otlp", f"{found['cpu_s']:.2f}", f"{found['wall_s']:.2f}", f"{found['peak_rss_mib']:.1f}"]]))
    return save("otlp_import_chain", {"spans": spans, "import": found})


def trace_path(spans: int, seed: int) -> Path:
    return OUT / "data" / f"otlp_{spans}_{seed}.jsonl"


def traces(spans: int, seed: int = 1) -> tuple[Path, dict[str, int]]:
    """The generated trace file of about `spans` spans, remade only when this script changed."""
    path = trace_path(spans, seed)
    meta = path.with_suffix(".meta.json")
    key = {"spans": spans, "seed": seed, "generator": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]}
    if path.exists() and meta.exists() and orjson.loads(meta.read_bytes()).get("key") == key:
        return path, orjson.loads(meta.read_bytes())["stats"]
    log(f"generating about {spans:,} spans (seed {seed}) to {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    stats = write_traces(path, spans, seed)
    meta.write_bytes(orjson.dumps({"key": key, "stats": stats}))
    return path, stats


# --------------------------------------------------------------------------- measuring


def measured(argv: list[str], stdout: Path) -> dict[str, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one command, its stdout kept in `stdout`."""
    done = subprocess.run([sys.executable, "-c", MEASURE, str(stdout), *argv], capture_output=True, text=True,
                          env=environ(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:8])}... failed: {done.stderr[-2000:]}")
    wall, cpu, kib = map(float, done.stdout.split())
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "peak_rss_mib": round(kib / 1024, 1)}


def imported_counts(path: Path) -> dict[str, int]:
    """Conversations and events in `import` output (one conversation a line)."""
    conversations = events = 0
    with path.open("rb") as lines:
        for line in lines:
            conversations += 1
            events += len(orjson.loads(line)["events"])
    return {"conversations": conversations, "events": events}


def check_summary(path: Path) -> dict[str, int]:
    """The summary of a `check --format json` document: how many conversations passed, failed, errored."""
    summary = orjson.loads(path.read_bytes())["summary"]
    return {k: summary[k] for k in ("conversations", "passed", "failed", "errored")}


def run_size(spans: int, seed: int) -> dict[str, Any]:
    data, stats = traces(spans, seed)
    WORK.mkdir(parents=True, exist_ok=True)
    imported, checked = WORK / f"imported_{spans}.jsonl", WORK / f"check_{spans}.json"
    log(f"{stats['spans']:,} spans, {stats['conversations']:,} conversations ({stats['bytes'] / 1e6:,.0f} MB): decode, import, check")
    found: dict[str, Any] = {"data": stats}
    found["decode"] = measured([sys.executable, "-c", DECODE, str(data)], WORK / "decode.out")
    found["import"] = measured(cli_command() + ["import", "--from", "otlp", str(data), "-o", str(imported)], WORK / "import.out")
    found["check"] = measured(cli_command() + ["check", "--input-format", "otlp", "--sop", str(SOP), "--stream", "--jobs", "1",
                                               "--no-judge", "--format", "json", str(data)], checked)
    counts = imported_counts(imported)
    summary = check_summary(checked)
    expected = {"conversations": stats["conversations"], "events": stats["events"]}
    if counts != expected or summary["conversations"] != stats["conversations"] or summary["errored"]:
        raise SystemExit(f"{data}: import found {counts}, check {summary}; the generator made {expected}")
    imported.unlink()
    checked.unlink()
    found["verdicts"] = summary
    for name in ("import", "check"):
        found[name]["cpu_over_decode"] = round(found[name]["cpu_s"] / found["decode"]["cpu_s"], 2)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spans", type=int, nargs="+", help="sizes in spans, smallest first (default 10,000 100,000 1,000,000)")
    parser.add_argument("--quick", action="store_true", help=f"sizes {' and '.join(f'{n:,}' for n in QUICK_SIZES)} spans")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-data", action="store_true", help="keep the largest trace file (otherwise deleted after)")
    parser.add_argument("--chain", type=int, metavar="N", help="measure instead one trace of N tool spans, each the child of the last")
    args = parser.parse_args(argv)
    if args.chain:
        run_chain(args.chain)
        return 0
    sizes = sorted(args.spans or (QUICK_SIZES if args.quick else SIZES))
    found = {n: run_size(n, args.seed) for n in sizes}
    if not args.keep_data and len(sizes) > 1:
        largest = trace_path(sizes[-1], args.seed)
        largest.unlink()
        largest.with_suffix(".meta.json").unlink()
    rows = []
    for f in found.values():
        for name, label in (("decode", "decode every line (orjson)"), ("import", "import --from otlp"), ("check", "check --input-format otlp --sop --stream")):
            m = f[name]
            rows.append([f"{f['data']['spans']:,}", label, f"{m['cpu_s']:.2f}", f"{m.get('cpu_over_decode', 1):.2f}",
                         f"{m['wall_s']:.2f}", f"{m['peak_rss_mib']:.1f}"])
    small, large = found[sizes[0]], found[sizes[-1]]
    growth = {name: round(large[name]["peak_rss_mib"] / small[name]["peak_rss_mib"], 3) for name in ("decode", "import", "check")}
    met = max(growth["import"], growth["check"]) <= MEMORY_TARGET
    print(f"\n## OTLP traces: import and check, {len(sizes)} sizes, each command a fresh process\n")
    print(table(["spans", "command", "CPU s", "x decode", "wall s", "peak RSS MiB"], rows))
    print(f"\npeak RSS at {large['data']['spans']:,} over {small['data']['spans']:,} spans: "
          + ", ".join(f"{k} {v:.3f}x" for k, v in growth.items()) + f" (target <= {MEMORY_TARGET:g}x for import and check: "
          + ("met" if met else "NOT met") + ")")
    for f in found.values():
        print(f"{f['data']['spans']:,} spans: {f['data']['conversations']:,} conversations, {f['data']['events']:,} events; "
              f"check: {f['verdicts']['passed']:,} passed, {f['verdicts']['failed']:,} failed")
    save("otlp_import", {"sizes": sizes, "seed": args.seed, "results": {str(n): f for n, f in found.items()},
                         "rss_growth": growth, "target": MEMORY_TARGET, "met": met})
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
