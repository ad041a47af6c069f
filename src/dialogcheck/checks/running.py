"""Running one check on one conversation, where a check that breaks becomes data, never a crash.

Assertions and SOP steps both run through `run_check`, so a check that
raises reads the same wherever it is: an `error` result that names the
exception and keeps it (the run's file then holds its traceback).
"""

from __future__ import annotations

from ..events.model import Conversation
from .base import Check, CheckResult, Outcome
from .patterns import PatternTimeout


def run_check(check: Check, conversation: Conversation) -> CheckResult:
    """Evaluate one check; one that crashes is an `error` result with the exception it raised."""
    try:
        return check.evaluate(conversation)
    except PatternTimeout as err:  # a pattern that took its whole budget: said as such, not as a crash
        return CheckResult(check, Outcome.ERROR, str(err))
    except Exception as err:  # noqa: BLE001 - a bug in one check must not hide the others
        return CheckResult(check, Outcome.ERROR, f"the check crashed: {type(err).__name__}: {err}", (), err)
