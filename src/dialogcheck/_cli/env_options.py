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

from .._yaml import env_policy

#: Variables `${VAR}` may read under `--safe-env` without `--allow-env`: none, so nothing is readable by default.
DEFAULT_ALLOWED_ENV: tuple[str, ...] = ()


def allowed_names(safe_env: bool, allow_env: tuple[str, ...]) -> frozenset[str] | None:
    """The allow-list the flags ask for; None (any variable) unless `--safe-env` or `--allow-env` was given."""
    if not safe_env and not allow_env:
        return None
    return frozenset(DEFAULT_ALLOWED_ENV) | frozenset(allow_env)


def env_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--safe-env` and `--allow-env` to a command, and load its files under the policy they set."""

    @functools.wraps(command)
    def with_policy(*args: Any, safe_env: bool, allow_env: tuple[str, ...], **kwargs: Any) -> Any:
        with env_policy(allowed_names(safe_env, allow_env)):
            return command(*args, **kwargs)

    with_policy = click.option(
        "--allow-env", "allow_env", multiple=True, metavar="NAME", envvar="DIALOGCHECK_ALLOW_ENV",
        help="With --safe-env, let ${NAME} be read (repeatable; implies --safe-env).",
    )(with_policy)
    return click.option(
        "--safe-env", is_flag=True, envvar="DIALOGCHECK_SAFE_ENV",
        help="${VAR} in scenario, SOP and config files may read only variables named by --allow-env.",
    )(with_policy)
