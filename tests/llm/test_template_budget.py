"""A prompt template renders within a budget: nested `range(100000)` loops rendered for hours under --safe-env.

Loops over constant ranges past the budget are load errors at `file:line:col`
(exit 2 before anything runs); what only rendering shows stops the render with
an error naming the template, whichever bound it passed.
"""

from __future__ import annotations

import itertools
import json

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.llm.base import LLMError
from dialogcheck.llm.template_budget import MAX_RANGE, MAX_STEPS
from dialogcheck.llm.templates import Templates, template_problems
from tests.conftest import EXAMPLE
from tests.llm.test_template_sandbox import _project

NESTED = "Judge.\n{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}\n"
RANGE = f"`range` of 100,000 items passes the bound of {MAX_RANGE:,} a prompt template may loop over"

#: template text -> the `line:col: message` lines the load-time check gives.
STATIC_CASES = {
    NESTED: (f"2:13: {RANGE}",),
    "{% for i in range(1000) %}\n  {% for j in range(1000) %}\n    {% for k in range(2) %}{{ k }}{% endfor %}\n  {% endfor %}\n{% endfor %}": (
        f"3:8: the loops nested here run 2,000,000 times, past the budget of {MAX_STEPS:,} loop iterations a prompt template may take",
    ),
    "{% for i in range(0, 300000, 2) %}{% endfor %}": (f"1:13: {RANGE.replace('100,000', '150,000')}",),
}


@pytest.mark.parametrize("source", sorted(STATIC_CASES))
def test_loops_over_constant_ranges_past_the_budget_are_problems_at_their_position(source):
    assert [str(p) for p in template_problems(source, "t.j2")] == [f"t.j2:{line}" for line in STATIC_CASES[source]]


def test_loops_within_the_budget_have_no_problems():
    assert template_problems("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}{% for m in metrics %}{% endfor %}", "t.j2") == []


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{% for a in transcript %}{% for b in transcript %}{% endfor %}{% endfor %}", f"it took more than {MAX_STEPS:,} loop iterations and calls"),
        ("{% for i in range(transcript|length * 10) %}{% endfor %}", f"`range` of 20,000 items passes the bound of {MAX_RANGE:,}"),
        ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}", "loop iterations and calls"),
        ("{{ 'a' * 1000000000 }}", "`*` would make a value of 1,000,000,000 items"),
        ("{{ [1] * (transcript|length * 100000000) }}", "`*` would make a value of"),
        ("{{ 2 ** 1000000 }}", "`**` would make a number of more than 100,000 bits"),
        ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}", "it made a value of"),
        ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "it made a value of"),
        ("{% for i in range(10000) %}{{ transcript * 1000 }}{% endfor %}", "its text passed 16,000,000 characters"),
        # A width, a count or a format asks for a big value: refused before it is made, not after.
        ("{{ 'x'.center(10 ** 10) }}", "`center` was given a width of 10,000,000,000"),
        ("{{ transcript|center(10 ** 10) }}", "`center` was given a width of 10,000,000,000"),
        ("{{ transcript.ljust(10 ** 10) }}", "`ljust` was given a width of 10,000,000,000"),
        ("{{ '0'.zfill(10 ** 10) }}", "`zfill` was given a width of 10,000,000,000"),
        ("{{ transcript|indent(10 ** 10, true) }}", "`indent` was given a width of 10,000,000,000"),
        ("{{ transcript|wordwrap(10 ** 10) }}", "`wordwrap` was given a width of 10,000,000,000"),
        ("{{ '%10000000000d' % 1 }}", "a format of `%` asks for a width past the bound of 16,000,000"),
        ("{{ '%*d' % (10 ** 10, 1) }}", "a format of `%` asks for a width past the bound of 16,000,000"),
        ("{{ '%10000000000d'|format(1) }}", "a format of `%` asks for a width past the bound of 16,000,000"),
        ("{{ '{:>10000000000}'.format(1) }}", "a format of `format` asks for a width past the bound of 16,000,000"),
        ("{{ '{x:.10000000000f}'.format_map({'x': 1.5}) }}", "a format of `format_map` asks for a width past the bound"),
        ("{{ transcript|replace('x', transcript * 100) }}", "`replace` would make a value of 400,000,000 items"),
        ("{{ transcript.replace('x', transcript * 100) }}", "`replace` would make a value of 400,000,000 items"),
    ],
)
def test_a_render_over_its_budget_stops_with_an_error_naming_the_template(tmp_path, source, reason):
    template = tmp_path / "judge.j2"
    template.write_text(source)
    with pytest.raises(LLMError) as info:
        # a clock that stands still: the budget that decides is the one named, never a loaded machine's 30 s
        Templates({"metrics_judge_prompt": template}, clock=lambda: 0.0).render("metrics_judge_prompt", transcript="x" * 2000, ledger="", metrics=[])
    assert str(info.value).startswith(f"{template}: the template was stopped, over its rendering budget: ")
    assert reason in str(info.value)


def test_widths_and_formats_within_the_bounds_render_as_jinja2_renders_them(tmp_path):
    template = tmp_path / "judge.j2"
    template.write_text("[{{ 'x'.center(5) }}]|{{ '%3d' % 7 }}|{{ '%s and %s' % ('a', 'b') }}|{{ '{:,}'.format(20000000) }}|"
                        "{{ 'ab'|replace('a', 'c') }}|{{ 'x'|indent(2, true) }}|{{ 'x %s'|format('y') }}|{{ ['a', 'b']|join(', ') }}")
    rendered = Templates({"metrics_judge_prompt": template}).render("metrics_judge_prompt")
    assert rendered.rstrip("\n") == "[  x  ]|  7|a and b|20,000,000|cb|  x|x y|a, b"


def test_a_render_past_its_wall_clock_limit_stops(tmp_path):
    ticks = itertools.count(0, 1.0)  # each reading a second later: the limit passes after some 31,000 steps
    template = tmp_path / "judge.j2"
    template.write_text("{% for i in range(10000) %}{% for j in range(99) %}{% endfor %}{% endfor %}")
    with pytest.raises(LLMError, match=r"over its rendering budget: it rendered for more than 30 s"):
        Templates({"metrics_judge_prompt": template}, clock=lambda: next(ticks)).render("metrics_judge_prompt")


def test_the_built_in_prompts_render_within_the_budget():
    templates = Templates()
    text = templates.render("criteria_judge_prompt", transcript="t" * 900_000, ledger="l" * 90_000, criterion="c", criterion_id="criterion:0", rubric=None)
    assert len(text) > 990_000


def test_a_template_over_budget_stops_check_with_exit_2_at_its_position_before_anything_runs(tmp_path):
    path = _project(tmp_path / "project", NESTED)
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--scenario", str(tmp_path / "project/eval/scenarios/hello.yml"), str(EXAMPLE / "conversations")])
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert (error["file"], error["line"], error["column"]) == (str(path), 2, 13) and RANGE in error["message"]


def test_a_template_over_budget_only_when_rendered_errors_the_check_naming_it(tmp_path):
    loops = "{% for a in transcript %}{% for b in transcript %}{% for c in transcript %}{% endfor %}{% endfor %}{% endfor %}"
    path = _project(tmp_path / "project", loops)
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--scenario", str(tmp_path / "project/eval/scenarios/hello.yml"), str(EXAMPLE / "conversations" / "damaged_card_express.jsonl")])
    assert result.exit_code == 3, result.output
    detail = json.loads(result.stdout)["criteria"][0]["detail"]
    assert detail.startswith(f"judge error: {path}: the template was stopped, over its rendering budget: it took more than")
