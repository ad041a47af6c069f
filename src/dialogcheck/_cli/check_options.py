"""The options of `dialogcheck check`: what click parsed, what cannot go together, and what they load.

Options that cannot go together are usage errors (exit 2), said before anything is read; the project's
config, the scenario, scenarios or SOP and the judge are loaded here, bad input as exit 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from ..checking import load_subject, wants_judge
from ..config import ProjectConfig, find_config, load_config
from ..engines.chunks import is_stream
from ..errors import LoadError
from ..events.model import FRAMEWORK_TOOLS
from .output import fail_with_load_error
from .telemetry_out import require_sdk

#: Largest --chunk-mb (1 TiB): past it every input is one task anyway; the bound keeps inf out.
MAX_CHUNK_MB = 2**20
SHARD_FORMATS = ("jsonl", "parquet")

JOBS_HELP = (
    "Worker processes for the checks (default: the usable cores). Results come out in input order, the same "
    "as with --jobs 1. Inputs under 2 MB, --junit, and LLM-judged checks (criteria, llm_judge, --metrics, with "
    "a judge configured) run in this process: the judge's limit on calls in flight is shared. With "
    "--engine ray: the CPUs of the local Ray instance."
)


@dataclass(frozen=True)
class CheckOptions:
    """The options of `check`, as click parsed them."""

    scenario_paths: tuple[str, ...]
    sop_paths: tuple[str, ...]
    pair: str | None
    config_path: str | None
    no_judge: bool
    metrics: bool
    no_cache: bool
    cache_dir: str | None
    replay: bool
    min_kappa: float | None
    input_format: str | None
    junit_path: str | None
    html_path: str | None
    stream: bool
    strict: bool
    review_user: bool
    blame: str
    jobs: int | None
    engine: str
    ray_address: str | None
    output_dir: str | None
    shard_format: str
    chunk_mb: float | None
    show: str
    max_failures: int
    output_format: str
    conversations: tuple[str, ...]
    otlp_out: str | None = None
    openinference_out: str | None = None
    otlp_endpoint: str | None = None

    @property
    def sop_path(self) -> str | None:
        return self.sop_paths[0] if self.sop_paths else None

    @property
    def where(self) -> str:
        """The file the subject came from, where a problem of the project's setup is reported."""
        return self.scenario_paths[0] if self.scenario_paths else self.sop_paths[0]

    @property
    def chunk_bytes(self) -> int | None:
        return int(self.chunk_mb * 2**20) if self.chunk_mb else None


def refuse_what_cannot_go_together(o: CheckOptions) -> None:
    """Options that cannot go together are usage errors (exit 2)."""
    if bool(o.scenario_paths) == bool(o.sop_paths):
        raise click.UsageError("give exactly one of --scenario or --sop")
    if len(o.sop_paths) > 1:
        raise click.UsageError("give --sop once: an SOP applies to every conversation (several scenarios may be given with --scenario)")
    if o.pair is not None and o.sop_paths:
        raise click.UsageError("--pair pairs conversations with scenarios: it does not go with --sop")
    if o.review_user and o.sop_paths:
        raise click.UsageError("--review-user reviews the user against a scenario's simulation_context: give --scenario, not --sop")
    if o.review_user and o.engine == "ray":
        raise click.UsageError("--review-user goes with --engine local")
    _check_options(o.engine, o.output_dir, o.shard_format, o.input_format, o.junit_path, o.html_path)
    if o.engine == "ray" and (o.otlp_out or o.openinference_out or o.otlp_endpoint):
        raise click.UsageError("--otlp-out, --openinference-out and --otlp-endpoint are written by --engine local")
    require_sdk(o.otlp_endpoint)
    if o.engine == "ray" and any(is_stream(Path(c)) for c in o.conversations if "://" not in c):
        raise click.UsageError("--engine ray reads files and object-store URIs, which its tasks open themselves: save a pipe's input to a file first")


def _check_options(engine, output_dir, output_format_shards, input_format, junit_path, html_path) -> None:
    if engine == "ray":
        if not output_dir:
            raise click.UsageError("--engine ray writes its results to a folder: give --output DIR (a path or an object-store URI)")
        if input_format:
            raise click.UsageError("--engine ray reads native JSONL, JSON and Parquet: convert with `dialogcheck import` first")
        if junit_path or html_path:
            raise click.UsageError("--junit and --html are written by --engine local")
    if output_format_shards == "parquet" or engine == "ray":
        try:
            import pyarrow  # noqa: F401 - imported only to learn that it is installed
        except ImportError:
            hint = "pip install 'dialogcheck[ray]'" if engine == "ray" else "pip install 'dialogcheck[parquet]'"
            raise click.UsageError(f"--engine ray and Parquet shards need pyarrow: {hint}") from None


def config_and_subject(o: CheckOptions):
    """The project's config (when there is one) and the scenario, scenarios or SOP to judge by; bad input is exit 2."""
    try:
        config = _config(o.where, o.config_path)
        return config, load_subject(o.scenario_paths, o.sop_path, o.pair, config.framework_tools if config else FRAMEWORK_TOOLS)
    except LoadError as err:
        fail_with_load_error(err, o.output_format)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="'--pair'") from None
    raise AssertionError("unreachable")


def _config(subject_path: str, config_path: str | None) -> ProjectConfig | None:
    path = Path(config_path) if config_path else find_config(subject_path)
    return load_config(path) if path is not None else None


def make_judge(config, no_cache: bool, cache_dir: str | None, where: str, output_format: str, replay: bool = False):
    from ..judge.setup import judge_from_config
    from ..llm.base import LLMError

    try:
        return judge_from_config(config, use_cache=not no_cache, cache_dir=Path(cache_dir) if cache_dir else None, replay=replay)
    except LLMError as err:
        fail_with_load_error(LoadError.one(str(err), str(config.path) if config and config.path else where), output_format)
    except LoadError as err:  # the project's cache folder is a link out of it
        fail_with_load_error(err, output_format)


def refuse_blame_llm_without_a_model(o: CheckOptions, config: ProjectConfig | None) -> None:
    """`--blame llm` asks the evaluation model: a usage error where none may be asked."""
    if o.blame != "llm":
        return
    why = (
        "--engine ray runs the deterministic checks (use --engine local)" if o.engine == "ray"
        else "--no-judge keeps it from being asked" if o.no_judge
        else "no evaluation.llm is configured (eval/conftest.yml, or --config)" if config is None or config.evaluation.llm is None
        else None
    )
    if why is not None:
        raise click.UsageError(f"--blame llm asks the evaluation model for what the evidence cannot place, and {why}")


def refuse_judging_on_ray(o: CheckOptions, config: ProjectConfig | None, subject) -> None:
    """Ray runs the deterministic checks: LLM-judged ones that a judge would decide, or metrics, are a usage error there."""
    if o.engine == "ray" and (o.metrics or (wants_judge(subject, o.no_judge, False) and config is not None and config.evaluation.llm is not None)):
        raise click.UsageError("--engine ray runs the deterministic checks: add --no-judge to skip LLM-judged ones, or use --engine local")
