"""dialogcheck against LangChain's agentevals trajectory match (strict), on the same tool-call trajectories.

What agentevals' strict match decides: the agent's messages and the
reference's have the same roles one by one, and each assistant message the
same tool calls (names; arguments too unless `tool_args_match_mode="ignore"`).
On trajectories made only of tool calls, each assistant message holding one
call followed by its `tool` result, that is exactly "the tool log equals the
reference sequence". dialogcheck says the same with one scenario per
reference: a `goals.sop` step `tool_sequence {sequence: REF, contiguous: true}`
(the reference as consecutive calls somewhere in the log) and a
`tool_executed {..., times: N}` assertion for every tool name the data knows
(N its count in the reference, often 0), which pins the log's length, so the
consecutive run is the whole log. `tool_sequence` alone, with or without
`contiguous`, would also pass logs with calls around the reference.

The trajectories are the generated conversations of `synth.py`, cut down to
their counted tool runs (framework tools are Mantle's own, no OpenAI
message), written twice: as native dialogcheck events (one `{"events"}` a
line) and as OpenAI messages (one `{"group", "messages"}` a line). Each
conversation's reference is the most common tool-name sequence of its group
(the first write it made, or none), so some of every group match and most
do not. Each side reads its own file from disk and judges every line; the
figure is conversations per second, each side's best of `--repeats`.

agentevals runs in its own venv (`benchmarks/.venv-agentevals`, made from
`requirements-agentevals.txt` when missing, or `--python`), never in the
project's; LangSmith tracing is switched off for it.

Run: .venv/bin/python benchmarks/agentevals_compare.py [--conversations N] [--seed S] [--python PY]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "agentevals"
VENV = HERE / ".venv-agentevals"
REQUIREMENTS = HERE / "requirements-agentevals.txt"


# --------------------------------------------------------------------------- inputs (dev venv)


def write_inputs(n: int, seed: int, out: Path) -> dict:
    """The two files of the same trajectories, and one reference per group."""
    sys.path.insert(0, str(HERE))
    import synth

    out.mkdir(parents=True, exist_ok=True)
    logs = []
    for conversation in synth.iter_conversations(n, seed):
        runs = [e for e in conversation["events"] if e["event"] == "tool_executed" and e["tool_name"] not in synth.FRAMEWORK_TOOLS]
        first_write = next((e["tool_name"] for e in runs if e["tool_name"] in synth.WRITES), "none")
        logs.append((conversation["sender_id"], first_write, runs))
    modes: dict[str, Counter] = {}
    for _, group, runs in logs:
        modes.setdefault(group, Counter())[tuple(e["tool_name"] for e in runs)] += 1
    references = {group: list(counts.most_common(1)[0][0]) for group, counts in sorted(modes.items())}
    tools = {}
    with (out / "trajectories.native.jsonl").open("wb") as native, (out / "trajectories.openai.jsonl").open("wb") as openai:
        for sender, group, runs in logs:
            events = []
            messages = []
            for i, run in enumerate(runs):
                tools.setdefault(run["tool_name"], (run["source"], run.get("mcp_server")))
                events.append({k: run[k] for k in ("event", "tool_name", "arguments", "source", "mcp_server", "result",
                                                   "is_error") if k in run})
                call_id = f"call_{i}"
                messages.append({"role": "assistant", "content": "", "tool_calls": [
                    {"id": call_id, "type": "function",
                     "function": {"name": run["tool_name"], "arguments": orjson.dumps(run["arguments"]).decode()}}]})
                messages.append({"role": "tool", "tool_call_id": call_id, "content": run["result"]})
            native.write(orjson.dumps({"sender_id": f"{group}/{sender}", "events": events}) + b"\n")
            openai.write(orjson.dumps({"id": sender, "group": group, "messages": messages}) + b"\n")
    (out / "trajectories.references.json").write_bytes(orjson.dumps(references, option=orjson.OPT_INDENT_2))
    return {"references": references, "tools": {k: list(v) for k, v in sorted(tools.items())},
            "groups": {g: sum(c.values()) for g, c in sorted(modes.items())}}


def scenario_text(group: str, reference: list[str], tools: dict[str, list]) -> str:
    """The dialogcheck scenario that passes exactly when the tool log is `reference`."""
    counts = Counter(reference)
    lines = ["scenario:", f"  name: tool log equals the {group} reference", "  simulation_context: benchmark",
             "  goals:", "    assertions:"]
    for name, (source, server) in sorted(tools.items()):
        lines.append(f"      - tool_executed: {{tool_name: {name}, source: {source}"
                     + (f", mcp_server: {server}" if server else "") + f", times: {counts[name]}}}")
    if reference:
        lines += ["    sop:", "      - id: same_tools_in_order", "        evaluator:", "          type: tool_sequence",
                  f"          sequence: [{', '.join(reference)}]", "          contiguous: true"]
    return "\n".join(lines) + "\n"


def run_dialogcheck(out: Path, inputs: dict, repeats: int) -> dict:
    """Load and judge every native trajectory with its group's scenario, best of `repeats`."""
    import dialogcheck

    scenarios = {}
    for group, reference in inputs["references"].items():
        path = out / f"trajectory_scenario_{group}.yml"
        path.write_text(scenario_text(group, reference, inputs["tools"]), encoding="utf-8")
        scenarios[group] = dialogcheck.load_scenario(path)
    native = out / "trajectories.native.jsonl"
    best, verdicts = float("inf"), []
    for _ in range(repeats):
        start = time.perf_counter()
        found = []
        for conversation in dialogcheck.iter_conversations([native]):
            group = conversation.conversation_id.split("/", 1)[0]
            found.append(dialogcheck.evaluate(scenarios[group], conversation).verdict is dialogcheck.Outcome.PASS)
        best = min(best, time.perf_counter() - start)
        verdicts = found
    return {"seconds": best, "matches": verdicts}


