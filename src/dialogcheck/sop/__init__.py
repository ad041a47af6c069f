"""Standard operating procedures: steps of SOP evaluators, their scoring, and SOP files."""

from .load import load_sop, parse_steps
from .model import Sop, Step, StepResult, StepSet, StepSetResult

__all__ = ["Sop", "Step", "StepResult", "StepSet", "StepSetResult", "load_sop", "parse_steps"]
