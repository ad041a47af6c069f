"""`dialogcheck compare`: what changed between two batches, per key, per check, and overall with a paired test."""

from .changes import ALPHA, compare_results, compare_sides
from .document import comparison_document, comparison_json
from .model import CheckFlips, CheckId, Comparison, KeyChange, KeyRobustness, KindRobustness, Rate, RateRatio, Robustness, Run, Side, Status, Verdict
from .read import read_side
from .stats import INSTALL_HINT, MissingStats

__all__ = [
    "ALPHA",
    "INSTALL_HINT",
    "CheckFlips",
    "CheckId",
    "Comparison",
    "KeyChange",
    "KeyRobustness",
    "KindRobustness",
    "MissingStats",
    "Rate",
    "RateRatio",
    "Robustness",
    "Run",
    "Side",
    "Status",
    "Verdict",
    "compare_results",
    "compare_sides",
    "comparison_document",
    "comparison_json",
    "read_side",
]
