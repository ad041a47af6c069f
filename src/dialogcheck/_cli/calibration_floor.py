"""`--require-calibration MIN_KAPPA`, shared by `check` and `run`: a judge without a calibration this good decides nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .numbers import Number

REQUIRE_CALIBRATION_OPTION = click.option(
    "--require-calibration", "min_kappa", type=Number(-1.0, 1.0), metavar="MIN_KAPPA",
    help="LLM-judged checks count only when `dialogcheck calibrate` found the judge (provider, model, options, prompt "
    "template) agreeing with human labels at this Cohen's kappa or more; otherwise they are uncalibrated: errors "
    "(exit 3 when nothing failed), shown with the judge's verdict.",
)


def require_calibration(judge: Any, root: Path | None, min_kappa: float | None) -> None:
    """Mark `judge` uncalibrated (its judgements become `error`) when its calibration is missing or below the floor."""
    if judge is None or min_kappa is None:
        return
    from ..calibration import CALIBRATION_FOLDER, uncalibrated_reason

    judge.uncalibrated = (
        uncalibrated_reason(root, judge, min_kappa) if root is not None else f"no project folder to hold {CALIBRATION_FOLDER}"
    )
