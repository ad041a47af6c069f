"""With --safe-env no environment variable's value leaves the process unless --allow-env names it: `api_key_env` included.

A config may name `api_key_env: GITHUB_TOKEN` and a `base_url` of its choosing; the
provider SDKs read OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OPENAI_ORG_ID,
*_CUSTOM_HEADERS (and more) by themselves. Each case runs `dialogcheck` (in process,
`tests/inprocess.py`, the whole environment its own) against a raw-socket judge on loopback that records every byte it receives,
with a planted token in the environment, and looks for the token in what arrived: never
under --safe-env, and only when --allow-env names its variable. A provider's own key goes
to the provider's own API only; that API is reached through a proxy address nothing
listens on, so the test needs no network and nothing leaves the machine.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests import inprocess
from tests.conftest import closed_port
from tests.llm.conftest import anthropic_body, judge_text, openai_body
from tests.reliability.peers import FaultServer, Seen, clean_env, ok

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
AGENT = "def respond(conversation_id, text, initial_slots=None):\n    return {'messages': [{'text': 'Hello'}], 'events': []}\n"
SCENARIO = "scenario:\n  name: Hello\n  simulation_context: say hi\n  script: [hi]\n  goals:\n    criteria: [The agent greets]\n"


def judge_answer(request: Seen):
    verdict = judge_text(request.body)
    return ok(anthropic_body(verdict) if request.path.endswith("/messages") else openai_body(verdict))


@pytest.fixture
def judge():
    server = FaultServer(judge_answer)
    yield server
    server.stop()


@pytest.fixture
def trap():
    """A second recorder, where an address taken from the environment would lead."""
    server = FaultServer(judge_answer)
    yield server
    server.stop()


@pytest.fixture
def token() -> str:
    return f"ghp_planted{uuid.uuid4().hex}"




def project(root: Path, llm: str) -> Path:
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text(f"agent: {{type: python, callable: 'agent:respond'}}\nevaluation:\n  llm: {llm}\n")
    (root / "eval" / "scenarios" / "hello.yml").write_text(SCENARIO)
    (root / "agent.py").write_text(AGENT)
    return root / "eval" / "conftest.yml"


def column(config: Path, line: int, text: str) -> int:
    """Where `text` starts on a line of the config (the judge's port decides it)."""
    return config.read_text().splitlines()[line - 1].index(text) + 1


def dialogcheck(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    # Any https address (the providers' own APIs) goes to a proxy nobody listens on: refused at once, nothing leaves.
    environment = clean_env(HTTPS_PROXY=f"http://127.0.0.1:{closed_port()}", **env)
    return inprocess.run([DIALOGCHECK, *args], cwd=tmp_path, env=environment, text=True, timeout=90)


def run(tmp_path: Path, root: Path, *flags: str, **env: str) -> subprocess.CompletedProcess:
    return dialogcheck(tmp_path, "run", str(root), "--results", str(tmp_path / f"results-{uuid.uuid4().hex[:8]}"), "--no-cache", *flags, **env)


def received(*servers: FaultServer) -> bytes:
    return b"".join(seen.raw for server in servers for seen in server.seen)


def test_api_key_env_naming_any_variable_is_a_load_error_under_safe_env(tmp_path, judge, token):
    config = project(tmp_path / "p", f"{{provider: openai_compatible, base_url: '{judge.url}/v1', model: m, api_key_env: GITHUB_TOKEN}}")
    expected = (
        f"{config}:3:{column(config, 3, 'GITHUB_TOKEN')}: `api_key_env: GITHUB_TOKEN` would send the value of $GITHUB_TOKEN to {judge.url}/v1, and --safe-env lets"
        " no environment variable leave the process unless --allow-env names it: pass --allow-env GITHUB_TOKEN to send it there"
    )
    for command in (
        ["validate", str(config)],
        ["check", "--scenario", str(tmp_path / "p" / "eval" / "scenarios" / "hello.yml"), str(tmp_path / "p" / "agent.py")],
        ["run", str(tmp_path / "p"), "--results", str(tmp_path / "r")],
    ):
        done = dialogcheck(tmp_path, *command, "--safe-env", GITHUB_TOKEN=token)
        assert done.returncode == 2, done.stdout + done.stderr
        assert expected in (done.stdout if command[0] == "validate" else done.stderr).splitlines()
        assert token not in done.stdout + done.stderr
    assert judge.seen == [] and not (tmp_path / "r").exists()


def test_the_token_arrives_only_when_allow_env_names_it(tmp_path, judge, token):
    project(tmp_path / "p", f"{{provider: openai_compatible, base_url: '{judge.url}/v1', model: m, api_key_env: GITHUB_TOKEN, max_retries: 0}}")
    allowed = run(tmp_path, tmp_path / "p", "--safe-env", "--allow-env", "GITHUB_TOKEN", GITHUB_TOKEN=token)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert f"authorization: Bearer {token}".encode() in received(judge)
    unsafe = run(tmp_path, tmp_path / "p", GITHUB_TOKEN=token)  # without --safe-env: as before
    assert unsafe.returncode == 0, unsafe.stdout + unsafe.stderr
    assert len(judge.seen) == 2


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai_compatible", "OPENAI_API_KEY"), ("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_a_providers_own_key_goes_to_no_other_address_unless_allowed(tmp_path, judge, token, provider, variable):
    base = judge.url + ("/v1" if provider != "anthropic" else "")
    project(tmp_path / "p", f"{{provider: {provider}, base_url: '{base}', model: m, max_retries: 0}}")
    safe = run(tmp_path, tmp_path / "p", "--safe-env", **{variable: token})
    assert safe.returncode == 0, safe.stdout + safe.stderr  # the server takes any key: it got the placeholder
    assert token.encode() not in received(judge) and b"not-needed" in received(judge)
    allowed = run(tmp_path, tmp_path / "p", "--safe-env", "--allow-env", variable, **{variable: token})
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert token.encode() in received(judge)


def test_api_key_env_naming_the_providers_own_key_for_another_address_says_where_it_may_go(tmp_path, judge, token):
    config = project(tmp_path / "p", f"{{provider: openai, base_url: '{judge.url}/v1', model: m, api_key_env: OPENAI_API_KEY}}")
    done = dialogcheck(tmp_path, "validate", "--safe-env", str(config), OPENAI_API_KEY=token)
    assert done.returncode == 2
    assert done.stdout.splitlines()[0] == (
        f"{config}:3:{column(config, 3, 'OPENAI_API_KEY')}: `api_key_env: OPENAI_API_KEY` would send the value of $OPENAI_API_KEY to {judge.url}/v1, and under"
        " --safe-env, OPENAI_API_KEY goes only to the openai API (https://api.openai.com/v1): pass --allow-env OPENAI_API_KEY to send it there"
    )
    own = project(tmp_path / "own", "{provider: openai, model: m, api_key_env: OPENAI_API_KEY}")
    assert dialogcheck(tmp_path, "validate", "--safe-env", str(own), OPENAI_API_KEY=token).returncode == 0


@pytest.mark.parametrize(
    ("provider", "variables", "code"),
    [
        # The key goes to the provider's own API (behind the closed proxy here): the judge errors, exit 3.
        ("openai", {"OPENAI_BASE_URL": "{trap}/v1", "OPENAI_API_KEY": "{token}"}, 3),
        ("anthropic", {"ANTHROPIC_BASE_URL": "{trap}", "ANTHROPIC_API_KEY": "{token}"}, 3),
        # An auth token is not the provider's key variable: no key at all, said before the batch (exit 2).
        ("anthropic", {"ANTHROPIC_BASE_URL": "{trap}", "ANTHROPIC_AUTH_TOKEN": "{token}"}, 2),
    ],
)
def test_the_sdks_own_address_variables_are_not_read_under_safe_env(tmp_path, trap, token, provider, variables, code):
    project(tmp_path / "p", f"{{provider: {provider}, model: m, max_retries: 0, timeout: 60}}")  # the trap answers at once
    env = {name: value.format(trap=trap.url, token=token) for name, value in variables.items()}
    unsafe = run(tmp_path, tmp_path / "p", **env)  # the SDK follows the variables (what --safe-env must stop)
    assert len(trap.seen) == 1 and token.encode() in received(trap), unsafe.stdout + unsafe.stderr
    safe = run(tmp_path, tmp_path / "p", "--safe-env", **env)
    assert len(trap.seen) == 1, "under --safe-env the SDK went where the environment said"
    assert safe.returncode == code and token not in safe.stdout + safe.stderr, safe.stdout + safe.stderr


@pytest.mark.parametrize(
    ("provider", "variable", "value", "header"),
    [
        ("openai_compatible", "OPENAI_CUSTOM_HEADERS", "X-Gateway-Token: {token}", "X-Gateway-Token"),
        ("openai_compatible", "OPENAI_ORG_ID", "{token}", "OpenAI-Organization"),
        ("openai_compatible", "OPENAI_PROJECT_ID", "{token}", "OpenAI-Project"),
        ("anthropic", "ANTHROPIC_CUSTOM_HEADERS", "X-Gateway-Token: {token}", "X-Gateway-Token"),
    ],
)
def test_headers_the_sdks_take_from_the_environment_stop_the_setup_under_safe_env(tmp_path, judge, token, provider, variable, value, header):
    base = judge.url + ("/v1" if provider != "anthropic" else "")
    project(tmp_path / "p", f"{{provider: {provider}, base_url: '{base}', model: m, max_retries: 0}}")
    env = {variable: value.format(token=token)}
    safe = run(tmp_path, tmp_path / "p", "--safe-env", **env)
    assert safe.returncode == 2, safe.stdout + safe.stderr
    assert (
        f"--safe-env: the {provider} SDK would send the value of ${variable} (its `{header}` header) to {base}, and only variables"
        f" named by --allow-env may leave the process: pass --allow-env {variable} to send it, or unset it"
    ) in safe.stderr
    assert judge.seen == []
    allowed = run(tmp_path, tmp_path / "p", "--safe-env", "--allow-env", variable, **env)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert token.encode() in received(judge)
