"""The OpenAI-compatible client against a real HTTP server: what it sends and what it reads back."""

import asyncio
import builtins
from dataclasses import replace

import pytest

from dialogcheck.config import LLMSettings
from dialogcheck.llm import LLMError
from dialogcheck.llm.openai_client import PLACEHOLDER_KEY, OpenAIClient, resolve_api_key
from tests.llm.conftest import Answer, chat, openai_body

SCHEMA = {"type": "object", "properties": {"verdict": {"enum": ["PASS", "FAIL"]}}, "required": ["verdict"]}


def settings(server, **changes) -> LLMSettings:
    values = {"provider": "openai", "model": "test-model", "base_url": f"{server.root}/v1", "timeout": 60.0, "max_retries": 0}
    return LLMSettings(**{**values, **changes})


def test_success_reads_text_tokens_and_cost(openai_server):
    openai_server.answer(Answer(body=openai_body("PASS because", model="served-model", prompt_tokens=21, completion_tokens=4, cost=0.0012)))
    response = asyncio.run(OpenAIClient(settings(openai_server)).complete(chat(system="You judge.")))
    assert (response.text, response.model, response.cached) == ("PASS because", "served-model", False)
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.cost) == (21, 4, 0.0012)
    body = openai_server.bodies[0]
    assert body["model"] == "test-model"
    assert body["messages"] == [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Is the sky blue?"}]
    assert "response_format" not in body


def test_cost_is_none_when_not_reported(openai_server):
    response = asyncio.run(OpenAIClient(settings(openai_server)).complete(chat()))
    assert response.usage.cost is None


def test_options_go_into_the_body(openai_server):
    asyncio.run(OpenAIClient(settings(openai_server)).complete(chat(temperature=0.0, max_tokens=50, top_k=5)))
    body = openai_server.bodies[0]
    assert (body["temperature"], body["max_tokens"], body["top_k"]) == (0.0, 50, 5)


def test_json_schema_is_sent_as_response_format(openai_server):
    request = replace(chat(), json_schema=SCHEMA)
    asyncio.run(OpenAIClient(settings(openai_server)).complete(request))
    assert openai_server.bodies[0]["response_format"] == {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}


@pytest.mark.parametrize(("mode", "expected"), [("json_object", {"type": "json_object"}), ("none", None)])
def test_other_structured_output_modes(openai_server, mode, expected):
    request = replace(chat(), json_schema=SCHEMA)
    asyncio.run(OpenAIClient(settings(openai_server, structured_output=mode)).complete(request))
    assert openai_server.bodies[0].get("response_format") == expected


def test_malformed_answer_text_is_returned_as_is(openai_server):
    openai_server.answer(Answer(body=openai_body('{"verdict": PASS, oops')))
    response = asyncio.run(OpenAIClient(settings(openai_server)).complete(chat()))
    assert response.text == '{"verdict": PASS, oops'


def test_a_null_content_is_an_empty_text(openai_server):
    body = openai_body()
    body["choices"][0]["message"]["content"] = None
    openai_server.answer(Answer(body=body))
    assert asyncio.run(OpenAIClient(settings(openai_server)).complete(chat())).text == ""


def test_the_key_is_sent_as_bearer(openai_server, monkeypatch):
    monkeypatch.setenv("MY_GATEWAY_KEY", "sk-from-env")
    asyncio.run(OpenAIClient(settings(openai_server, api_key_env="MY_GATEWAY_KEY")).complete(chat()))
    assert openai_server.headers[0]["authorization"] == "Bearer sk-from-env"


def test_key_resolution_order(monkeypatch):
    base = LLMSettings(provider="openai", model="m")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    monkeypatch.setenv("OTHER_KEY", "sk-other")
    assert resolve_api_key(LLMSettings(provider="openai", model="m", api_key="sk-inline", api_key_env="OTHER_KEY")) == "sk-inline"
    assert resolve_api_key(LLMSettings(provider="openai", model="m", api_key_env="OTHER_KEY")) == "sk-other"
    assert resolve_api_key(base) == "sk-default"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert resolve_api_key(LLMSettings(provider="vllm", model="m", base_url="http://127.0.0.1:8000/v1")) == PLACEHOLDER_KEY
    with pytest.raises(LLMError, match=r"no API key for the openai provider: set \$OPENAI_API_KEY"):
        resolve_api_key(base)


def test_a_missing_sdk_is_a_clear_error(monkeypatch):
    real_import = builtins.__import__

    def no_openai(name, *args, **kwargs):
        if name == "openai" or name.startswith("openai."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openai)
    with pytest.raises(LLMError) as caught:
        OpenAIClient(LLMSettings(provider="openai", model="m", api_key="k"))
    assert str(caught.value) == "the openai provider needs the openai package: pip install 'dialogcheck[openai]'"


def test_one_client_serves_several_event_loops(openai_server):
    client = OpenAIClient(settings(openai_server))
    for _ in range(2):
        assert asyncio.run(client.complete(chat())).text == "hello"
    assert openai_server.count == 2
