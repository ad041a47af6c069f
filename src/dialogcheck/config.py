"""`eval/conftest.yml`: which models simulate and judge, prompts, limits, the agent, the cache.

The Mantle keys are read unchanged (`simulation.llm`, `evaluation.llm`, the
three prompt paths, `max_concurrent_llm_calls`); `agent`, `cache` and
`evaluation.metrics` are dialogcheck's extensions. Paths are relative to the
project root and may not leave it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._fields import Fields, Problems, framework_tools_setting
from ._paths import project_folder, resolved
from ._redact import hold, hold_url, redact_url
from ._yaml import Pos, YNode, allowed_env, describe, plain, read_yaml
from .errors import LoadError, Problem, decode_utf8, did_you_mean, os_reason
from .events.model import FRAMEWORK_TOOLS

OPENAI_COMPATIBLE = ("openai", "openai_compatible", "vllm", "ollama", "llama_cpp")
PROVIDERS = (*OPENAI_COMPATIBLE, "anthropic")
#: Base URLs for providers that have a usual local address.
DEFAULT_BASE_URLS = {"ollama": "http://localhost:11434/v1"}
#: The provider's own API, where its SDK sends requests when no `base_url` is given.
PROVIDER_ENDPOINTS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
#: The variable each provider's SDK reads its key from; under --safe-env it may go only to that provider's own API.
PROVIDER_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
#: LLM keys dialogcheck itself reads; every other key is passed to the provider's call.
CLIENT_KEYS = (
    "provider", "model", "base_url", "api_key", "api_key_env", "extra_headers", "timeout", "max_retries", "structured_output",
    "max_prompt_chars",
)
#: Provider options dialogcheck bounds when given (each role sets `max_tokens` itself otherwise): the most tokens an
#: answer may take, as llama.cpp, vLLM, Ollama and OpenAI's older models read it, and as OpenAI's newer ones do.
OUTPUT_BOUNDS = ("max_tokens", "max_completion_tokens")
MAX_OUTPUT_TOKENS = 1_000_000
#: An HTTP header name (RFC 9110 token): nothing that could end the header line.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
#: The judge's transcript and event ledger together, in characters: about 250k tokens, past what most models read.
DEFAULT_MAX_PROMPT_CHARS = 1_000_000
STRUCTURED_OUTPUT = ("json_schema", "json_object", "none")
DEFAULT_CONCURRENCY = 3
ROLE_PROMPTS = {
    "simulation": ("simulated_user_prompt",),
    "evaluation": ("criteria_judge_prompt", "metrics_judge_prompt", "blame_prompt"),
}
AGENT_TYPES = ("rasa", "http", "python")
#: Sampling seeds are below this: the 32-bit range llama.cpp's server reads (others read more).
SEED_RANGE = 2**31
QUALITY_METRICS = ("task_completion", "helpfulness", "repair_quality", "coherence", "tone")


@dataclass(frozen=True)
class LLMSettings:
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    max_retries: int = 3
    #: How a JSON answer is asked of an OpenAI-compatible server: `response_format` json_schema, json_object, or only by the prompt.
    structured_output: str = "json_schema"
    #: A judge prompt whose transcript and ledger pass this is a judge error, never sent (the model would refuse it).
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS
    #: Passed as they are to the provider's call (temperature, max_tokens, ...); without `max_tokens` or
    #: `max_completion_tokens`, each request sets `max_tokens` to its role's bound.
    options: Mapping[str, Any] = field(default_factory=dict)
    #: `extra_headers`: sent with every request (a gateway's token, say); credentials, so never stored.
    headers: Mapping[str, str] = field(default_factory=dict)
    #: The --safe-env allow-list in force when the file was read (None: any variable may be read and sent).
    allowed_env: frozenset[str] | None = None

    @property
    def endpoint(self) -> str | None:
        """Where requests go: `base_url`, else the provider's own API (None for a provider without one)."""
        return self.base_url or PROVIDER_ENDPOINTS.get(self.provider)

    def may_send_env(self, name: str) -> bool:
        """Whether the value of environment variable `name` may go to this endpoint.

        Without --safe-env any may. With it, only those --allow-env names, and the provider's own key
        variable (OPENAI_API_KEY, ANTHROPIC_API_KEY) to the provider's own API.
        """
        if self.allowed_env is None or name in self.allowed_env:
            return True
        own = PROVIDER_ENDPOINTS.get(self.provider)
        return name == PROVIDER_KEY_ENV.get(self.provider) and own is not None and _same_address(self.endpoint, own)


