"""Prompt templates: Jinja2 files shipped with the package, overridable per project.

`eval/conftest.yml` may point `criteria_judge_prompt`, `metrics_judge_prompt`
or `simulated_user_prompt` at a file of the project; the built-in text is
used otherwise. Undefined variables are errors, so a typo in a custom
template fails loudly instead of sending an empty prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from .base import LLMError

#: Built-in template of each prompt, by its conftest key.
BUILT_IN = {
    "criteria_judge_prompt": ("dialogcheck.judge", "prompts/criteria_judge.j2"),
    "metrics_judge_prompt": ("dialogcheck.judge", "prompts/metrics_judge.j2"),
    "simulated_user_prompt": ("dialogcheck.simulate", "prompts/simulated_user.j2"),
}


class Templates:
    """Renders prompts by conftest key, from the project's override or the built-in file."""

    def __init__(self, overrides: Mapping[str, Path] | None = None):
        try:
            import jinja2
        except ImportError:  # pragma: no cover - the LLM extras bring jinja2
            raise LLMError("prompt templates need jinja2: pip install 'dialogcheck[openai]' or 'dialogcheck[anthropic]'") from None
        self._environment = jinja2.Environment(
            undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
        )
        self._overrides = dict(overrides or {})
        self._compiled: dict[str, Any] = {}

    def source(self, key: str) -> str:
        if key in self._overrides:
            return self._overrides[key].read_text(encoding="utf-8")
        package, name = BUILT_IN[key]
        return resources.files(package).joinpath(name).read_text(encoding="utf-8")

    def render(self, key: str, **variables: Any) -> str:
        template = self._compiled.get(key)
        if template is None:
            import jinja2

            try:
                template = self._compiled[key] = self._environment.from_string(self.source(key))
            except jinja2.TemplateSyntaxError as err:
                where = self._overrides.get(key, BUILT_IN[key][1])
                raise LLMError(f"{where}:{err.lineno}: invalid template: {err.message}") from None
        try:
            rendered = template.render(**variables)
        except Exception as err:  # jinja2.UndefinedError and friends: a broken custom template
            where = self._overrides.get(key, BUILT_IN[key][1])
            raise LLMError(f"{where}: the template could not be rendered: {err}") from None
        return _one_final_newline(rendered)


def _one_final_newline(text: str) -> str:
    """The text stripped, with one newline at its end; not copied when it already is (a prompt can be megabytes)."""
    if text.endswith("\n") and not text[-2:-1].isspace() and not text[:1].isspace():
        return text
    return text.strip() + "\n"
