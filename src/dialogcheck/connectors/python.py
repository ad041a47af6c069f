"""A Python callable as the agent: `FUNC(conversation_id, text)` answering like the HTTP protocol.

`text` is None to open the conversation; a function that takes an
`initial_slots` keyword gets the scenario's memory then. When the scenario
has an environment, every call gets it as the `environment` keyword (its
`tools` and `call(name, arguments)`). The function may be
sync or async: a sync one runs in a worker thread, so a slow agent holds up
only its own conversation. The module is imported when the connector is
built, so a wrong name is bad input reported before any run.

Whatever the agent raises, `SystemExit` and `KeyboardInterrupt` included,
errors its run and nothing more: the agent is code under test, and only a
signal to dialogcheck itself (which cancels the batch) may end the batch.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .._project_import import import_from_project
from ..environment.run import AgentEnvironment
from .base import AgentError, AgentSetupError, AgentTurn, describe
from .daemon_pool import DaemonPool
from .json_values import json_copy
from .protocol import turn_from_answer

_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
#: Sync agents in flight at once; sized for I/O-bound agents, since the default executor has only cpu+4 threads.
DEFAULT_THREADS = 64


def split_target(target: str) -> tuple[str, str]:
    """`MODULE:FUNC` into its parts (`FUNC` may be dotted, e.g. `Bot.handle`)."""
    module, sep, func = target.partition(":") if isinstance(target, str) else ("", "", "")
    if not sep or not _DOTTED.fullmatch(module) or not _DOTTED.fullmatch(func):
        raise AgentSetupError(f"a python agent is named MODULE:FUNCTION (like `my_agent:respond`), got {target!r}")
    return module, func


def _import(module_name: str, root: Path) -> Any:
    """Import the agent's module from the project (`import_from_project`), its failures as `AgentSetupError`."""
    try:
        return import_from_project(module_name, root)
    except ModuleNotFoundError as err:
        if err.name is not None and (module_name == err.name or module_name.startswith(err.name + ".")):
            raise AgentSetupError(f"cannot import agent module `{module_name}`: no such module in {root} or on the Python path") from None
        raise AgentSetupError(f"importing agent module `{module_name}` failed: ModuleNotFoundError: {err}") from err
    except (Exception, SystemExit) as err:  # a module that calls sys.exit() on import is a broken agent too
        raise AgentSetupError(f"importing agent module `{module_name}` failed: {describe(err)}") from err


def _resolve(target: str, root: Path) -> Callable[..., Any]:
    module_name, func_name = split_target(target)
    obj = _import(module_name, root)
    for part in func_name.split("."):
        if not hasattr(obj, part):
            where = getattr(sys.modules.get(module_name), "__file__", None) or module_name
            raise AgentSetupError(f"agent module `{module_name}` ({where}) has no `{func_name}`")
        obj = getattr(obj, part)
    if not callable(obj):
        raise AgentSetupError(f"agent `{target}` is not callable (it is {type(obj).__name__})")
    try:
        inspect.signature(obj).bind("conversation-id", None)
    except TypeError:
        raise AgentSetupError(f"agent `{target}` must take (conversation_id, text) as its first two arguments") from None
    except ValueError:
        pass  # no signature to inspect (a builtin): find out on the first call
    return obj


def _really_cancelled(err: BaseException) -> bool:
    """Whether a `CancelledError` is the batch cancelling this run (a time limit, Ctrl-C), not one the agent raised."""
    task = asyncio.current_task()
    return isinstance(err, asyncio.CancelledError) and task is not None and task.cancelling() > 0


def _takes_keyword(func: Callable[..., Any], name: str) -> bool:
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return any(p.kind is inspect.Parameter.VAR_KEYWORD or (p.name == name and p.kind in keyword) for p in parameters)


class PythonConnector:
    """Calls the agent in process; each call is bounded by `timeout` seconds when one is given."""

    def __init__(self, target: str, project_root: Path, timeout: float | None = None, threads: int = DEFAULT_THREADS, func: Callable[..., Any] | None = None):
        """`func`, when given, is the agent itself (a test's own function), and `target` only names it in messages."""
        self.target = target
        self.timeout = timeout
        self._func = func if func is not None else _resolve(target, Path(project_root).resolve())
        self._is_async = inspect.iscoroutinefunction(self._func)
        self._takes_slots = _takes_keyword(self._func, "initial_slots")
        self._takes_environment = _takes_keyword(self._func, "environment")
        self._threads = threads
        self._executor: DaemonPool | None = None

    async def check_reachable(self) -> None:
        """Always reachable: the function was found when the connector was built."""

    async def open(self, conversation_id: str, initial_slots: Mapping[str, Any], environment: AgentEnvironment | None = None) -> AgentTurn:
        given = self._environment(environment)
        if self._takes_slots:
            return await self._call(conversation_id, None, {"initial_slots": dict(initial_slots), **given})
        if initial_slots:
            names = ", ".join(initial_slots)
            raise AgentError(f"the scenario sets initial_slots ({names}), but `{self.target}` takes no `initial_slots` keyword to receive them")
        return await self._call(conversation_id, None, given)

    async def send(self, conversation_id: str, text: str, environment: AgentEnvironment | None = None) -> AgentTurn:
        return await self._call(conversation_id, text, self._environment(environment))

    def _environment(self, environment: AgentEnvironment | None) -> dict[str, Any]:
        """The `environment` keyword of a call, for a run with one; an agent that cannot take it errors the run, as
        its tools would otherwise be answered by no environment at all."""
        if environment is None:
            return {}
        if not self._takes_environment:
            raise AgentError(f"the scenario has an environment, but `{self.target}` takes no `environment` keyword to be handed it")
        return {"environment": environment}

    async def _invoke(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self._is_async:
            return await self._func(*args, **kwargs)
        if self._executor is None:
            self._executor = DaemonPool(self._threads, "dialogcheck-agent")
        # What asyncio.to_thread does, on a pool of our own size whose threads never hold up the end of the process.
        call = functools.partial(contextvars.copy_context().run, self._func, *args, **kwargs)
        answer = await asyncio.wrap_future(self._executor.submit(call))
        return await answer if inspect.isawaitable(answer) else answer

    async def _call(self, conversation_id: str, text: str | None, kwargs: dict[str, Any]) -> AgentTurn:
        limit = asyncio.timeout(self.timeout)
        try:
            async with limit:
                answer = await self._invoke((conversation_id, text), kwargs)
        except BaseException as err:  # SystemExit, KeyboardInterrupt: the agent's, so the run's error
            if _really_cancelled(err):
                raise
            if limit.expired():
                raise AgentError(f"agent `{self.target}` did not answer within {self.timeout:g} s (timed out)") from None
            raise AgentError(f"agent `{self.target}` raised {describe(err)}") from err
        where = f"the answer of `{self.target}`"
        return turn_from_answer(json_copy(answer, where), where)

    async def recorded_events(self, conversation_id: str) -> None:
        return None

    async def aclose(self) -> None:
        if self._executor is not None:
            executor, self._executor = self._executor, None
            executor.shutdown()
