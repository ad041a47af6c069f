"""Prompt templates: Jinja2 files shipped with the package, overridable per project.

`eval/conftest.yml` may point `criteria_judge_prompt`, `metrics_judge_prompt`,
`blame_prompt` or `simulated_user_prompt` at a file of the project; the built-in text is
used otherwise. Undefined variables are errors, so a typo in a custom
template fails loudly instead of sending an empty prompt.

A project's template is code from a branch nobody may have reviewed, so every
template renders in Jinja2's immutable sandbox: it can read the prompt's
variables, never Python's internals (`cycler.__init__.__globals__.os` is
refused). `template_problems` finds such reaches when the config is loaded,
with their line and column, before anything runs; whatever it cannot see
(an attribute name computed while rendering) the sandbox still refuses.
Rendering has a budget (`template_budget`): a template that loops or
computes past it is an error naming its file, found at load time where the
loops are over constant ranges.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import Problem
from .base import LLMError

#: Built-in template of each prompt, by its conftest key.
BUILT_IN = {
    "criteria_judge_prompt": ("dialogcheck.judge", "prompts/criteria_judge.j2"),
    "metrics_judge_prompt": ("dialogcheck.judge", "prompts/metrics_judge.j2"),
    "blame_prompt": ("dialogcheck.judge", "prompts/blame.j2"),
    "simulated_user_prompt": ("dialogcheck.simulate", "prompts/simulated_user.j2"),
    "user_review_prompt": ("dialogcheck.simulate.review", "prompts/user_review.j2"),
}
#: Filters whose string argument at this position names an attribute to read (`attr('__class__')`).
_ATTRIBUTE_ARGUMENT = {"attr": 0, "selectattr": 0, "rejectattr": 0, "groupby": 0}
#: Tags that would load another template: prompts are one file each, with no loader behind them.
_LOADING_TAGS = {"Extends": "extends", "Include": "include", "Import": "import", "FromImport": "from ... import"}
_TAG_OPENING = re.compile(r"\{[{%#]")
_NEWLINE = re.compile(r"\r\n|\r|\n")


def _sandbox() -> Any:
    try:
        from jinja2 import StrictUndefined

        from .template_budget import BudgetedSandbox
    except ImportError:  # pragma: no cover - the LLM extras bring jinja2
        raise LLMError("prompt templates need jinja2: pip install 'dialogcheck[openai]' or 'dialogcheck[anthropic]'") from None
    return BudgetedSandbox(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)


def unsafe_attribute(name: str) -> bool:
    """An attribute the sandbox never lets a template read, on any object: `_`-names, `mro`, frames and code."""
    return name.startswith("_") or name in _never_read()


@functools.cache
def _never_read() -> frozenset[str]:
    """The names jinja2's sandbox refuses whatever they are read on (besides `_`-names)."""
    from jinja2 import sandbox

    return frozenset(
        {"mro"}
        | sandbox.UNSAFE_FUNCTION_ATTRIBUTES
        | sandbox.UNSAFE_METHOD_ATTRIBUTES
        | sandbox.UNSAFE_GENERATOR_ATTRIBUTES
        | sandbox.UNSAFE_COROUTINE_ATTRIBUTES
        | sandbox.UNSAFE_ASYNC_GENERATOR_ATTRIBUTES
    )


def template_problems(source: str, file: str) -> list[Problem]:
    """Every reach for an unsafe attribute, loading tag, loop past the budget or syntax error in a template, at its line and column.

    jinja2 is optional (the LLM extras bring it); without it no template is ever rendered, so none is checked.
    """
    try:
        import jinja2
    except ImportError:  # pragma: no cover - the LLM extras bring jinja2
        return []
    lines = _NEWLINE.split(source)  # the line ends jinja2 counts (not str.splitlines's form feeds and separators)
    try:
        tree = _sandbox().parse(source)
    except jinja2.TemplateSyntaxError as err:
        line = err.lineno or 1
        return [Problem(f"invalid template: {err.message}", file, line, _tag_column(lines, line))]
    seen: dict[tuple[int, str], int] = {}  # a name met again on the same line points at its next occurrence
    problems = []
    from .template_budget import budget_problems

    for message, line, name in (*_unsafe_reaches(tree), *budget_problems(tree)):
        nth = seen[line, name] = seen.get((line, name), -1) + 1
        problems.append(Problem(message, file, line, _name_column(lines, line, name, nth)))
    return sorted(problems, key=lambda p: (p.line, p.column))