def _same_address(url: str | None, other: str) -> bool:
    return url is not None and url.rstrip("/") == other.rstrip("/")


@dataclass(frozen=True)
class ReviewSettings:
    """`simulation.review`: the model that reads each simulated user's brief and transcript, and its prompt."""

    llm: LLMSettings
    #: The project's prompt template (else the bundled `user_review.j2`).
    prompt: Path | None = None


@dataclass(frozen=True)
class RoleSettings:
    llm: LLMSettings | None = None
    prompts: Mapping[str, Path] = field(default_factory=dict)
    max_concurrent_llm_calls: int = DEFAULT_CONCURRENCY
    #: Whether the file set the limit (else a batch may size it to its parallelism).
    limit_given: bool = False
    #: Quality metrics to score on every run (evaluation only; never part of the verdict).
    metrics: tuple[str, ...] = ()
    #: The LLM reviewer of the simulated user (simulation only).
    review: ReviewSettings | None = None
    #: `simulation.seed`: the simulated user's sampling seed, for providers that take one (simulation only).
    seed: int | None = None
    #: How many times the judge is asked each question, the majority deciding (evaluation only; odd).
    samples: int = 1


def in_flight_for(role: RoleSettings, parallel: int) -> int:
    """LLM calls a role may have in flight in a batch of `parallel` runs: the file's limit, else enough for every run."""
    return role.max_concurrent_llm_calls if role.limit_given else max(role.max_concurrent_llm_calls, parallel)


@dataclass(frozen=True)
class AgentSettings:
    type: str
    url: str | None = None
    callable: str | None = None
    timeout: float = 30.0


@dataclass(frozen=True)
class CacheSettings:
    enabled: bool = True
    dir: Path = Path(".dialogcheck/cache")
    #: The project folder `dir` must stay in once links are resolved (None: a folder the caller named, used wherever it is).
    project: Path | None = None

    def folder(self) -> Path:
        """`dir`, once it is known to stay in its project: a link committed there (`.dialogcheck -> ~`) must not take the answers out."""
        if self.project is None:
            return self.dir
        return project_folder(self.project, self.dir, "the answer cache folder", "--cache-dir DIR names a folder elsewhere")


@dataclass(frozen=True)
class ProjectConfig:
    root: Path
    path: Path | None = None
    simulation: RoleSettings = field(default_factory=RoleSettings)
    evaluation: RoleSettings = field(default_factory=RoleSettings)
    agent: AgentSettings | None = None
    cache: CacheSettings = field(default_factory=CacheSettings)
    #: Tool names never counted as tool runs in this project's scenarios (`framework_tools`; `FRAMEWORK_TOOLS` by default).
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS
    #: The environment (`eval/environments/NAME.yml`) of every scenario that names none, and where the config names it.
    environment: str | None = None
    environment_pos: Pos | None = None

    @classmethod
    def empty(cls, root: Path) -> ProjectConfig:
        return cls(root=root, cache=CacheSettings(dir=root / ".dialogcheck" / "cache", project=root))