# --------------------------------------------------------------------------- agentevals side (its venv)


def agentevals_side(out: Path, repeats: int) -> None:
    """Run inside the agentevals venv: judge every OpenAI trajectory, print seconds and verdicts as JSON."""
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    evaluator = create_trajectory_match_evaluator(trajectory_match_mode="strict", tool_args_match_mode="ignore")

    def reference_messages(names: list[str]) -> list[dict]:
        messages = []
        for i, name in enumerate(names):
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": f"ref_{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}]})
            messages.append({"role": "tool", "tool_call_id": f"ref_{i}", "content": ""})
        return messages

    references = {g: reference_messages(names) for g, names in
                  orjson.loads((out / "trajectories.references.json").read_bytes()).items()}
    best, verdicts = float("inf"), []
    for _ in range(repeats):
        start = time.perf_counter()
        found = []
        with (out / "trajectories.openai.jsonl").open("rb") as lines:
            for line in lines:
                item = orjson.loads(line)
                result = evaluator(outputs=item["messages"], reference_outputs=references[item["group"]])
                found.append(bool(result["score"]))
        best = min(best, time.perf_counter() - start)
        verdicts = found
    from importlib.metadata import version

    import agentevals  # noqa: F401 - only for its version

    sys.stdout.write(orjson.dumps({"seconds": best, "matches": verdicts, "agentevals": version("agentevals"),
                                   "openevals": version("openevals"), "langchain-core": version("langchain-core")}).decode())


def ensure_venv() -> Path:
    """The agentevals venv, made from requirements-agentevals.txt the first time."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV} from {REQUIREMENTS.name}…", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)], check=True)
    return python


def compare(n: int, seed: int, repeats: int, python: Path | None, out: Path = OUT) -> dict:
    """Both sides on the same trajectories: conversations per second, the ratio, and whether they agree."""
    python = python or ensure_venv()
    inputs = write_inputs(n, seed, out)
    ours = run_dialogcheck(out, inputs, repeats)
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}
    done = subprocess.run([str(python), str(Path(__file__).resolve()), "--side", "agentevals", "--out", str(out),
                           "--repeats", str(repeats)], capture_output=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"agentevals side failed (exit {done.returncode}): {done.stderr.decode()[-3000:]}")
    theirs = orjson.loads(done.stdout)
    agree = sum(a == b for a, b in zip(ours["matches"], theirs["matches"], strict=True))
    ours_rate, theirs_rate = n / ours["seconds"], n / theirs["seconds"]
    return {
        "conversations": n, "seed": seed, "repeats": repeats, "groups": inputs["groups"],
        "references": inputs["references"],
        "dialogcheck": {"seconds": round(ours["seconds"], 4), "conversations_per_second": round(ours_rate, 1),
                        "matches": sum(ours["matches"])},
        "agentevals": {"seconds": round(theirs["seconds"], 4), "conversations_per_second": round(theirs_rate, 1),
                       "matches": sum(theirs["matches"]), "versions": {k: theirs[k] for k in ("agentevals", "openevals", "langchain-core")}},
        "agree": agree, "disagree": n - agree,
        "ratio_dialogcheck_over_agentevals": round(ours_rate / theirs_rate, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=20_000, help="trajectories (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per side; the best is kept (default 3)")
    parser.add_argument("--python", type=Path, help="a python with agentevals installed (default: benchmarks/.venv-agentevals)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the trajectories and the result")
    parser.add_argument("--side", choices=["agentevals"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side:
        agentevals_side(args.out, args.repeats)
        return 0
    result = compare(args.conversations, args.seed, args.repeats, args.python, args.out)
    (args.out / "agentevals.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps({k: v for k, v in result.items() if k != "references"}, option=orjson.OPT_INDENT_2).decode())
    return 0 if result["disagree"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
