"""Ask a model for a JSON answer that follows a schema, retrying malformed answers.

Models wrap JSON in code fences or add a sentence around it; the object is
taken from between the first `{` and the last `}`. An answer that still does
not parse or validate is shown back to the model with what was wrong, and
asked again. The judge and the simulated user both ask this way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson

from .._shown import counted
from ..config import SEED_RANGE, LLMSettings
from .base import ChatClient, ChatMessage, ChatRequest, LLMError, Usage

DEFAULT_ATTEMPTS = 3
#: The output bound of a request whose caller names none (each role names its own).
DEFAULT_MAX_TOKENS = 1024
#: The options that bound how long an answer may be: `max_tokens`, and `max_completion_tokens` of OpenAI's newer models.
OUTPUT_BOUNDS = ("max_tokens", "max_completion_tokens")
#: How often an answer that parses but says something invalid (`validate`) is asked again.
INVALID_RETRIES = 1


class MalformedAnswer(ValueError):
    """The answer is not the JSON object the schema asks for; says what is wrong."""


class NoValidAnswer(LLMError):
    """Every attempt gave a malformed answer; keeps the last raw text and the usage spent."""

    def __init__(self, message: str, raw: str | None, usage: Usage):
        super().__init__(message)
        self.raw = raw
        self.usage = usage


@dataclass(frozen=True)
class JsonAnswer:
    value: dict[str, Any]
    raw: str
    usage: Usage
    #: True when every answer it took came from the cache.
    cached: bool


def parse_json_answer(text: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise MalformedAnswer("the answer holds no JSON object")
    try:
        answer = orjson.loads(text[start : end + 1])
    except orjson.JSONDecodeError as err:
        raise MalformedAnswer(f"the answer is not valid JSON: {err.msg}") from None
    error = _first_error(_validator(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)), answer)
    if error is not None:
        path = ".".join(str(p) for p in error.absolute_path) or "the answer"
        raise MalformedAnswer(f"{path}: {error.message}")
    return answer


@lru_cache(maxsize=64)
def _validator(schema_json: bytes) -> Any:
    """One checked validator per schema: checking the schema itself on every answer cost more than the answer."""
    import jsonschema

    schema = orjson.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _first_error(validator: Any, answer: Any) -> Any:
    """The error `jsonschema.validate` would raise (its best match), or None."""
    import jsonschema

    return jsonschema.exceptions.best_match(validator.iter_errors(answer))


def bounded(options: Mapping[str, Any], max_tokens: int) -> Mapping[str, Any]:
    """The options with `max_tokens` set to the role's bound, unless the config bounds the output itself."""
    if any(name in options for name in OUTPUT_BOUNDS):
        return options
    return {**options, "max_tokens": max_tokens}


def _cut_short(options: Mapping[str, Any]) -> str:
    name = next(name for name in OUTPUT_BOUNDS if name in options)
    return f"the answer was cut short at its output bound ({name} {options[name]}: raise `{name}` of the llm block in eval/conftest.yml)"


def sample_seed(seed: int | None, sample: int) -> int | None:
    """The seed of a request: the caller's, moved on by the sample's number so the samples of one question may
    differ (sent only to providers that take a seed)."""
    return seed if not sample else ((seed or 0) + sample) % SEED_RANGE


async def ask_json(
    client: ChatClient,
    settings: LLMSettings,
    messages: list[ChatMessage],
    schema: Mapping[str, Any],
    *,
    model: str | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
    seed: int | None = None,
    validate: Callable[[dict[str, Any]], str | None] | None = None,
    sample: int = 0,
    repeat: int = 1,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> JsonAnswer:
    """Ask until the answer validates. Raises `NoValidAnswer`, or `LLMError` when a call fails.

    `validate` says what is wrong with a well-formed answer (None when nothing is); such an answer is asked
    again once with the reason, and a second one ends the asking. A `sample` after the first is another cache
    entry, asked with the seed moved on (`sample_seed`) where the provider takes one, so the samples may differ;
    `repeat` tells the repeats of a run apart in the cache only (it is never sent). `max_tokens` bounds each
    answer (the role's bound; `max_tokens` or `max_completion_tokens` of the settings' options win).
    """
    messages = list(messages)
    options = bounded(settings.options, max_tokens)
    problem: str | None
    usage, cached, raw, problem, invalid = Usage(), True, None, "no answer", 0
    for _ in range(attempts):
        request = ChatRequest(
            provider=settings.provider,
            model=model or settings.model,
            messages=tuple(messages),
            options=options,
            json_schema=schema,
            endpoint=settings.base_url,
            headers=settings.headers,
            seed=sample_seed(seed, sample),
            sample=sample,
            repeat=repeat,
        )
        response = await client.complete(request)
        usage, cached, raw = usage + response.usage, cached and response.cached, response.text
        try:
            value = parse_json_answer(response.text, schema)
        except MalformedAnswer as err:
            problem = _cut_short(options) if response.truncated else str(err)
        else:
            problem = validate(value) if validate is not None else None
            if problem is None:
                return JsonAnswer(value, response.text, usage, cached)
            invalid += 1
            if invalid > INVALID_RETRIES:
                raise NoValidAnswer(f"no valid answer: {problem}", raw, usage)
        messages += [
            ChatMessage("assistant", response.text),
            ChatMessage("user", f"That answer was not valid ({problem}). Answer again with only the JSON object."),
        ]
    raise NoValidAnswer(f"no valid answer after {counted(attempts, 'attempt')}: {problem}", raw, usage)