def _llm(node: YNode, problems: Problems, what: str) -> LLMSettings | None:
    mapping = problems.expect_map(node, what, node.pos)
    if mapping is None:
        return None
    # Any key the provider accepts may stand beside ours; one that looks like a misspelling of ours may not.
    fields = Fields(mapping, problems, what, tuple(mapping.keys))
    count = len(problems.items)
    for key, pos in mapping.keys.items():
        close = difflib.get_close_matches(key, (*CLIENT_KEYS, *OUTPUT_BOUNDS), n=1, cutoff=0.8)
        if key not in CLIENT_KEYS and key not in OUTPUT_BOUNDS and close:
            problems.add(f"unknown field `{key}` in {what} (did you mean `{close[0]}`?)", pos)
    provider = fields.choice("provider", PROVIDERS, required=True)
    model = fields.string("model", required=True)
    base_url = fields.string("base_url")
    api_key = fields.string("api_key")
    api_key_env = fields.string("api_key_env")
    headers = _headers(fields)
    timeout = fields.number("timeout", minimum=0.001)
    max_retries = fields.integer("max_retries", minimum=0, maximum=20)
    structured = fields.choice("structured_output", STRUCTURED_OUTPUT)
    max_prompt_chars = fields.integer("max_prompt_chars", minimum=1000)
    for bound in OUTPUT_BOUNDS:  # passed to the provider with the options, once known to be a sane bound
        fields.integer(bound, minimum=1, maximum=MAX_OUTPUT_TOKENS)
    if provider in ("openai_compatible", "vllm", "llama_cpp") and base_url is None:
        problems.add(f"{what} with `provider: {provider}` needs `base_url` (the server's /v1 address)", mapping.pos)
    if provider == "anthropic" and base_url is not None and not base_url.startswith(("http://", "https://")):
        problems.add(f"`base_url` in {what} must be an http(s) address", mapping.values["base_url"].pos)
    if len(problems.items) > count or provider is None or model is None:
        return None
    options = {key: plain(value) for key, value in mapping.values.items() if key not in CLIENT_KEYS}
    settings = LLMSettings(
        provider=provider,
        model=model,
        base_url=base_url or DEFAULT_BASE_URLS.get(provider),
        api_key=api_key,
        api_key_env=api_key_env,
        timeout=timeout if timeout is not None else 60.0,
        max_retries=max_retries if max_retries is not None else 3,
        structured_output=structured or "json_schema",
        max_prompt_chars=max_prompt_chars if max_prompt_chars is not None else DEFAULT_MAX_PROMPT_CHARS,
        options=options,
        headers=headers or {},
        allowed_env=allowed_env(),
    )
    if api_key_env is not None and not settings.may_send_env(api_key_env):
        problems.add(key_env_refused(settings, api_key_env), mapping.values["api_key_env"].pos)
        return None
    hold(api_key, *settings.headers.values())
    hold_url(settings.base_url)
    return settings


def key_env_refused(settings: LLMSettings, name: str) -> str:
    """Why --safe-env refuses `api_key_env`, and the flag that allows it."""
    where = redact_url(settings.endpoint)
    own = PROVIDER_KEY_ENV.get(settings.provider) == name
    rule = (
        f"under --safe-env, {name} goes only to the {settings.provider} API ({PROVIDER_ENDPOINTS[settings.provider]})"
        if own
        else "--safe-env lets no environment variable leave the process unless --allow-env names it"
    )
    return f"`api_key_env: {name}` would send the value of ${name} to {where}, and {rule}: pass --allow-env {name} to send it there"


def _headers(fields: Fields) -> dict[str, str] | None:
    """`extra_headers`: header names and string values, neither able to start another header line."""
    mapping = fields.mapping("extra_headers")
    if mapping is None:
        return None
    found = {}
    for name, node in mapping.values.items():
        value = plain(node)
        if not _HEADER_NAME.match(name):
            fields.problems.add(f"`{name}` in `extra_headers` is not an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)", mapping.keys[name])
        elif not isinstance(value, str):
            fields.problems.add(f"header `{name}` in `extra_headers` must be a string, got {describe(node)}", node.pos)
        elif any(c in value for c in "\r\n\0"):
            fields.problems.add(f"header `{name}` in `extra_headers` must be one line: a line break or NUL would start another header", node.pos)
        else:
            found[name] = value
    return found


def _inside(root: Path, path: Path) -> bool:
    """Whether `path` is in the project folder once `..` and symbolic links are resolved (an absolute path is not,
    nor a loop of links)."""
    target = resolved(path)
    return target is not None and target.is_relative_to(root.resolve())


def _prompt_path(fields: Fields, key: str, root: Path) -> Path | None:
    text = fields.string(key)
    if text is None:
        return None
    node = fields.node.values[key]
    path = resolved(root / text)
    if path is None:
        fields.problems.add(f"`{key}`: {text!r} is a loop of symbolic links, not a template file", node.pos)
        return None
    if not _inside(root, path):
        fields.problems.add(f"`{key}` must stay inside the project folder {root}, got {text!r}", node.pos)
        return None
    if not path.is_file():
        fields.problems.add(f"`{key}`: no such template file {text!r} (paths are relative to {root})", node.pos)
        return None
    found = _template_problems(path)
    fields.problems.items.extend(found)
    return None if found else path


