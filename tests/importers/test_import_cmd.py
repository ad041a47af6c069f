"""`dialogcheck import --from FORMAT FILE [-o OUT] [--derive-scenarios DIR]`: output, atomic writes, exit codes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck import load_scenario
from dialogcheck._cli.main import cli
from dialogcheck.events.load import iter_conversation_file
from tests import inprocess

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "tau_bench_airline_sample.json"


pytestmark = pytest.mark.usefixtures("plain_output")


def run(*args):
    return CliRunner().invoke(cli, ["import", *map(str, args)])


def test_stdout_gets_one_tracker_a_line():
    result = run("--from", "tau-bench", SAMPLE)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [t["sender_id"] for t in lines] == ["task-1-trial-0", "task-44-trial-0", "task-1-trial-1", "task-44-trial-1"]
    first = json.loads(SAMPLE.read_text())[0]
    assert lines[0]["events"][0] == {"event": "user", "text": first["traj"][1]["content"], "metadata": {"source_index": 1, "reward": first["reward"]}}
    assert "imported 4 conversations" in result.stderr


def test_output_file_reads_back_natively(tmp_path):
    out = tmp_path / "native.jsonl"
    result = run("--from", "tau-bench", SAMPLE, "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("imported 4 conversations (")
    assert [c.conversation_id for c in iter_conversation_file(out)] == ["task-1-trial-0", "task-44-trial-0", "task-1-trial-1", "task-44-trial-1"]
    assert [p.name for p in tmp_path.iterdir()] == ["native.jsonl"]  # no temporary file left


def test_json_format(tmp_path):
    out = tmp_path / "native.jsonl"
    summary = json.loads(run("--from", "tau-bench", SAMPLE, "-o", out, "--format", "json").stdout)
    assert summary["conversations"] == 4 and summary["output"] == str(out) and summary["scenarios"] == []
    document = json.loads(run("--from", "tau-bench", SAMPLE, "--format", "json").stdout)
    assert [t["sender_id"] for t in document["conversations"]][:2] == ["task-1-trial-0", "task-44-trial-0"]


def test_derive_scenarios(tmp_path):
    result = run("--from", "tau-bench", SAMPLE, "-o", tmp_path / "out.jsonl", "--derive-scenarios", tmp_path / "scenarios")
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "scenarios").glob("*.yml"))
    assert [f.name for f in files] == ["tau-bench-task-1.yml", "tau-bench-task-44.yml"]
    assert load_scenario(files[1]).goals.assertions[-1].key == "bot_uttered"
    assert "2 scenarios in" in result.stdout


def test_derive_scenarios_needs_tau_bench(tmp_path):
    result = run("--from", "openai", SAMPLE, "--derive-scenarios", tmp_path)
    assert result.exit_code == 2
    assert "--derive-scenarios works only with --from tau-bench" in result.output


def test_bad_input_exits_2_with_the_position_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    runs = json.loads(SAMPLE.read_text())
    runs[3]["traj"][2]["role"] = "robot"
    bad.write_text(json.dumps(runs, indent=2))
    out = tmp_path / "out.jsonl"
    out.write_text("previous content\n")
    result = run("--from", "tau-bench", bad, "-o", out, "--derive-scenarios", tmp_path / "scenarios")
    assert result.exit_code == 2
    line = [i for i, t in enumerate(bad.read_text().splitlines(), 1) if '"role": "robot"' in t][0]
    assert result.stderr == f"{bad}:{line}:17: unknown role 'robot': expected system, developer, user, assistant or tool\n"
    assert out.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "out.jsonl"]


def test_bad_input_as_json(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": [\n')
    result = run("--from", "openai", bad, "--format", "json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert (error["message"], error["file"], error["line"], error["column"]) == ("invalid JSON: Expecting value", str(bad), 2, 15)


def test_a_missing_file(tmp_path):
    result = run("--from", "tau2", tmp_path / "nope.json")
    assert result.exit_code == 2
    assert result.stderr == f"{tmp_path / 'nope.json'}:1:1: no such file\n"


# --- hostile task ids: every derived scenario lands in --derive-scenarios DIR ----------------------


def test_a_task_id_walking_up_the_tree_writes_inside_the_scenarios_folder(tmp_path):
    """`../../../../tmp/x/PWNED` once wrote PWNED.yml outside the folder; run as a real command, from a folder deep down."""
    import os
    import sys

    work = tmp_path / "a" / "b" / "c" / "d"
    work.mkdir(parents=True)
    runs = json.loads(SAMPLE.read_text())[:1]
    runs[0]["task_id"] = f"../../../../{tmp_path.name}-outside/PWNED"
    (work / "runs.json").write_text(json.dumps(runs))
    dialogcheck = Path(sys.executable).parent / "dialogcheck"
    done = inprocess.run(
        [dialogcheck, "import", "--from", "tau-bench", "runs.json", "-o", "out.jsonl", "--derive-scenarios", "scenarios"],
        cwd=work, text=True, env={k: v for k, v in os.environ.items() if k != "FORCE_COLOR"},
    )
    assert done.returncode == 0, done.stderr
    (written,) = (work / "scenarios").iterdir()
    assert written.name.startswith(f"tau-bench-task-.._.._.._.._{tmp_path.name}-outside_PWNED~") and written.suffix == ".yml"
    assert not list(tmp_path.parent.glob(f"{tmp_path.name}-outside*")) and not list(tmp_path.rglob("PWNED*"))
    assert load_scenario(written).slug == written.stem


def test_a_task_id_that_is_an_object_is_exit_2_with_its_place(tmp_path):
    runs = json.loads(SAMPLE.read_text())[:1]
    runs[0]["task_id"] = {"nested": True}
    bad = tmp_path / "runs.json"
    bad.write_text(json.dumps(runs, indent=2))
    result = run("--from", "tau-bench", bad, "-o", tmp_path / "out.jsonl", "--derive-scenarios", tmp_path / "scenarios")
    assert result.exit_code == 2
    line = next(i for i, t in enumerate(bad.read_text().splitlines(), 1) if '"task_id"' in t)
    assert result.stderr == f"{bad}:{line}:16: `task_id` must be an integer or a string, got an object\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.json"]


# --- the wrong --from names the format once ------------------------------------------------------


def test_the_wrong_format_is_named_once_not_per_item(tmp_path):
    runs = json.loads(SAMPLE.read_text()) * 20  # 80 runs: one error each, read as openai
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs, indent=2))
    result = run("--from", "openai", path)
    assert result.exit_code == 2
    assert result.stderr == (
        f"{path}:2:3: this looks like tau-bench trajectories, not OpenAI chat messages (`openai`): the format is `tau-bench`\n"
    )


def test_a_file_of_the_right_format_keeps_its_own_errors(tmp_path):
    """A tau2 run (`messages`, no tau2-only key) with a bad flag looks like OpenAI messages, but does not read as them."""
    run_ = {"id": "x", "messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "name": "f", "arguments": {}}]},
                                    {"role": "tool", "id": "c", "content": "ok", "error": "no"}]}
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(run_, indent=2))
    result = run("--from", "tau2", path)
    assert result.exit_code == 2
    assert result.stderr.endswith("`error` must be a boolean, got a string\n")


@pytest.mark.parametrize("depth, exit_code", [(250, 0), (300, 2)])
def test_a_value_too_deep_for_native_events_is_bad_input_at_its_line(tmp_path, depth, exit_code):
    value: object = 1
    for _ in range(depth):
        value = [value]
    tracker = {"sender_id": "a", "events": [{"event": "user", "text": "hi"}, {"event": "memory_set", "key": "k", "value": value}]}
    source = tmp_path / "trackers.jsonl"
    source.write_text('{"sender_id": "b", "events": [{"event": "user", "text": "hi"}]}\n' + json.dumps(tracker) + "\n")
    result = CliRunner().invoke(cli, ["import", "--from", "rasa-tracker", str(source), "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == exit_code, result.output
    if exit_code:
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.stderr == f"{source}:2:1: a value here is nested more than 254 levels deep: native events cannot hold it\n"
        assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("fmt, body", [
    ("rasa-tracker", b'{"sender_id": "a", "events": [{"event": "user"}]}\n{"sender_id": "b", "events": [' + b" " * 2000 + b"]}\n"),
    ("tau-bench", b"[" + b" " * 2000 + b"]"),
])
def test_a_record_past_the_bound_is_refused_on_any_line(tmp_path, monkeypatch, fmt, body):
    """Importers read within the same bound as the native reader: every line, and a document read whole."""
    from dialogcheck.events import bounds

    monkeypatch.setattr(bounds, "MAX_RECORD_BYTES", 1000)
    source = tmp_path / "input"
    source.write_bytes(body)
    result = CliRunner().invoke(cli, ["import", "--from", fmt, str(source)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "0 MiB, the most" in result.stderr and result.stderr.startswith(f"{source}:")


# --- an output that cannot be written is bad input, named, and leaves nothing ------------------------


def no_traceback(result) -> bool:
    return result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("under", ["out.jsonl", "sub/out.jsonl"])
def test_an_output_under_a_file_is_exit_2_naming_the_file(tmp_path, under):
    afile = tmp_path / "afile"
    afile.write_text("")
    out = afile / under
    result = run("--from", "tau-bench", SAMPLE, "-o", out)
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert result.stderr == f"{afile}:1:1: cannot write the output: expected a folder here, to hold {out}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and afile.read_text() == ""


def test_an_output_under_a_symlink_loop_is_exit_2_naming_the_link(tmp_path):
    (tmp_path / "loopA").symlink_to("loopB")
    (tmp_path / "loopB").symlink_to("loopA")
    out = tmp_path / "loopA" / "out.jsonl"
    result = run("--from", "tau-bench", SAMPLE, "-o", out, "--format", "json")
    assert result.exit_code == 2 and no_traceback(result), result.output
    error = json.loads(result.stdout)["error"]
    assert (error["message"], error["file"]) == (f"cannot write the output: expected a folder here, to hold {out}", str(tmp_path / "loopA"))


def test_an_output_named_by_a_symlink_loop_replaces_the_link_as_any_output_replaces_its_name(tmp_path):
    """The output is written beside its name and renamed over it (a link is replaced, never followed), so a loop is no matter."""
    (tmp_path / "loopA").symlink_to("loopB")
    (tmp_path / "loopB").symlink_to("loopA")
    result = run("--from", "tau-bench", SAMPLE, "-o", tmp_path / "loopA")
    assert result.exit_code == 0 and no_traceback(result), result.output
    assert not (tmp_path / "loopA").is_symlink()
    assert len(list(iter_conversation_file(tmp_path / "loopA"))) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loopA", "loopB"]


def test_bad_input_takes_back_the_folders_made_for_the_output(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "robot", "content": "hi"}]')
    result = run("--from", "openai", bad, "-o", tmp_path / "new" / "deeper" / "out.jsonl")
    assert result.exit_code == 2, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


# --- --derive-scenarios: every scenario and the output, or none of them ------------------------------


def test_a_folder_where_a_scenario_goes_stops_every_write(tmp_path):
    scenarios = tmp_path / "scenarios"
    (scenarios / "tau-bench-task-44.yml").mkdir(parents=True)
    out = tmp_path / "out.jsonl"
    result = run("--from", "tau-bench", SAMPLE, "-o", out, "--derive-scenarios", scenarios)
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert result.stderr == f"{scenarios / 'tau-bench-task-44.yml'}:1:1: cannot write the scenario: expected a file here, got a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenarios"]
    assert [p.name for p in scenarios.iterdir()] == ["tau-bench-task-44.yml"]


@pytest.mark.parametrize("under", ["scenarios", "sub/scenarios"])
def test_a_scenarios_folder_under_a_file_is_exit_2_naming_the_file(tmp_path, under):
    afile = tmp_path / "afile"
    afile.write_text("")
    folder = afile / under
    result = run("--from", "tau-bench", SAMPLE, "-o", tmp_path / "out.jsonl", "--derive-scenarios", folder)
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert result.stderr == f"{afile}:1:1: cannot write the scenarios: expected a folder here, to hold {folder}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("step", ["write", "commit"])
def test_a_scenario_that_cannot_be_written_takes_back_the_others_and_the_output(tmp_path, monkeypatch, step):
    """A full disk on the second scenario, as it is written or put in place: the first is taken back, the output never written."""
    from dialogcheck.results.atomic import AtomicFile

    real = getattr(AtomicFile, step)
    calls = []

    def second_fails(self, *args):
        calls.append(self.path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(self, *args)

    monkeypatch.setattr(AtomicFile, step, second_fails)
    out = tmp_path / "out.jsonl"
    out.write_text("previous content\n")
    scenarios = tmp_path / "new" / "scenarios"
    result = run("--from", "tau-bench", SAMPLE, "-o", out, "--derive-scenarios", scenarios)
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert result.stderr == f"{scenarios / 'tau-bench-task-44.yml'}:1:1: cannot write the scenario: No space left on device\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"] and out.read_text() == "previous content\n"


def test_a_whole_benchmark_file_with_a_scenario_place_taken_is_exit_2_as_a_real_command(tmp_path):
    import os
    import sys

    (tmp_path / "scen" / "tau-bench-task-3.yml").mkdir(parents=True)
    runs = json.loads(SAMPLE.read_text())
    for i, run_ in enumerate(runs):
        run_["task_id"] = i
    (tmp_path / "runs.json").write_text(json.dumps(runs))
    dialogcheck = Path(sys.executable).parent / "dialogcheck"
    done = inprocess.run(
        [dialogcheck, "import", "--from", "tau-bench", "runs.json", "-o", "conv.jsonl", "--derive-scenarios", "scen"],
        cwd=tmp_path, text=True, env={k: v for k, v in os.environ.items() if k != "FORCE_COLOR"},
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", "scen/tau-bench-task-3.yml:1:1: cannot write the scenario: expected a file here, got a folder\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.json", "scen"]
    assert [p.name for p in (tmp_path / "scen").iterdir()] == ["tau-bench-task-3.yml"]


def test_a_text_part_that_is_not_text_is_exit_2_not_an_empty_message(tmp_path):
    parts = tmp_path / "parts.json"
    parts.write_text('[{"role":"user","content":[{"type":"text","text":5}]},{"role":"assistant","content":"hello"}]\n')
    result = run("--from", "openai", parts)
    assert (result.exit_code, result.stdout) == (2, ""), result.output
    assert result.stderr == f"{parts}:1:50: `text` of content part 0 must be a string, got a number\n"


# --- -o - is stdout, as no -o is ----------------------------------------------------------------------


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_dash_output_is_stdout(tmp_path, monkeypatch, output_format):
    monkeypatch.chdir(tmp_path)
    with_dash = run("--from", "tau-bench", SAMPLE, "-o", "-", "--format", output_format)
    without = run("--from", "tau-bench", SAMPLE, "--format", output_format)
    assert with_dash.exit_code == 0, with_dash.output
    assert (with_dash.stdout, with_dash.stderr) == (without.stdout, without.stderr)
    assert len(with_dash.stdout.splitlines()) == (4 if output_format == "text" else 1)
    assert list(tmp_path.iterdir()) == []


def test_dash_output_with_derived_scenarios_as_a_real_command(tmp_path):
    import os
    import sys

    dialogcheck = Path(sys.executable).parent / "dialogcheck"
    done = inprocess.run(
        [dialogcheck, "import", "--from", "tau-bench", str(SAMPLE), "-o", "-", "--derive-scenarios", "scenarios"],
        cwd=tmp_path, text=True, env={k: v for k, v in os.environ.items() if k != "FORCE_COLOR"},
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["sender_id"] for line in done.stdout.splitlines()] == ["task-1-trial-0", "task-44-trial-0", "task-1-trial-1", "task-44-trial-1"]
    assert done.stderr.startswith("imported 4 conversations (") and " to stdout; 2 scenarios in scenarios" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["scenarios"]


def test_a_value_too_deep_to_write_is_refused_at_a_line_of_the_file(tmp_path):
    """A conversation with no place of its own is placed at the file's first line, never at line `None`."""
    deep: object = "x"
    for _ in range(300):
        deep = [deep]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": json.dumps({"a": deep})}}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    source = tmp_path / "deep.jsonl"
    source.write_text(json.dumps({"messages": messages}) + "\n")
    result = run("--from", "openai", source, "-o", tmp_path / "out.jsonl")
    assert result.exit_code == 2
    assert result.stderr == f"{source}:1:1: a value here is nested more than 254 levels deep: native events cannot hold it\n"
    assert not (tmp_path / "out.jsonl").exists()


def test_the_closing_line_prints_on_a_terminal(tmp_path):
    """On a terminal the line goes through rich: it must be the printer's own styled text."""
    source = tmp_path / "chat.jsonl"
    source.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    leader, follower = pty.openpty()
    dialogcheck = Path(sys.executable).parent / "dialogcheck"
    with open(follower, "wb", closefd=True) as terminal:
        done = subprocess.run([str(dialogcheck), "import", "--from", "openai", str(source), "-o", str(tmp_path / "out.jsonl")],
                              stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.PIPE, timeout=120, check=False)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: all of it was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0, done.stderr.decode()
    assert b"imported 1 conversation (2 events) from " in shown