def _unsafe_reaches(tree: Any) -> Iterator[tuple[str, int, str]]:
    """(message, line, the name to point at) for each node of a parsed template that the sandbox would refuse."""
    from jinja2 import nodes

    refused = "a template may read the prompt's variables, not Python's internals (names starting with `_`, `mro`, frames, code)"
    loading = tuple(getattr(nodes, kind) for kind in _LOADING_TAGS)
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter, nodes.Test, *loading)):
        for name in _names_read(node):
            if any(unsafe_attribute(part) for part in name.split(".")):
                yield f"`{name}` is not allowed in a prompt template: {refused}", node.lineno, name
        tag = _LOADING_TAGS.get(type(node).__name__)
        if tag is not None:
            yield f"`{{% {tag} %}}` is not allowed in a prompt template: a prompt is one file, it loads no other template", node.lineno, tag.split()[0]


def _names_read(node: Any) -> Iterator[str]:
    """The attribute names a node reads when they are written out: `x.name`, `x['name']`, `x|attr('name')`."""
    from jinja2 import nodes

    if isinstance(node, nodes.Getattr):
        yield node.attr
    elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
        yield node.arg.value
    elif isinstance(node, (nodes.Filter, nodes.Test)):
        constants = [a.value if isinstance(a, nodes.Const) else None for a in node.args]
        position = _ATTRIBUTE_ARGUMENT.get(node.name)
        if node.name == "map" and constants[:1] == ["attr"]:  # map('attr', NAME)
            position = 1
        if position is not None and len(constants) > position and isinstance(named := constants[position], str):
            yield named
        for keyword in node.kwargs:
            if keyword.key == "attribute" and isinstance(keyword.value, nodes.Const) and isinstance(keyword.value.value, str):
                yield keyword.value.value


def _name_column(lines: list[str], line: int, name: str, nth: int = 0) -> int:
    """Where `name` shows on the line for the `nth` time (the parser keeps lines only), else where the line's first tag opens."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    found = text.find(name)
    for _ in range(nth):
        if found < 0:
            break
        found = text.find(name, found + 1)
    return found + 1 if found >= 0 else _tag_column(lines, line)


def _tag_column(lines: list[str], line: int) -> int:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    found = _TAG_OPENING.search(text)
    return found.start() + 1 if found else 1


class Templates:
    """Renders prompts by conftest key, from the project's override or the built-in file, in the sandbox."""

    def __init__(self, overrides: Mapping[str, Path] | None = None, clock: Callable[[], float] = time.monotonic):
        self._overrides = dict(overrides or {})
        #: What a render's wall-clock limit is read from (tests pass one that jumps).
        self.clock = clock
        self._compiled: dict[str, Any] = {}
        self._variables: dict[str, frozenset[str]] = {}

    @cached_property
    def _environment(self) -> Any:
        """The sandbox, made when a template is first parsed: reading a template's source needs no jinja2 (the
        review of a scripted batch reads the prompts' words, and the core install has no jinja2)."""
        return _sandbox()

    def source(self, key: str) -> str:
        if key in self._overrides:
            return self._overrides[key].read_text(encoding="utf-8")
        package, name = BUILT_IN[key]
        return resources.files(package).joinpath(name).read_text(encoding="utf-8")

    def variables(self, key: str) -> frozenset[str]:
        """The names the template reads from its variables: which form of prompt it is, what it shows.

        An unparsable template reads none here; rendering it says what is wrong.
        """
        found = self._variables.get(key)
        if found is None:
            import jinja2
            from jinja2 import meta

            try:
                found = frozenset(meta.find_undeclared_variables(self._environment.parse(self.source(key))))
            except jinja2.TemplateSyntaxError:
                found = frozenset()
            self._variables[key] = found
        return found

    def where(self, key: str) -> str:
        """The file a prompt comes from: the project's override, else the built-in one."""
        return str(self._overrides.get(key, BUILT_IN[key][1]))

    def render(self, key: str, **variables: Any) -> str:
        template = self._compiled.get(key)
        if template is None:
            import jinja2

            try:
                template = self._compiled[key] = self._environment.from_string(self.source(key))
            except jinja2.TemplateSyntaxError as err:
                raise LLMError(f"{self.where(key)}:{err.lineno}: invalid template: {err.message}") from None
        from .template_budget import Budget, OverBudget, render_within

        try:
            rendered = render_within(template, variables, Budget(self.clock))
        except OverBudget as err:
            raise LLMError(f"{self.where(key)}: the template was stopped, over its rendering budget: {err}") from None
        except Exception as err:  # noqa: BLE001 - jinja2.UndefinedError, the sandbox's SecurityError and friends: a broken custom template
            import jinja2

            refused = " (refused by the template sandbox)" if isinstance(err, jinja2.exceptions.SecurityError) else ""
            raise LLMError(f"{self.where(key)}: the template could not be rendered{refused}: {err}") from None
        return _one_final_newline(rendered)


def _one_final_newline(text: str) -> str:
    """The text stripped, with one newline at its end; not copied when it already is (a prompt can be megabytes)."""
    if text.endswith("\n") and not text[-2:-1].isspace() and not text[:1].isspace():
        return text
    return text.strip() + "\n"
