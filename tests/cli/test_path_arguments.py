"""Every path a command takes that no system call can take (a NUL, a name over 255 bytes, a path over 4,095
bytes) is the user's mistake: exit 2, the argument and the start of the path named, no traceback; in JSON too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
SOP = str(EXAMPLE / "sops" / "replace_card.yml")
CONVERSATIONS = str(EXAMPLE / "conversations")
LONG_NAME = "n" * 256
BAD = {
    "NUL": ("a\x00b.yml", "a path cannot hold a NUL character (\\x00): a\\x00b.yml"),
    "long name": (f"eval/{LONG_NAME}/x.yml", f"a name in this path is 256 bytes long, and the system takes at most 255 a name: eval/{LONG_NAME[:114]}…"),
    "long path": ("/".join(["p" * 200] * 21), "this path is 4,220 bytes long, and the system takes at most 4,095: " + "p" * 119 + "…"),
}
#: Each command with the argument that takes the bad path (`{}`) and how click names it.
COMMANDS = {
    "validate": (["validate", "{}"], "'PATHS...'"),
    "check": (["check", "--sop", SOP, "{}"], "'CONVERSATIONS...'"),
    "check --sop": (["check", "--sop", "{}", CONVERSATIONS], "'--sop'"),
    "check --html": (["check", "--sop", SOP, CONVERSATIONS, "--no-judge", "--html", "{}"], "'--html'"),
    "report": (["report", "{}"], "'RESULTS_DIR'"),
    "compare": (["compare", "{}", "{}"], "'BASE'"),
    "import": (["import", "{}"], "'FILE'"),
    "import -o": (["import", CONVERSATIONS + "/sop_follows_procedure.jsonl", "-o", "{}"], "'-o' / '--output'"),
    "run": (["run", "{}"], "'[PATHS]...'"),
    "run --resume": (["run", "--resume", "{}"], "'--resume'"),
    "calibrate": (["calibrate", "--scenario", "{}", "--labels", "x.csv"], "'--scenario'"),
    "environment serve": (["environment", "serve", "{}"], "'FILE'"),
}


@pytest.mark.parametrize("bad", BAD, ids=list(BAD))
@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_a_path_no_system_call_takes_is_a_usage_error(command, bad, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args, named = COMMANDS[command]
    path, said = BAD[bad]
    result = CliRunner().invoke(cli, [path if a == "{}" else a for a in args])
    assert result.exit_code == 2, result.output
    assert f"Error: Invalid value for {named}: {said}\n" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_installed_command_says_so_in_json_too(tmp_path):
    for command in (["validate"], ["report"], ["compare", "x"], ["check", "--sop", SOP]):
        done = subprocess.run([str(DIALOGCHECK), *command, LONG_NAME, "--format", "json"], cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 2, (command, done.stderr)
        assert "Traceback" not in done.stderr
        message = json.loads(done.stdout)["error"]["message"]
        assert "a name in this path is 256 bytes long, and the system takes at most 255 a name: nnn" in message, command
