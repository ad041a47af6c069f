"""dialogcheck: test conversational agents against recorded events and plain-language criteria.

The public names are imported on first use (module `__getattr__`), so
`import dialogcheck._cli.main` and the CLI's quick commands do not pay for
the whole API.
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module (relative to this package) that defines it.
_EXPORTS = {
    "CheckResult": ".checks.base",
    "Conversation": ".events.model",
    "ConversationResult": ".evaluate",
    "CriterionResult": ".evaluate",
    "LoadError": ".errors",
    "Outcome": ".checks.base",
    "Problem": ".errors",
    "Scenario": ".scenario.model",
    "evaluate": ".evaluate",
    "evaluate_sop": ".evaluate",
    "iter_conversations": ".events.load",
    "iter_results": ".batch",
    "load_conversation": ".events.load",
    "load_scenario": ".scenario.load",
    "load_sop": ".sop.load",
}

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:
    from .batch import iter_results
    from .checks.base import CheckResult, Outcome
    from .errors import LoadError, Problem
    from .evaluate import ConversationResult, CriterionResult, evaluate, evaluate_sop
    from .events.load import iter_conversations, load_conversation
    from .events.model import Conversation
    from .scenario.load import load_scenario
    from .scenario.model import Scenario
    from .sop.load import load_sop


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(ModuleType):
    """Keeps `dialogcheck.evaluate` the function when the `evaluate` module is first imported.

    Importing a submodule sets it as an attribute of the package; eagerly
    imported, the public function was bound afterwards and won. Lazily, the
    module would win, so a submodule never replaces a public name.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
