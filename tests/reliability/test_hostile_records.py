"""Hostile conversation records: nesting and length give the same clean answer on every line and every path.

A `memory_set` value nested 2,000 levels deep was a clean exit 2 on the first line of a JSONL of
conversations and a RecursionError traceback on any later one (the fast decoder recursed where the
general loader's orjson stops at 1,024 levels); `check /dev/zero`, one line with no end, was a
MemoryError. Values nested less deep than orjson's limit but deeper than what orjson writes (255
levels) or Python's repr follows must still be judged and shown. Every run here is the installed
command in a real subprocess, on every path: the fast decoder, the general loader, an importer,
`--jobs 1` and `--jobs 2`, `--stream`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.events import bounds
from tests.conftest import plain_env
from tests.engines.batches import SCENARIO, example_events, tracker_lines
from tests.reliability.figures import measure, record

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
CHECK = [str(DIALOGCHECK), "check", "--no-judge", "--scenario", str(SCENARIO)]


def _env() -> dict[str, str]:
    return plain_env()


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*CHECK, *map(str, args)], capture_output=True, env=_env(), timeout=120, check=False)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_tracker(depth: int, name: str = "deep") -> str:
    """A tracker line whose `memory_set` value (and a field no event type reads) is nested `depth` levels."""
    events = json.dumps(example_events()[3])[1:-1]
    return (
        f'{{"sender_id": "{name}", "events": [{events}, {{"event": "memory_set", "key": "deep", "value": {nested(depth)}}},'
        f' {{"event": "user", "text": "hi", "parse_data": {nested(depth)}}}]}}'
    )


def with_line(lines: list[str], index: int, line: str) -> str:
    lines = list(lines)
    lines[index] = line
    return "\n".join(lines) + "\n"


def expected_error(path: Path, lineno: int, line: str) -> str:
    """What the general loader says of `line` on its own: orjson's depth limit (1,024 levels), where orjson stops."""
    with pytest.raises(orjson.JSONDecodeError) as err:
        orjson.loads(line)
    assert err.value.msg == "depth limit exceeded"
    return f"{path}:{lineno}:{err.value.pos + 1}: invalid JSON: depth limit exceeded\n"


@pytest.mark.parametrize("index", [0, 1, 2])
def test_too_deep_is_the_same_clean_error_on_every_line(tmp_path, index):
    line = deep_tracker(2_000)
    path = tmp_path / "small.jsonl"
    path.write_text(with_line(tracker_lines(3), index, line))
    for extra in ([], ["--stream"], ["--input-format", "rasa-tracker"]):
        done = run(*extra, path)
        assert done.returncode == 2, (extra, done.stderr[-2000:])
        assert done.stderr.decode() == expected_error(path, index + 1, line), extra


@pytest.mark.parametrize("index", [1, 900])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_too_deep_in_a_multi_chunk_file_is_the_same_for_one_and_two_jobs(tmp_path, index, jobs):
    line = deep_tracker(2_000)
    path = tmp_path / "big.jsonl"
    path.write_text(with_line(tracker_lines(1_000), index, line))  # 3 MB: workers with --jobs 2
    for extra in ([], ["--stream"]):
        done = run(*extra, "--show", "all", "--jobs", jobs, path)
        assert done.returncode == 2, done.stderr[-2000:]
        assert done.stderr.decode() == expected_error(path, index + 1, line)
        if extra:
            assert done.stdout.count(b"  verdict: ") == index  # streamed: everything before it, judged in order


def test_too_deep_in_the_general_loader_and_an_importer(tmp_path):
    events = tmp_path / "events.jsonl"  # one event a line: the general loader
    line = json.dumps({"event": "memory_set", "key": "deep"})[:-1] + f', "value": {nested(2_000)}}}'
    events.write_text('{"event": "user", "text": "hi"}\n' + line + "\n")
    done = run(events)
    assert done.returncode == 2 and done.stderr.decode() == expected_error(events, 2, line)

    messages = tmp_path / "openai.jsonl"
    line = json.dumps({"messages": [{"role": "user", "content": "hi"}]})[:-1] + f', "extra": {nested(2_000)}}}'
    messages.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n" + line + "\n")
    done = run("--input-format", "openai", messages)
    assert done.returncode == 2 and done.stderr.decode() == expected_error(messages, 2, line)