def _template_problems(path: Path) -> list[Problem]:
    """What is wrong with a prompt template, at its own file, line and column: checked when the config loads, before any run."""
    from .llm.templates import template_problems

    try:
        source = decode_utf8(path.read_bytes(), str(path))
    except LoadError as err:
        return list(err.problems)
    except OSError as err:
        return [Problem(f"cannot read the template: {os_reason(err)}", str(path))]
    return template_problems(source, str(path))


def _role(fields: Fields, name: str, root: Path, default_limit: int, default_given: bool) -> RoleSettings:
    mapping = fields.mapping(name)
    if mapping is None:
        return RoleSettings(max_concurrent_llm_calls=default_limit, limit_given=default_given)
    what = f"`{name}`"
    prompt_keys = ROLE_PROMPTS[name]
    extra = ("metrics", "samples") if name == "evaluation" else ("review", "seed")
    role = Fields(mapping, fields.problems, what, ("llm", "max_concurrent_llm_calls", *prompt_keys, *extra))
    llm_node = role.get("llm")
    llm = _llm(llm_node, fields.problems, f"`{name}.llm`") if llm_node is not None else None
    prompts = {key: path for key in prompt_keys if (path := _prompt_path(role, key, root)) is not None}
    limit = role.integer("max_concurrent_llm_calls", minimum=1)
    metrics = _metrics(role) if name == "evaluation" else ()
    seed = role.integer("seed", minimum=0, maximum=SEED_RANGE - 1) if name == "simulation" else None
    samples = _samples(role) if name == "evaluation" else 1
    given = limit is not None or default_given
    review = _review(role, root) if name == "simulation" else None
    return RoleSettings(llm, prompts, limit if limit is not None else default_limit, given, metrics, review, seed, samples)


def _review(role: Fields, root: Path) -> ReviewSettings | None:
    """`simulation.review`: `llm` (a model, as `simulation.llm` is given) and an optional `prompt` template path."""
    mapping = role.mapping("review")
    if mapping is None:
        return None
    review = Fields(mapping, role.problems, "`simulation.review`", ("llm", "prompt"))
    llm_node = review.get("llm", required=True)
    if llm_node is None:
        return None
    llm = _llm(llm_node, role.problems, "`simulation.review.llm`")
    prompt = _prompt_path(review, "prompt", root)
    return ReviewSettings(llm, prompt) if llm is not None else None


#: The most samples the judge may be asked for one question.
MAX_SAMPLES = 25


def _samples(role: Fields) -> int:
    """`evaluation.samples`: an odd number of times to ask (so a majority of two verdicts always exists)."""
    samples = role.integer("samples", minimum=1, maximum=MAX_SAMPLES)
    if samples is not None and samples % 2 == 0:
        role.problems.add(f"`samples` in `evaluation` must be odd, so that a majority decides, got {samples}", role.get("samples").pos)  # type: ignore[union-attr]  # read just above
        return 1
    return samples or 1


def _metrics(role: Fields) -> tuple[str, ...]:
    """`evaluation.metrics`: true (all), false (none) or a list of metric names."""
    node = role.get("metrics")
    if node is None:
        return ()
    if isinstance(plain(node), bool):
        return QUALITY_METRICS if plain(node) else ()
    names = role.strings("metrics")
    for name in names or ():
        if name not in QUALITY_METRICS:
            allowed = ", ".join(QUALITY_METRICS)
            role.problems.add(f"unknown quality metric {name!r} in `evaluation.metrics`{did_you_mean(name, QUALITY_METRICS)}; known: {allowed}", node.pos)
    return names or ()


