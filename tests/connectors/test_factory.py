"""`--agent` flag parsing, and building a connector from settings."""

from __future__ import annotations

import pytest

from dialogcheck.config import AgentSettings
from dialogcheck.connectors import AgentSetupError, HttpConnector, PythonConnector, RasaConnector, connector_from_settings, parse_agent_flag

FORMS = "(--agent must be rasa:URL, http:URL (or the http(s) URL alone) or python:MODULE:FUNC)"


@pytest.mark.parametrize(
    ("flag", "settings"),
    [
        ("rasa:http://localhost:5005", AgentSettings("rasa", url="http://localhost:5005")),
        ("rasa:http://localhost:5005/", AgentSettings("rasa", url="http://localhost:5005")),
        ("http:https://agent.example:8443/v1/turn", AgentSettings("http", url="https://agent.example:8443/v1/turn")),
        ("python:my_agent:respond", AgentSettings("python", callable="my_agent:respond")),
        ("http://host/chat", AgentSettings("http", url="http://host/chat")),
        ("https://bot:pw@agent.example:8443/v1/turn/", AgentSettings("http", url="https://bot:pw@agent.example:8443/v1/turn")),
        ("python:pkg.agent:Bot.handle", AgentSettings("python", callable="pkg.agent:Bot.handle")),
    ],
)
def test_accepted_forms(flag, settings):
    assert parse_agent_flag(flag) == settings


@pytest.mark.parametrize("flag", ["", "rasa", "rasa:", "grpc:http://x", "http//localhost", "RASA:http://x"])
def test_a_bad_form_names_the_accepted_ones(flag):
    with pytest.raises(ValueError) as info:
        parse_agent_flag(flag)
    assert str(info.value) == f"--agent must be rasa:URL, http:URL (or the http(s) URL alone) or python:MODULE:FUNC, got {flag!r}"


def test_a_bad_url_or_target_says_what_and_names_the_forms():
    with pytest.raises(ValueError) as info:
        parse_agent_flag("rasa:localhost:5005")
    assert str(info.value) == f"--agent rasa:URL needs an http:// or https:// address, got 'localhost:5005' {FORMS}"
    with pytest.raises(ValueError) as info:
        parse_agent_flag("python:my_agent")
    assert str(info.value) == f"a python agent is named MODULE:FUNCTION (like `my_agent:respond`), got 'my_agent' {FORMS}"


def test_connectors_from_settings(tmp_path):
    (tmp_path / "factory_agent.py").write_text("def respond(cid, text):\n    return {'messages': []}\n")
    rasa = connector_from_settings(AgentSettings("rasa", url="http://127.0.0.1:5005", timeout=2.5), tmp_path)
    assert isinstance(rasa, RasaConnector) and rasa.url == "http://127.0.0.1:5005" and rasa.timeout == 2.5
    assert isinstance(connector_from_settings(AgentSettings("http", url="http://127.0.0.1:9/a"), tmp_path), HttpConnector)
    python = connector_from_settings(AgentSettings("python", callable="factory_agent:respond", timeout=4.0), tmp_path)
    assert isinstance(python, PythonConnector) and python.timeout == 4.0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (AgentSettings("rasa"), "a rasa agent needs `url`"),
        (AgentSettings("http", url="localhost"), "an http agent needs an http:// or https:// address, got 'localhost'"),
        (AgentSettings("python"), "a python agent needs `callable: MODULE:FUNCTION`"),
        (AgentSettings("python", callable="nowhere_to_be_found:f"), "cannot import agent module `nowhere_to_be_found`: no such module in"),
        (AgentSettings("grpc", url="http://x"), "unknown agent type 'grpc': expected one of rasa, http, python"),
    ],
)
def test_bad_settings_are_setup_errors_before_any_run(tmp_path, settings, message):
    with pytest.raises(AgentSetupError) as info:
        connector_from_settings(settings, tmp_path)
    assert str(info.value).startswith(message)