@pytest.mark.parametrize("depth", [300, 900])
def test_values_nested_deep_but_valid_are_judged_and_shown_on_every_path(tmp_path, depth):
    scenario = tmp_path / "deep.yml"
    scenario.write_text(
        "scenario:\n  name: deep\n  simulation_context: c\n  goals:\n    assertions:\n"
        "      - memory_was_set: [{name: deep, value: [[1]]}]\n"
        "      - memory_was_not_set: [{name: deep, value: [[1]]}]\n"
    )
    path = tmp_path / "deep.jsonl"
    path.write_text(with_line(tracker_lines(1_000), 1, deep_tracker(depth)))
    outputs = []
    for extra in (["--jobs", "1"], ["--jobs", "2"], ["--stream", "--jobs", "2"]):
        done = subprocess.run(
            [str(DIALOGCHECK), "check", "--no-judge", "--format", "json", "--scenario", str(scenario), *extra, str(path)],
            capture_output=True, env=_env(), timeout=120, check=False,
        )
        assert done.returncode == 1, done.stderr[-2000:]
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    deep = json.loads(outputs[0])["conversations"][1]
    assert [a["outcome"] for a in deep["assertions"]] == ["fail", "pass"]
    assert "crashed" not in outputs[0].decode()
    shown = deep["assertions"][0]["detail"]
    assert shown.startswith("deep was written as [[[[[[[[[...]]]]]]]]] at event ")  # a short form, never a repr of every level

    small = tmp_path / "one.jsonl"
    small.write_text(deep_tracker(depth) + "\n")
    html = tmp_path / "report.html"
    done = subprocess.run(
        [str(DIALOGCHECK), "check", "--no-judge", "--html", str(html), "--junit", str(tmp_path / "j.xml"), "--scenario", str(scenario), str(small)],
        capture_output=True, env=_env(), timeout=120, check=False,
    )
    assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr[-2000:]
    assert "deep was written as [[[[[[[[[...]]]]]]]]] at event " in html.read_text()  # the detail, in the page's data


#: CPU seconds a refused or judged big input may cost: the bound of "ends quickly" that a loaded machine does not
#: stretch (the wall clock is recorded, not bounded).
CPU_BOUND_S = 30.0
RSS_BOUND_MB = 1024.0


def test_an_endless_line_is_refused_at_the_bound_not_at_the_memory_end(tmp_path):
    done = measure([*CHECK, "/dev/zero"], tmp_path, env=_env())
    record("check /dev/zero", {"exit": done.returncode, "wall_s": round(done.wall_s, 2), "cpu_s": round(done.cpu_s, 2), "peak_rss_mb": round(done.peak_rss_mb)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == "/dev/zero:1:1: line 1 is longer than 256 MiB, the most one JSON record may be (is this a conversation file?)\n"
    assert done.cpu_s < CPU_BOUND_S and done.peak_rss_mb < RSS_BOUND_MB, (done.cpu_s, done.peak_rss_mb)


@pytest.fixture
def small_bound(monkeypatch):
    """The bound lowered to 64 KiB, so files past it are small enough to make here."""
    monkeypatch.setattr(bounds, "MAX_RECORD_BYTES", 1 << 16)
    return 1 << 16


def check_in_process(*args) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", "--no-judge", "--scenario", str(SCENARIO), *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stderr


def test_a_line_past_the_bound_is_bad_input_on_every_reader(tmp_path, small_bound):
    long_line = json.dumps({"sender_id": "long", "events": [{"event": "user", "text": "a" * small_bound}]})

    def too_long(path: Path, line: int) -> str:
        return f"{path}:{line}:1: line {line} is longer than 0 MiB, the most one JSON record may be (is this a conversation file?)\n"

    for index in (0, 20):
        path = tmp_path / f"long_at_{index}.jsonl"
        path.write_text(with_line(tracker_lines(30), index, long_line))
        assert check_in_process(path) == (2, too_long(path, index + 1))
        assert check_in_process("--chunk-mb", "0.01", path) == (2, too_long(path, index + 1))  # cut into ranges
    document = tmp_path / "doc.json"
    document.write_text(json.dumps([{"event": "user", "text": "a" * 100}] * 1_000, indent=2))
    assert check_in_process(document) == (
        2,
        f"{document}:1:1: the file is larger than 0 MiB, the most a JSON document read whole may be: write it as JSONL, one conversation a line\n",
    )
