"""`goals.assertions`: each item is `{key: ...}`, a check of the registry read by its class's schema."""

from __future__ import annotations

from .._fields import Problems
from .._yaml import Pos, YNode
from ..checks import ASSERTIONS, Check
from ..checks.load import Context, read_tagged
from ..events.model import FRAMEWORK_TOOLS


def parse_assertion(node: YNode, problems: Problems, index: int, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> Check | None:
    context = Context(framework_tools=framework_tools)
    return read_tagged(node, problems, f"assertion {index}", ASSERTIONS, "unknown assertion `{key}`{hint}", context)


def parse_assertions(node: YNode, problems: Problems, pos: Pos, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> tuple[Check, ...]:
    """`goals.assertions`; `framework_tools` is the project's setting (which tools are never counted runs)."""
    seq = problems.expect_seq(node, "`goals.assertions`", pos)
    if seq is None:
        return ()
    checks = (parse_assertion(item, problems, i + 1, framework_tools) for i, item in enumerate(seq.items))
    return tuple(check for check in checks if check is not None)


__all__ = ["parse_assertion", "parse_assertions"]
