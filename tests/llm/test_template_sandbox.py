"""Prompt templates render in Jinja2's sandbox, and a reach for Python's internals is a load error at its position.

The payload is the security review's: a project's `prompts/judge.j2` holding
`{{ cycler.__init__.__globals__.os.system('id > PWNED') }}` ran the command.
Each case is checked where a user meets it: `dialogcheck validate`, `check` and
`run` (run in process, `tests/inprocess.py`) stop with exit 2 and `file:line:col` before anything
runs, and no file is ever created; what the load-time check cannot see (a
name computed while rendering) the sandbox refuses, naming the template.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dialogcheck.llm.base import LLMError
from dialogcheck.llm.templates import Templates, template_problems
from tests import inprocess
from tests.conftest import EXAMPLE
from tests.reliability.peers import clean_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"
REFUSED = "is not allowed in a prompt template: a template may read the prompt's variables, not Python's internals (names starting with `_`, `mro`, frames, code)"
PAYLOAD = "{{ cycler.__init__.__globals__.os.system('id > PWNED') }}"

#: template text -> the `line:col: message` lines the load-time check gives.
STATIC_CASES = {
    f"Judge this.\n{PAYLOAD}\n": (f"2:11: `__init__` {REFUSED}", f"2:20: `__globals__` {REFUSED}"),
    "{{ cycler|attr('__class__') }}": (f"1:17: `__class__` {REFUSED}",),
    "{{ transcript[ '__globals__' ] }}": (f"1:17: `__globals__` {REFUSED}",),
    "{{ transcript.__class__.mro() }}": (f"1:15: `__class__` {REFUSED}", f"1:25: `mro` {REFUSED}"),
    "{{ metrics|map(attribute='x.__class__')|list }}": (f"1:27: `x.__class__` {REFUSED}",),
    "{{ metrics|map('attr', '__len__')|list }}": (f"1:25: `__len__` {REFUSED}",),
    "{{ lipsum.__globals__ }} and {{ joiner.__globals__ }}": (f"1:11: `__globals__` {REFUSED}", f"1:40: `__globals__` {REFUSED}"),
    "{% include '/etc/passwd' %}": ("1:4: `{% include %}` is not allowed in a prompt template: a prompt is one file, it loads no other template",),
    "ok\n{{ criterion }\n": ("2:1: invalid template: unexpected '}'",),
    "{% if %}": ("1:1: invalid template: Expected an expression, got 'end of statement block'",),
    "a form feed \x0c stays on its line\r\n{{ x.__y__ }}\r{{ z._q }}": (f"2:6: `__y__` {REFUSED}", f"3:6: `_q` {REFUSED}"),
}


@pytest.mark.parametrize("source", sorted(STATIC_CASES))
def test_unsafe_reaches_and_bad_syntax_are_problems_at_their_position(source):
    assert [str(p) for p in template_problems(source, "t.j2")] == [f"t.j2:{line}" for line in STATIC_CASES[source]]


@pytest.mark.parametrize(
    "source",
    ["{{ criterion }}", "{{ transcript|replace('_', ' ') }} {{ metrics|join('_') }}", "{% for m in metrics %}{{ descriptions[m] }}{% endfor %}"],
)
def test_ordinary_templates_have_no_problems(source):
    assert template_problems(source, "t.j2") == []


def test_the_built_in_templates_pass_the_check():
    templates = Templates()
    for key in ("criteria_judge_prompt", "metrics_judge_prompt", "simulated_user_prompt"):
        assert template_problems(templates.source(key), key) == []


@pytest.mark.parametrize(
    "source",
    [
        PAYLOAD,  # what the load-time check refuses, rendered anyway (a library user building Templates by hand)
        "{{ (cycler|attr('__in' ~ 'it__')|attr('__glo' ~ 'bals__'))['os'].system('id > PWNED') }}",  # names it cannot see
        "{{ ('{0.__class__.__init__.__globals__}').format(cycler) }}",
        "{% set x = metrics.append('changed') %}{{ metrics }}",  # the immutable sandbox: no mutation of the prompt's data
    ],
)
def test_the_sandbox_stops_what_the_check_cannot_see_and_names_the_template(tmp_path, monkeypatch, source):
    monkeypatch.chdir(tmp_path)
    template = tmp_path / "judge.j2"
    template.write_text(source)
    with pytest.raises(LLMError) as info:
        Templates({"metrics_judge_prompt": template}).render("metrics_judge_prompt", metrics=["tone"], transcript="", ledger="", descriptions={})
    assert str(info.value).startswith(f"{template}: the template could not be rendered")
    assert not (tmp_path / "PWNED").exists()


def _project(root: Path, template: str, key: str = "criteria_judge_prompt") -> Path:
    """A project whose judge (or simulated user) prompt is `template`; the LLM endpoint is a closed port, never reached."""
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "prompts").mkdir()
    (root / "prompts" / "custom.j2").write_text(template)
    role = "evaluation" if key != "simulated_user_prompt" else "simulation"
    (root / "eval" / "conftest.yml").write_text(
        "agent: {type: python, callable: 'agent:respond'}\n"
        f"{role}:\n"
        f"  {key}: prompts/custom.j2\n"
        "  llm: {provider: openai_compatible, base_url: 'http://127.0.0.1:9/v1', model: m, max_retries: 0, timeout: 1}\n"
    )
    (root / "agent.py").write_text("def respond(conversation_id, text, initial_slots=None):\n    return {'messages': [{'text': 'Hello'}], 'events': []}\n")
    (root / "eval" / "scenarios" / "hello.yml").write_text(
        "scenario:\n  name: Hello\n  simulation_context: say hi\n  script: [hi]\n  goals:\n    criteria: [The agent greets]\n"
    )
    return root / "prompts" / "custom.j2"


def _dialogcheck(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return inprocess.run([DIALOGCHECK, *args], cwd=cwd, env=clean_env(), text=True, timeout=300)


COMMANDS = {
    "validate": lambda root: ["validate", str(root)],
    "check": lambda root: ["check", "--scenario", str(root / "eval" / "scenarios" / "hello.yml"), str(EXAMPLE / "conversations")],
    "run": lambda root: ["run", str(root), "--results", str(root / "results")],
}
TEMPLATES = {
    "payload": (PAYLOAD, (f"1:11: `__init__` {REFUSED}", f"1:20: `__globals__` {REFUSED}")),
    "attr filter": ("{{ cycler|attr('__init__')|attr('__globals__') }}", (f"1:17: `__init__` {REFUSED}", f"1:34: `__globals__` {REFUSED}")),
    "subscript": ("x\n{{ cycler.__init__['__globals__']['os'].system('id > PWNED') }}", (f"2:11: `__init__` {REFUSED}", f"2:21: `__globals__` {REFUSED}")),
    "mro": ("{{ criterion.__class__.mro()[1].__subclasses__() }}", (f"1:14: `__class__` {REFUSED}", f"1:24: `mro` {REFUSED}", f"1:33: `__subclasses__` {REFUSED}")),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(TEMPLATES))
def test_a_template_reaching_for_internals_stops_every_command_before_anything_runs(tmp_path, command, case):
    template, lines = TEMPLATES[case]
    path = _project(tmp_path / "project", template)
    done = _dialogcheck(tmp_path, *COMMANDS[command](tmp_path / "project"))
    assert done.returncode == 2, done.stdout + done.stderr
    printed = (done.stdout if command == "validate" else done.stderr).splitlines()
    assert [line for line in printed if line.startswith(str(path))] == [f"{path}:{line}" for line in lines]
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "project" / "results").exists()
    assert not list(tmp_path.rglob("PWNED"))


def test_the_simulated_user_prompt_is_checked_too(tmp_path):
    path = _project(tmp_path / "project", PAYLOAD, "simulated_user_prompt")
    done = _dialogcheck(tmp_path, "validate", str(tmp_path / "project"))
    assert done.returncode == 2
    assert f"{path}:1:11: `__init__` {REFUSED}" in done.stdout.splitlines()


def test_what_the_check_cannot_see_errors_the_run_naming_the_template_and_runs_nothing(tmp_path):
    dynamic = "{{ (cycler|attr('__in' ~ 'it__')|attr('__glo' ~ 'bals__'))['os'].system('id > PWNED') }}"
    path = _project(tmp_path / "project", dynamic)
    done = _dialogcheck(tmp_path, "run", str(tmp_path / "project"), "--results", str(tmp_path / "results"), "--format", "json")
    assert done.returncode == 3, done.stdout + done.stderr
    run = (tmp_path / "results" / "hello" / "run_1.json").read_text()
    assert f"judge error: {path}: the template could not be rendered" in run
    assert not list(tmp_path.rglob("PWNED"))
