"""Which environment variables `${VAR}` may read, as the user asks for it: `--safe-env` and `--allow-env NAME`,
or their environment form, `DIALOGCHECK_SAFE_ENV=1` and `DIALOGCHECK_ALLOW_ENV="NAME ..."`.

Every entry point asks the same way: the commands through their options (click reads the two variables for
them), the pytest plugin and anything else without options through `policy_of_environment`, which reads the
variables as click does. The policy is then applied with `_yaml.env_policy` while files load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

SAFE_ENV_VAR = "DIALOGCHECK_SAFE_ENV"
#: Names separated by white space, as click splits a repeatable option's variable.
ALLOW_ENV_VAR = "DIALOGCHECK_ALLOW_ENV"
#: Variables `${VAR}` may read under `--safe-env` without `--allow-env`: none, so nothing is readable by default.
DEFAULT_ALLOWED_ENV: tuple[str, ...] = ()
#: What click takes for a flag's variable, after `strip().lower()`.
_YES = frozenset({"1", "true", "t", "yes", "y", "on"})
_NO = frozenset({"", "0", "false", "f", "no", "n", "off"})


def allowed_names(safe_env: bool, allow_env: Iterable[str]) -> frozenset[str] | None:
    """The allow-list the flags ask for; None (any variable) unless `--safe-env` or `--allow-env` was given."""
    allow = frozenset(allow_env)
    if not safe_env and not allow:
        return None
    return frozenset(DEFAULT_ALLOWED_ENV) | allow


def policy_of_environment(environ: Mapping[str, str]) -> frozenset[str] | None:
    """The allow-list `DIALOGCHECK_SAFE_ENV` and `DIALOGCHECK_ALLOW_ENV` ask for; ValueError when the first is no yes or no."""
    safe = environ.get(SAFE_ENV_VAR, "")
    if safe.strip().lower() not in _YES | _NO:
        raise ValueError(f"{SAFE_ENV_VAR}={safe!r} is neither yes nor no: set it to 1 (or true, yes, on) or 0 (or false, no, off)")
    return allowed_names(safe.strip().lower() in _YES, environ.get(ALLOW_ENV_VAR, "").split())