def _agent(fields: Fields) -> AgentSettings | None:
    mapping = fields.mapping("agent")
    if mapping is None:
        return None
    agent = Fields(mapping, fields.problems, "`agent`", ("type", "url", "callable", "timeout"))
    kind = agent.choice("type", AGENT_TYPES, required=True)
    url = agent.string("url")
    target = agent.string("callable")
    timeout = agent.number("timeout", minimum=0.001)
    if kind in ("rasa", "http") and url is None:
        fields.problems.add(f"`agent` of type {kind} needs `url`", mapping.pos)
    if kind == "python" and (target is None or ":" not in target):
        fields.problems.add("`agent` of type python needs `callable: MODULE:FUNCTION`", mapping.pos)
    if kind is None:
        return None
    return AgentSettings(kind, url, target, timeout if timeout is not None else 30.0)


def _cache(fields: Fields, root: Path) -> CacheSettings:
    default = CacheSettings(dir=root / ".dialogcheck" / "cache", project=root)
    mapping = fields.mapping("cache")
    if mapping is None:
        return default
    cache = Fields(mapping, fields.problems, "`cache`", ("enabled", "dir"))
    enabled = cache.boolean("enabled")
    folder = cache.string("dir")
    if folder is not None and not _inside(root, root / folder):
        message = f"`dir` in `cache` must stay inside the project folder {root}, got {folder!r} (--cache-dir names a folder elsewhere)"
        fields.problems.add(message, mapping.values["dir"].pos)
        folder = None
    return CacheSettings(
        enabled=default.enabled if enabled is None else enabled,
        dir=default.dir if folder is None else (root / folder),
        project=root,
    )


def parse_config(root_node: YNode | None, problems: Problems, path: Path) -> ProjectConfig:
    """Validate a conftest.yml tree; `path` is ROOT/eval/conftest.yml."""
    root = path.resolve().parent.parent
    if root_node is None:
        return ProjectConfig.empty(root)
    top = problems.expect_map(root_node, "the config", Pos(1, 1))
    if top is None:
        return ProjectConfig.empty(root)
    known = ("simulation", "evaluation", "max_concurrent_llm_calls", "agent", "cache", "framework_tools", "environment")
    fields = Fields(top, problems, "the config", known)
    limit = fields.integer("max_concurrent_llm_calls", minimum=1)
    default_limit = limit if limit is not None else DEFAULT_CONCURRENCY
    return ProjectConfig(
        root=root,
        path=path,
        simulation=_role(fields, "simulation", root, default_limit, limit is not None),
        evaluation=_role(fields, "evaluation", root, default_limit, limit is not None),
        agent=_agent(fields),
        cache=_cache(fields, root),
        framework_tools=framework_tools_setting(fields),
        environment=fields.string("environment"),
        environment_pos=fields.get("environment").pos if fields.has("environment") else None,  # type: ignore[union-attr]  # it has one
    )


def load_config(path: str | Path) -> ProjectConfig:
    """Read and validate `eval/conftest.yml`; raises `LoadError` with every problem."""
    path = Path(path)
    problems = Problems()
    config = parse_config(read_yaml(path), problems, path)
    if problems:
        raise LoadError(problems.items).in_file(str(path))
    return config


#: The folder the search for a project's config stops at (see `search_within`), or None: up to the file system's root.
_SEARCH_ROOT: ContextVar[Path | None] = ContextVar("dialogcheck_search_root", default=None)


@contextmanager
def search_within(root: Path | None) -> Iterator[None]:
    """Within the block, `find_config` (and the project folder guessed without one) looks no higher than `root`.

    A server started in a project (`dialogcheck mcp`) must not load, and run the agent of, a config above it.
    """
    token = _SEARCH_ROOT.set(None if root is None else root.resolve())
    try:
        yield
    finally:
        _SEARCH_ROOT.reset(token)


def searched(folders: Iterable[Path]) -> list[Path]:
    """`folders` (a folder and its parents, nearest first) as far as the search may go: none outside `search_within`'s root."""
    root = _SEARCH_ROOT.get()
    return [folder for folder in folders if root is None or folder.is_relative_to(root)]


def find_config(start: str | Path) -> Path | None:
    """The `eval/conftest.yml` of the project a file or folder belongs to, if any."""
    here = resolved(Path(start)) or Path(start).absolute()  # a loop of links: reading the file says so, at its name
    for folder in searched((here, *here.parents) if here.is_dir() else here.parents):
        candidate = folder / "eval" / "conftest.yml" if folder.name != "eval" else folder / "conftest.yml"
        if candidate.is_file():
            return candidate
    return None
