"""`--safe-env` and `--allow-env NAME`: which environment variables `${VAR}` in the files read may use.

In CI, scenario and SOP files may come from a branch nobody reviewed yet; with
`--safe-env` they cannot copy a secret of the job (an API key, a token) into a
prompt or a results file. `api_key_env` in `eval/conftest.yml` is not `${VAR}`
expansion and keeps working: the LLM client reads that variable itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from .._safe_env import ALLOW_ENV_VAR, SAFE_ENV_VAR, allowed_names
from .._yaml import env_policy


def env_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--safe-env` and `--allow-env` to a command, and load its files under the policy they set."""

    @functools.wraps(command)
    def with_policy(*args: Any, safe_env: bool, allow_env: tuple[str, ...], **kwargs: Any) -> Any:
        with env_policy(allowed_names(safe_env, allow_env)):
            return command(*args, **kwargs)

    with_policy = click.option(
        "--allow-env", "allow_env", multiple=True, metavar="NAME", envvar=ALLOW_ENV_VAR,
        help="With --safe-env, let ${NAME} be read (repeatable; implies --safe-env).",
    )(with_policy)
    return click.option(
        "--safe-env", is_flag=True, envvar=SAFE_ENV_VAR,
        help="${VAR} in scenario, SOP and config files may read only variables named by --allow-env.",
    )(with_policy)
