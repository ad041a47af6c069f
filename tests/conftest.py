"""Shared builders: conversations from short event helpers, checks from YAML text."""

from __future__ import annotations

import compileall
import os
import signal
import socket
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from dialogcheck._fields import Problems
from dialogcheck._yaml import parse_yaml
from dialogcheck.errors import LoadError
from dialogcheck.events.parse import conversation_from_dicts
from dialogcheck.scenario.load import parse_assertion
from tests.slow import is_slow

#: No plain progress lines on the stderr of the commands tests run, however slow the machine (the tests of
#: progress lines set their own interval).
os.environ.setdefault("DIALOGCHECK_PROGRESS_INTERVAL", "3600")

#: Hypothesis, for the whole suite, judges no example by how fast this machine is: no deadline per example, and no
#: health check that times the generating of inputs (`too_slow`), both of which fail on a loaded machine.
MACHINE_TIMED = (HealthCheck.too_slow,)
settings.register_profile("dialogcheck", deadline=None, suppress_health_check=MACHINE_TIMED)
settings.load_profile("dialogcheck")


def suppressed(*checks: HealthCheck) -> list[HealthCheck]:
    """The health checks a test's own `@settings(suppress_health_check=...)` leaves out: `checks` and the suite's
    `MACHINE_TIMED` (a test's own list replaces the profile's, it does not add to it)."""
    return [*MACHINE_TIMED, *checks]


#: What makes rich colour its output or take a pipe for a terminal, whatever the developer's shell sets.
FORCING_OUTPUT = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def plain_env(*drop: str, **extra: str) -> dict[str, str]:
    """This environment for a command whose output is judged as a pipe sees it: `FORCING_OUTPUT` and `drop`
    left out, `extra` added."""
    left_out = {*FORCING_OUTPUT, *drop}
    return {**{k: v for k, v in os.environ.items() if k not in left_out}, **extra}


@pytest.fixture
def plain_output(monkeypatch):
    """Output of commands run in this process is judged as a pipe sees it (`FORCING_OUTPUT` unset)."""
    for name in FORCING_OUTPUT:
        monkeypatch.delenv(name, raising=False)


REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "card_replace"


def pytest_configure(config: pytest.Config) -> None:
    """Compile dialogcheck's modules once, before any test runs (in the controller only, under xdist).

    Hundreds of tests run the installed `dialogcheck` in a subprocess. From a fresh checkout, with
    `PYTHONDONTWRITEBYTECODE` set (as on the machines this suite runs on), each of them would compile every module it imports again,
    about 0.2 s a process; an installed release carries its bytecode.
    """
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(REPO / "src" / "dialogcheck", quiet=1)
    answer_interrupts()


def answer_interrupts() -> None:
    """Let the commands the tests start answer SIGINT, also when the suite was started where it is ignored.

    A shell without job control starts a background command (`pytest ... &`, a CI step) with SIGINT ignored, and
    every process started from it inherits that: the tests that interrupt a batch would see it run on. A handler of
    this process's own is reset to the default in each command it starts, as on a terminal.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def user(text: str, **extra) -> dict:
    return {"event": "user", "text": text, **extra}


def bot(text: str | None = "", utter: str | None = None, buttons: list | None = None, **extra) -> dict:
    event = {"event": "bot", "text": text, **extra}
    if utter is not None:
        event["metadata"] = {"utter_action": utter}
    if buttons is not None:
        event["data"] = {"buttons": buttons}
    return event


def tool(name: str, arguments: dict | None = None, source: str = "local", **extra) -> dict:
    event = {"event": "tool_executed", "tool_name": name, "arguments": arguments or {}, "source": source, **extra}
    return event


def ev(kind: str, **fields) -> dict:
    return {"event": kind, **fields}


def conv(*events: dict):
    return conversation_from_dicts(list(events), source="test")


def check_from_yaml(text: str):
    """Parse one assertion item written as YAML (`- key: ...` or `key: ...`); raise LoadError on problems."""
    node = parse_yaml(textwrap.dedent(text), "t.yml")
    if hasattr(node, "items"):
        node = node.items[0]
    problems = Problems()
    check = parse_assertion(node, problems, 1)
    if problems:
        raise LoadError(problems.items).in_file("t.yml")
    assert check is not None
    return check


def assertion_error(text: str) -> str:
    """The full `path:line:col: message` text of the load error an assertion raises."""
    with pytest.raises(LoadError) as info:
        check_from_yaml(text)
    return str(info.value)


class FakeJudge:
    """A judge that answers from a script: a verdict, or an exception to raise. Records every request."""

    def __init__(self, verdict=None, error=None, by_criterion=None):
        self.verdict, self.error, self.by_criterion = verdict, error, by_criterion or {}
        self.requests = []

    async def judge(self, conversation, request):
        self.requests.append((conversation, request))
        if self.error is not None:
            raise self.error
        return self.by_criterion.get(request.criterion, self.verdict)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` the tests `tests/slow.py` lists, so `-m "not slow"` is the quick tier of the edit loop."""
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
