"""`dialogcheck check` reads each input once: a pipe, a FIFO, `/dev/stdin`, `-` and process substitution give
what the same bytes give from a file.

Every run is the installed command in a real subprocess fed by a real pipe (or FIFO). The batch is
twenty conversations whose *first* fails: reading the input once to tell its format and again to
read it used to drop that first conversation, so the pipe gave 19 passes and exit 0 where the file
gave exit 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.conftest import plain_env
from tests.engines.batches import SCENARIO, example_events, tracker_lines
from tests.stats_helpers import verdict_counts

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
CHECK = [str(DIALOGCHECK), "check", "--no-judge", "--scenario", str(SCENARIO)]


def _env() -> dict[str, str]:
    return plain_env()


def batch_bytes(count: int = 20) -> bytes:
    """`count` conversations, the first of them failing the scenario (it orders without asking), the rest passing."""
    failing, passing = example_events()[2], example_events()[3]  # damaged_card_no_confirmation, damaged_card_ok
    lines = [json.dumps({"sender_id": "c0", "events": failing})]
    lines += [json.dumps({"sender_id": f"c{i}", "events": passing}) for i in range(1, count)]
    return ("\n".join(lines) + "\n").encode()


def piped(args: list[str], data: bytes, *, shell_input: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`cat FILE | dialogcheck ...`: the command reads a real pipe, written by another process."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as source:
        source.write(data)
        source.flush()
        cat = subprocess.Popen(["cat", source.name], stdout=subprocess.PIPE)
        try:
            return subprocess.run(args, stdin=cat.stdout, capture_output=True, env=env or _env(), timeout=120, check=False)
        finally:
            cat.stdout.close()
            cat.wait()


@pytest.fixture
def batch_file(tmp_path) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_bytes(batch_bytes())
    return path


@pytest.mark.parametrize("name", ["/dev/stdin", "-"])
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_pipe_gives_every_conversation_the_file_gives(batch_file, name, output_format):
    from_file = subprocess.run([*CHECK, "--format", output_format, str(batch_file)], capture_output=True, env=_env(), check=False)
    from_pipe = piped([*CHECK, "--format", output_format, name], batch_file.read_bytes())
    assert from_file.returncode == from_pipe.returncode == 1, from_pipe.stderr
    shown = "<stdin>" if name == "-" else name
    assert from_pipe.stdout == from_file.stdout.replace(str(batch_file).encode(), shown.encode())
    if output_format == "json":
        document = json.loads(from_pipe.stdout)
        assert verdict_counts(document["summary"]) == {"conversations": 20, "passed": 19, "failed": 1, "errored": 0}
        assert document["conversations"][0]["source"] == f"{shown}#c0"


def test_process_substitution_and_a_fifo_are_read_once(batch_file, tmp_path):
    substituted = subprocess.run(
        ["bash", "-c", '"$0" check --no-judge --scenario "$1" <(cat "$2")', str(DIALOGCHECK), str(SCENARIO), str(batch_file)],
        capture_output=True, env=_env(), check=False,
    )
    assert substituted.returncode == 1, substituted.stderr
    assert substituted.stdout.endswith(b"\n20 conversations: 19 passed, 1 failed, 0 errored\nwhose fault: 1 agent\n")

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(batch_file.read_bytes()))
    writer.start()
    done = subprocess.run([*CHECK, "--format", "json", str(fifo)], capture_output=True, env=_env(), timeout=300, check=False)
    writer.join()
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["summary"]["conversations"] == 20


def test_every_container_and_an_importer_read_from_a_pipe(tmp_path):
    events = "".join(json.dumps(event) + "\n" for event in example_events()[3]).encode()  # one conversation, one event a line
    tracker = json.dumps({"sender_id": "t", "events": example_events()[3]}, indent=2).encode()  # a pretty-printed document
    for data in (events, tracker):
        done = piped([*CHECK, "--format", "json", "-"], data)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["source"] == "<stdin>"
    tau = Path(__file__).parents[1] / "importers" / "data" / "tau_bench_airline_sample.json"
    own_temp = tmp_path / "temp"  # this command's own temporary folder: other tests' commands may run beside it
    own_temp.mkdir()
    imported = piped([*CHECK, "--input-format", "tau-bench", "--format", "json", "-"], tau.read_bytes(), env=plain_env(TMPDIR=str(own_temp)))
    from_file = subprocess.run([*CHECK, "--input-format", "tau-bench", "--format", "json", str(tau)], capture_output=True, env=_env(), check=False)
    assert imported.returncode == from_file.returncode == 1
    assert imported.stdout == from_file.stdout.replace(str(tau).encode(), b"<stdin>")
    assert list(own_temp.iterdir()) == []  # the copy is gone


def test_a_bad_record_in_a_pipe_is_reported_as_in_the_file(batch_file):
    lines = batch_file.read_bytes().splitlines(keepends=True)
    lines[12] = lines[12][:-30] + b"\n"
    broken = b"".join(lines)
    batch_file.write_bytes(broken)
    from_file = subprocess.run([*CHECK, str(batch_file)], capture_output=True, env=_env(), check=False)
    from_pipe = piped([*CHECK, "-"], broken)
    assert from_file.returncode == from_pipe.returncode == 2
    assert from_pipe.stdout == from_file.stdout == b""  # small: read whole before anything is judged
    assert from_pipe.stderr == from_file.stderr.replace(str(batch_file).encode(), b"<stdin>")
    assert from_pipe.stderr.startswith(b"<stdin>:13:")


def test_standard_input_given_twice_is_bad_input(batch_file):
    done = piped([*CHECK, "-", "-"], batch_file.read_bytes())
    assert done.returncode == 2
    assert done.stderr == b"<stdin>:1:1: standard input is given twice: it can be read once only\n"


def test_a_pipe_with_jobs_and_stream_gives_the_bytes_of_the_file(tmp_path):
    """A pipe is cut into blocks of lines as it is read, and workers take them as they take a file's chunks."""
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(tracker_lines(1_000)) + "\n")  # about 3 MB: over the 2 MB below which one process works
    from_file = subprocess.run([*CHECK, "--jobs", "2", "--format", "json", str(path)], capture_output=True, env=_env(), check=False)
    for extra in ([], ["--stream"]):
        from_pipe = piped([*CHECK, *extra, "--jobs", "2", "--format", "json", "-"], path.read_bytes())
        assert from_pipe.returncode == from_file.returncode == 1, from_pipe.stderr
        assert from_pipe.stdout == from_file.stdout.replace(str(path).encode(), b"<stdin>")


def test_a_pipe_is_read_ahead_only_up_to_the_streaming_bound(monkeypatch):
    """A pipe's size is known only once read: it is planned ahead while it holds less than the bound, and
    streamed past it, as a file of its size would be."""
    from dialogcheck.checking import _read_ahead
    from dialogcheck.engines.chunks import LineBlock

    taken = []

    def blocks():
        for i in range(10):
            taken.append(i)
            yield LineBlock("<stdin>", i + 1, b"x" * 100)

    chunks, held, complete = _read_ahead(blocks(), 1_000)
    assert (held, complete, len(taken)) == (1_000, True, 10)
    assert len(list(chunks)) == 10
    taken.clear()
    chunks, held, complete = _read_ahead(blocks(), 250)
    assert (held, complete, len(taken)) == (300, False, 3)  # stopped at the first block past the bound
    assert [c.first_line for c in chunks] == list(range(1, 11)) and len(taken) == 10  # the rest, as it is checked
