"""`check` and `run` text at scale: a batch shows its failures (at most --max-failures of them) and the per-check
table, one conversation shows all of it, and progress goes to stderr: a bar on a terminal (a file name on it plain and
escaped), a line at intervals elsewhere. The cases on a terminal are the installed command in a real subprocess on a
pseudo-terminal; the others run the command in process (`tests/inprocess.py`), stdout and stderr pipes."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess
from tests.conftest import EXAMPLE, plain_env
from tests.engines.batches import SCENARIO, write_batch

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
DAMAGED = EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"
CONVERSATIONS = EXAMPLE / "conversations"
FAILING = 6  # of the 8 example conversations, against DAMAGED


def command(*args, **env) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], text=True, env=plain_env("NO_COLOR", **env), timeout=300)


def blocks(stdout: str) -> list[str]:
    """The conversation blocks of a text output (each begins with its source and ends with its verdict)."""
    return [block for block in stdout.split("\n\n") if "\n  verdict: " in block]


def test_a_batch_shows_only_its_failing_checks_then_the_table():
    done = command("check", "--no-judge", "--scenario", DAMAGED, CONVERSATIONS)
    assert done.returncode == 1, done.stderr
    shown = blocks(done.stdout)
    assert len(shown) == FAILING  # the two passing conversations are not shown
    assert all("  PASS  " not in block and "  SKIP  " not in block for block in shown)
    assert all("  FAIL  " in block for block in shown)
    table = done.stdout[done.stdout.index("checks, most failures first:\n"):]
    assert "  #7 memory_was_cleared card_replace.draft_order_id  e.g. " in table.splitlines()[2]
    assert done.stdout.endswith("8 conversations: 2 passed, 6 failed, 0 errored\nwhose fault: 6 agent\n1 LLM-judged check per conversation skipped (--no-judge)\n")
    assert "more failing" not in done.stdout


@pytest.mark.parametrize("most", [0, 2, 5])
def test_max_failures_caps_the_conversations_shown_and_says_how_many_more(most):
    done = command("check", "--no-judge", "--max-failures", most, "--scenario", DAMAGED, CONVERSATIONS)
    assert len(blocks(done.stdout)) == most
    assert f"\n{FAILING - most:,} more failing or errored: see --format json, --output or --html\n" in done.stdout
    assert "checks, most failures first:" in done.stdout  # the table counts every conversation whatever is shown


def test_show_all_shows_every_check_of_every_conversation():
    done = command("check", "--no-judge", "--show", "all", "--max-failures", "1", "--scenario", DAMAGED, CONVERSATIONS)
    shown = blocks(done.stdout)
    assert len(shown) == 8 and sum("  PASS  " in block for block in shown) == 8
    assert "more failing" not in done.stdout and "checks, most failures first:" in done.stdout


def test_one_failing_conversation_is_shown_whole():
    done = command("check", "--no-judge", "--max-failures", "0", "--scenario", DAMAGED, CONVERSATIONS / "damaged_card_express.jsonl")
    assert done.returncode == 1
    (block,) = blocks(done.stdout)
    assert "  PASS  skill_activated card_replace" in block and "  FAIL  tool_executed order_replacement" in block
    assert "checks, most failures first" not in done.stdout and "conversations:" not in done.stdout


def test_a_terminal_gets_the_same_text_in_colour():
    piped = command("check", "--no-judge", "--max-failures", "3", "--scenario", DAMAGED, CONVERSATIONS)
    styled = command("check", "--no-judge", "--max-failures", "3", "--scenario", DAMAGED, CONVERSATIONS, FORCE_COLOR="1")
    assert "\x1b[" in styled.stdout
    from rich.text import Text

    assert Text.from_ansi(styled.stdout).plain == piped.stdout


def test_run_groups_the_same_failure_of_repeated_runs(tmp_path):
    done = command("run", "--no-judge", "--runs", "3", "--results", tmp_path / "results", EXAMPLE / "eval" / "scenarios" / "run_stolen_card.yml")
    assert done.returncode == 1, done.stderr
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL  ")]
    assert len(fails) == 2 and all(line.startswith("FAIL  run_stolen_card runs 1-3: ") for line in fails)
    assert "  run_stolen_card: #4 sequencing" in done.stdout  # the table, by scenario
    assert (tmp_path / "results" / "summary.txt").read_text().count("FAIL  run_stolen_card runs 1-3: ") == 2
    capped = command("report", "--max-failures", "1", tmp_path / "results")
    assert sum(line.startswith("FAIL  ") for line in capped.stdout.splitlines()) == 1
    assert "1 more failure: see summary.json, report.html or `dialogcheck report --show all`" in capped.stdout
    every = command("report", "--show", "all", tmp_path / "results")
    assert every.stdout.count("\nrun_stolen_card run ") == 3 and "  PASS  " in every.stdout


# -- progress ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    return write_batch(tmp_path_factory.mktemp("progress") / "batch.jsonl", 1_200)


def test_without_a_terminal_progress_is_a_plain_line_at_intervals(big):
    done = command("check", "--no-judge", "--format", "json", "--jobs", "1", "--scenario", SCENARIO, big, DIALOGCHECK_PROGRESS_INTERVAL="0.05")
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("dialogcheck: ") and " conversations done (" in line for line in lines)
    assert "passed" in lines[-1] and "failed" in lines[-1]
    quiet = command("check", "--no-judge", "--format", "json", "--jobs", "1", "--scenario", SCENARIO, big)
    assert quiet.stderr == "" and quiet.stdout == done.stdout  # the default interval (here an hour) never came


def test_run_progress_lines_count_the_planned_runs(tmp_path):
    done = command("run", "--no-judge", "--runs", "10", "--results", tmp_path / "r", EXAMPLE, DIALOGCHECK_PROGRESS_INTERVAL="0.05")
    lines = [line for line in done.stderr.splitlines() if line.startswith("dialogcheck: ")]
    assert lines and all(" of 140 runs done (" in line for line in lines)


def test_on_a_terminal_progress_is_a_bar_on_stderr(big, tmp_path):
    """stderr a pseudo-terminal, stdout a file: the bar goes to the terminal, the results stay clean."""
    leader, follower = pty.openpty()
    clean = plain_env("NO_COLOR")
    out = tmp_path / "stdout.json"
    with out.open("wb") as stdout_file:
        process = subprocess.Popen([str(DIALOGCHECK), "check", "--no-judge", "--format", "json", "--jobs", "1", "--scenario", str(SCENARIO), str(big)],
                                   stdout=stdout_file, stderr=follower, env=clean)
    os.close(follower)
    seen = read_terminal(leader)
    assert process.wait(60) == 1
    os.close(leader)
    stdout = out.read_bytes()
    assert b"conversations" in seen and b"passed" in seen  # the bar's count and tally
    assert stdout.startswith(b'{"conversations": [') and b"dialogcheck:" not in stdout


def read_terminal(leader: int) -> bytes:
    """What a command wrote to the pseudo-terminal whose leader side is `leader`, until it closed its side."""
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            piece = os.read(leader, 65536)
        except OSError:  # the command ended and closed its side
            break
        if not piece:
            break
        seen += piece
    return seen


#: Scenario and conversation file names that would drive a terminal: rich markup making a hyperlink, and raw escapes
#: (an OSC 8 hyperlink, a colour, a right-to-left override).
HOSTILE_NAMES = {
    "markup": "[link=https:evil.example]pwn[reverse]MARK",
    "escapes": "a\x1b]8;;http:evil.example\x1b\\CLICK\x1b]8;;\x1b\\\x1b[31mRED\u202eLMTH",
}
ECHO_AGENT = "def respond(conversation_id, text, initial_slots=None):\n    return {'messages': [{'text': 'hi'}], 'events': []}\n"


def on_a_terminal(*args) -> tuple[int, bytes]:
    """The command with stdout and stderr on one pseudo-terminal, as a user sees it: its exit code and every byte shown."""
    leader, follower = pty.openpty()
    env = plain_env("NO_COLOR", TERM="xterm-256color", COLUMNS="250")
    process = subprocess.Popen([str(DIALOGCHECK), *map(str, args)], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    seen = read_terminal(leader)
    code = process.wait(60)
    os.close(leader)
    return code, seen


def assert_drives_nothing(seen: bytes) -> None:
    assert b"\x1b]8;" not in seen  # no hyperlink, from markup or raw
    assert b"\x1b[31mRED" not in seen and b"\x1b[7m" not in seen and "\u202e".encode() not in seen


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_on_a_terminal_the_run_bar_shows_a_scenario_s_file_name_as_escaped_plain_text(tmp_path, name):
    from dialogcheck._shown import visible

    (tmp_path / "eval" / "scenarios").mkdir(parents=True)
    (tmp_path / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (tmp_path / "agent.py").write_text(ECHO_AGENT)
    (tmp_path / "eval" / "scenarios" / f"{name}.yml").write_text("scenario:\n  name: ok\n  simulation_context: c\n  script: [hello]\n")
    code, seen = on_a_terminal("run", "--no-judge", "--results", tmp_path / "r", tmp_path)
    assert code == 0, seen[-2000:]
    assert_drives_nothing(seen)
    assert seen.count(visible(name).encode()) >= 2, seen[-2000:]  # on the bar as on the summary line


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_on_a_terminal_check_shows_a_conversation_s_file_name_as_escaped_plain_text(tmp_path, name):
    """The check bar names no file (it says `checking`); what names one is escaped."""
    from dialogcheck._shown import visible

    conversation = tmp_path / f"{name}.jsonl"
    conversation.write_text('{"event": "user", "text": "hello"}\n{"event": "bot", "text": "hi"}\n')
    code, seen = on_a_terminal("check", "--no-judge", "--scenario", SCENARIO, conversation)
    assert code in (0, 1), seen[-2000:]
    assert_drives_nothing(seen)
    assert visible(name).encode() in seen


def test_check_output_and_report_of_its_folder_print_the_same_table(tmp_path):
    done = command("check", "--no-judge", "--output", tmp_path / "out", "--scenario", DAMAGED, CONVERSATIONS)
    again = command("report", tmp_path / "out")
    assert done.returncode == again.returncode == 1
    table = done.stdout[: done.stdout.index("\n8 conversations:")]
    assert table.startswith("per scenario:\ncard_replace_damaged             2/8 passed")  # keyed by slug, as `run`'s rows
    assert "\nchecks, most failures first:\n" in table and "  #7 memory_was_cleared card_replace.draft_order_id" in table
    assert again.stdout.startswith(table) and "results: 8 shards in " in again.stdout  # a shard per file


def screen_of(seen: bytes) -> list[str]:
    """The lines a terminal shows after `seen`: carriage return, line feed, cursor up (`ESC[nA`) and erase line
    (`ESC[2K`, `ESC[K`) are followed; other escapes (colours, the cursor's visibility) change no character."""
    import re

    lines, row, col = [[]], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]", seen.decode("utf-8", "replace")):
        if token == "\r":
            col = 0
        elif token == "\n":
            row += 1
            lines += [[] for _ in range(row + 1 - len(lines))]
        elif token.startswith("\x1b["):
            if token[-1] == "A":
                row = max(row - int(token[2:-1] or 1), 0)
            elif token[-1] == "K":
                lines[row] = lines[row][:col] if token[2:-1] in ("", "0") else []
        else:
            line = lines[row]
            line += [" "] * (col + 1 - len(line))
            line[col] = token
            col += 1
    return ["".join(line).rstrip() for line in lines]


def test_on_a_terminal_check_s_failure_lines_start_on_a_clean_line_not_after_its_bar(tmp_path):
    sample = Path(__file__).parents[1] / "importers" / "data" / "tau_bench_airline_sample.json"
    imported = command("import", "--from", "tau-bench", sample, "-o", tmp_path / "runs.jsonl", "--derive-scenarios", tmp_path / "scenarios")
    assert imported.returncode == 0, imported.stderr
    code, seen = on_a_terminal("check", "--no-judge", "--scenario", tmp_path / "scenarios", "--pair", r"task-(\d+)", tmp_path / "runs.jsonl")
    assert code == 1, seen[-2000:]
    screen = screen_of(seen)
    sources = [line for line in screen if "runs.jsonl#task-" in line and "tau-bench airline task" in line]
    assert len(sources) == 2 and all(line.startswith(str(tmp_path / "runs.jsonl#task-")) for line in sources), screen
    assert not any("checking" in line or "conversations 0:00" in line for line in screen), screen  # the bar left no trace
    assert screen[-3:-1] == ["4 conversations: 2 passed, 2 failed, 0 errored", "whose fault: 2 agent"], screen
