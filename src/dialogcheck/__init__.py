"""dialogcheck: test conversational agents against recorded events and plain-language criteria.

The public names are imported on first use (module `__getattr__`), so
`import dialogcheck._cli.main` and the CLI's quick commands do not pay for
the whole API.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module (relative to this package) that defines it.
_EXPORTS = {
    "BatchResult": ".results.model",
    "CheckResult": ".checks.base",
    "Comparison": ".compare.model",
    "Conversation": ".events.model",
    "ConversationResult": ".results.model",
    "DialogcheckError": ".errors",
    "JudgedResult": ".checks.judged",
    "LoadError": ".errors",
    "Outcome": ".checks.base",
    "Problem": ".errors",
    "RunResult": ".results.model",
    "Scenario": ".scenario.model",
    "UnfinishedBatch": ".checking",
    "check_conversations": ".checking",
    "compare_results": ".compare.changes",
    "evaluate": ".judging",
    "evaluate_sop": ".judging",
    "iter_conversations": ".events.load",
    "iter_results": ".judging",
    "load_conversation": ".events.load",
    "load_scenario": ".scenario.load",
    "load_sop": ".sop.load",
    "run_scenarios": ".batches",
}

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:
    from .batches import run_scenarios
    from .checking import UnfinishedBatch, check_conversations
    from .checks.base import CheckResult, Outcome
    from .checks.judged import JudgedResult
    from .compare.changes import compare_results
    from .compare.model import Comparison
    from .errors import DialogcheckError, LoadError, Problem
    from .events.load import iter_conversations, load_conversation
    from .events.model import Conversation
    from .judging import evaluate, evaluate_sop, iter_results
    from .results.model import BatchResult, ConversationResult, RunResult
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
