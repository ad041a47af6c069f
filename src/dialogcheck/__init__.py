"""dialogcheck: test conversational agents against recorded events and plain-language criteria."""

from __future__ import annotations

__version__ = "0.1.0"

from .batch import iter_results
from .checks.base import CheckResult, Outcome
from .errors import LoadError, Problem
from .evaluate import ConversationResult, CriterionResult, evaluate, evaluate_sop
from .events.load import iter_conversations, load_conversation
from .events.model import Conversation
from .scenario.load import load_scenario
from .scenario.model import Scenario
from .sop.load import load_sop

__all__ = [
    "CheckResult",
    "Conversation",
    "ConversationResult",
    "CriterionResult",
    "LoadError",
    "Outcome",
    "Problem",
    "Scenario",
    "__version__",
    "evaluate",
    "evaluate_sop",
    "iter_conversations",
    "iter_results",
    "load_conversation",
    "load_scenario",
    "load_sop",
]
