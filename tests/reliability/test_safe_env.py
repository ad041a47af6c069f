"""`--safe-env`: `${VAR}` in scenario, SOP and config files may read only the variables allowed by name.

The mechanism is `dialogcheck._yaml.env_policy`; the CLI sets it from `--safe-env` and
`--allow-env NAME` (or $DIALOGCHECK_SAFE_ENV / $DIALOGCHECK_ALLOW_ENV) on validate,
check, run and mcp; the pytest plugin reads the two variables as the CLI does. The
default allow-list is empty.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck._safe_env import DEFAULT_ALLOWED_ENV, allowed_names, policy_of_environment
from dialogcheck._yaml import allowed_env, env_policy, parse_yaml, plain
from dialogcheck.errors import LoadError

ENVIRON = {"CARD_TYPE": "debit", "CI_SECRET": "s3cr3t-planted", "HOME": "/home/ci"}
TEXT = "name: ${CARD_TYPE} card\ncontext: 'key ${CI_SECRET} and $${CI_SECRET}'\n"


def parsed(text: str = TEXT):
    return plain(parse_yaml(text, "s.yml", ENVIRON))


def test_without_a_policy_every_variable_is_read():
    assert allowed_env() is None
    assert parsed() == {"name": "debit card", "context": "key s3cr3t-planted and ${CI_SECRET}"}


def test_a_policy_lets_only_the_allowed_names_through_and_says_where_and_how():
    with env_policy({"CARD_TYPE"}):
        with pytest.raises(LoadError) as info:
            parsed()
    assert str(info.value) == (
        "s.yml:2:10: environment variable `CI_SECRET` may not be read with --safe-env (used as `${CI_SECRET}`):"
        " allow it with --allow-env CI_SECRET"
    )
    with env_policy({"CARD_TYPE", "CI_SECRET"}):
        assert parsed()["context"] == "key s3cr3t-planted and ${CI_SECRET}"
    with env_policy(()):  # the escape `$${...}` is no read: it stays allowed
        assert parsed("a: $${CI_SECRET}\n") == {"a": "${CI_SECRET}"}


def test_the_policy_ends_with_its_block_and_nests():
    with env_policy(()):
        with env_policy(None):
            assert parsed()["name"] == "debit card"
        assert allowed_env() == frozenset()
        with pytest.raises(LoadError):
            parsed()
    assert allowed_env() is None


def test_a_refused_name_is_refused_even_when_it_is_unset_and_even_in_keys_of_nested_values():
    with env_policy(()):
        with pytest.raises(LoadError) as info:
            parse_yaml("a:\n  - b: ${NOT_SET_ANYWHERE}\n", "s.yml", {})
    assert str(info.value).startswith("s.yml:2:8: environment variable `NOT_SET_ANYWHERE` may not be read with --safe-env")


def test_the_flags_make_the_allow_list():
    assert DEFAULT_ALLOWED_ENV == ()
    assert allowed_names(False, ()) is None
    assert allowed_names(True, ()) == frozenset()
    assert allowed_names(False, ("A",)) == allowed_names(True, ("A",)) == frozenset({"A"})


@pytest.mark.parametrize("value", ["", "1", "0", "true", "False", " yes ", "n", "on", "OFF", "t", "f"])
def test_the_environment_asks_as_the_options_do(value):
    """What the pytest plugin reads from the environment is what click makes of the same variables for the commands."""
    import click

    assert policy_of_environment({"DIALOGCHECK_SAFE_ENV": value}) == allowed_names(click.BOOL.convert(value, None, None), ())
    both = {"DIALOGCHECK_SAFE_ENV": value, "DIALOGCHECK_ALLOW_ENV": " CARD_TYPE\tCI_SECRET "}
    assert policy_of_environment(both) == frozenset({"CARD_TYPE", "CI_SECRET"})


def test_a_safe_env_variable_that_is_neither_yes_nor_no_is_refused():
    with pytest.raises(ValueError, match="DIALOGCHECK_SAFE_ENV='maybe' is neither yes nor no"):
        policy_of_environment({"DIALOGCHECK_SAFE_ENV": "maybe"})
    assert policy_of_environment({}) is None


SCENARIO = """\
scenario:
  name: Card for ${CARD_TYPE}
  simulation_context: "My key is ${CI_SECRET}"
  script: [hello]
