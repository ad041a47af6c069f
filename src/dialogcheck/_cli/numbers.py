"""`Number`: click's `FloatRange` without NaN, for every option that takes a real number.

A range lets NaN through, since every comparison with it is false: `--timeout nan` timed out every run,
`--alpha nan` reached the statistics and broke there. A number option refuses it as a usage error.
"""

from __future__ import annotations

from typing import Any

import click


class Number(click.FloatRange):
    """A float within the range, never NaN."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number", param, ctx)
        return number
