"""What `--engine ray` refuses before any work starts, each a usage error with exit code 2 and no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.engines.batches import SCENARIO, write_batch

#: Runs the CLI in a fresh Python where `import ray` fails, as it does without the extra installed.
WITHOUT_RAY = """
import sys
sys.modules["ray"] = None
sys.argv = ["dialogcheck", *sys.argv[1:]]
from dialogcheck._cli.main import main
main()
"""


def run_without_ray(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return subprocess.run([sys.executable, "-c", WITHOUT_RAY, "check", *map(str, args)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_without_ray_installed_the_error_says_how_to_install_it(tmp_path):
    batch = write_batch(tmp_path / "batch.jsonl", 3)
    done = run_without_ray("--engine", "ray", "--no-judge", "--output", tmp_path / "out", "--scenario", SCENARIO, batch)
    assert done.returncode == 2
    assert "Error: --engine ray needs Ray: pip install 'dialogcheck[ray]'" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "--engine ray writes its results to a folder: give --output DIR"),
        (("--output", "OUT", "--input-format", "openai"), "convert with `dialogcheck import` first"),
        (("--output", "OUT", "--junit", "j.xml"), "--junit and --html are written by --engine local"),
    ],
)
def test_options_ray_cannot_take(tmp_path, extra, message):
    batch = write_batch(tmp_path / "batch.jsonl", 3)
    extra = tuple(str(tmp_path / "out") if e == "OUT" else e for e in extra)
    done = run_without_ray("--engine", "ray", "--no-judge", *extra, "--scenario", SCENARIO, batch)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_ray_refuses_llm_judged_checks_when_a_judge_is_configured(tmp_path):
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "conftest.yml").write_text("evaluation:\n  llm: {provider: openai_compatible, base_url: 'http://127.0.0.1:9/v1', model: m}\n")
    scenario = tmp_path / "eval" / "judged.yml"
    scenario.write_text("scenario:\n  name: J\n  simulation_context: c\n  goals:\n    criteria: [The agent is polite]\n")
    batch = write_batch(tmp_path / "batch.jsonl", 3)
    done = run_without_ray("--engine", "ray", "--output", tmp_path / "out", "--scenario", scenario, batch)
    assert done.returncode == 2
    assert "--engine ray runs the deterministic checks: add --no-judge" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_output_folder_that_is_not_empty_is_refused_as_json_too(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("keep me")
    batch = write_batch(tmp_path / "batch.jsonl", 3)
    done = run_without_ray("--output", out, "--format", "json", "--no-judge", "--scenario", SCENARIO, batch)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["message"] == "the output folder is not empty: give a new or empty folder"
    assert (out / "old.txt").read_text() == "keep me"


def test_an_unreachable_ray_address_is_a_quick_clear_error(tmp_path):
    import socket

    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    batch = write_batch(tmp_path / "batch.jsonl", 3)
    dialogcheck = Path(sys.executable).parent / "dialogcheck"
    done = subprocess.run(
        [str(dialogcheck), "check", "--engine", "ray", "--ray-address", f"127.0.0.1:{port}",
         "--output", str(tmp_path / "out"), "--no-judge", "--scenario", str(SCENARIO), str(batch)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}: Connection refused" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("size", ["inf", "nan", "0", "2000000"])
def test_a_chunk_size_that_is_no_size_is_a_usage_error(tmp_path, size):
    batch = write_batch(tmp_path / "batch.jsonl", 3)
    done = run_without_ray("--chunk-mb", size, "--no-judge", "--scenario", SCENARIO, batch)
    assert done.returncode == 2
    assert "Invalid value for '--chunk-mb'" in done.stderr and "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("stream", [(), ("--stream",)])
def test_an_output_folder_that_cannot_be_made_is_bad_input_and_leaves_nothing(tmp_path, stream):
    (tmp_path / "a_file").write_text("in the way")
    out = tmp_path / "a_file" / "out"
    batch = write_batch(tmp_path / "batch.jsonl", 3)
    done = run_without_ray(*stream, "--output", out, "--no-judge", "--scenario", SCENARIO, batch)
    assert done.returncode == 2
    assert done.stderr.startswith(f"{out}") and "cannot write the output folder: Not a directory" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert (tmp_path / "a_file").read_text() == "in the way"