"""
AGENT = "def respond(conversation_id, text, initial_slots=None):\n    return {'messages': [{'text': 'hi'}], 'events': []}\n"


@pytest.fixture
def files(tmp_path, monkeypatch):
    for name, value in ENVIRON.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("DIALOGCHECK_SAFE_ENV", raising=False)
    monkeypatch.delenv("DIALOGCHECK_ALLOW_ENV", raising=False)
    root = tmp_path / "p"
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text("agent: {type: python, callable: 'agent:respond'}\n")
    (root / "agent.py").write_text(AGENT)
    scenario = root / "eval" / "scenarios" / "card.yml"
    scenario.write_text(SCENARIO)
    conversation = tmp_path / "c.jsonl"
    conversation.write_text('{"event": "user", "text": "hello"}\n')
    return root, scenario, conversation


def refused(scenario, name: str, line: int, column: int) -> str:
    return (
        f"{scenario}:{line}:{column}: environment variable `{name}` may not be read with --safe-env (used as `${{{name}}}`):"
        f" allow it with --allow-env {name}"
    )


def commands(root, scenario, conversation, tmp_path):
    return {
        "validate": ["validate", str(scenario)],
        "check": ["check", "--no-judge", "--scenario", str(scenario), str(conversation)],
        "run": ["run", str(root), "--results", str(tmp_path / "r")],
    }


@pytest.mark.parametrize("command", ["validate", "check", "run"])
def test_each_loading_command_takes_the_flags(files, tmp_path, command):
    root, scenario, conversation = files
    args = commands(root, scenario, conversation, tmp_path)[command]
    both = [refused(scenario, "CARD_TYPE", 2, 9), refused(scenario, "CI_SECRET", 3, 23)]

    def lines(result):
        return (result.stdout if command == "validate" else result.stderr).splitlines()

    plain_run = CliRunner().invoke(cli, args)
    assert plain_run.exit_code in (0, 1), plain_run.output  # without the flag, the variables are read as before

    safe = CliRunner().invoke(cli, [*args, "--safe-env"])
    assert safe.exit_code == 2
    assert [line for line in lines(safe) if "--safe-env" in line] == both
    assert "s3cr3t-planted" not in safe.output

    one = CliRunner().invoke(cli, [*args, "--allow-env", "CARD_TYPE"])  # --allow-env alone turns the policy on
    assert one.exit_code == 2
    assert [line for line in lines(one) if "--safe-env" in line] == both[1:]

    another = ["--results", str(tmp_path / "r2")] if command == "run" else []  # a results folder holds one batch
    allowed = CliRunner().invoke(cli, [*args, *another, "--safe-env", "--allow-env", "CARD_TYPE", "--allow-env", "CI_SECRET"])
    assert allowed.exit_code == plain_run.exit_code, allowed.output

    from_env = CliRunner().invoke(cli, args, env={"DIALOGCHECK_SAFE_ENV": "1", "DIALOGCHECK_ALLOW_ENV": "CARD_TYPE"})
    assert from_env.exit_code == 2 and [line for line in lines(from_env) if "--safe-env" in line] == both[1:]
    if command == "run":
        assert not (tmp_path / "r" / "card" / "run_2.json").exists()


def test_the_config_is_under_the_policy_too_and_so_is_api_key_env(files, tmp_path):
    root, scenario, conversation = files
    config = root / "eval" / "conftest.yml"
    config.write_text("evaluation:\n  llm: {provider: openai, model: m, api_key: '${CI_SECRET}'}\n")
    result = CliRunner().invoke(cli, ["validate", "--safe-env", str(config)])
    assert result.exit_code == 2
    assert result.stdout.splitlines()[0] == refused(config, "CI_SECRET", 2, 46)
    # api_key_env reads the environment too: under --safe-env it needs --allow-env (tests/reliability/test_api_key_env.py).
    config.write_text("evaluation:\n  llm: {provider: openai, model: m, api_key_env: CI_SECRET}\n")
    result = CliRunner().invoke(cli, ["validate", "--safe-env", str(config)])
    assert result.exit_code == 2
    assert result.stdout.splitlines()[0].startswith(f"{config}:2:50: `api_key_env: CI_SECRET` would send the value of $CI_SECRET")
    result = CliRunner().invoke(cli, ["validate", "--safe-env", "--allow-env", "CI_SECRET", "--format", "json", str(config)])
    assert result.exit_code == 0 and json.loads(result.stdout)["valid"] is True
