"""Quick commands import only what they need: no LLM SDKs, HTTP clients or browser tooling.

Each probe runs the CLI's `main` in a fresh Python (a real subprocess, the
same venv) and reports `sys.modules` afterwards. Timing is measured by
`benchmarks/cold_start.py`, not here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import COMMANDS, LazyGroup, cli
from tests.conftest import EXAMPLE, REPO, plain_env

#: Heavy optional parts (LLM SDKs, retries, templates, schemas, HTTP, browsers) no quick command may load.
HEAVY = ("openai", "anthropic", "ray", "playwright", "jinja2", "jsonschema", "httpx", "aiohttp", "tenacity", "xmlschema", "opentelemetry")

PROBE = """
import json, sys
sys.argv = ["dialogcheck", *json.loads(sys.argv[1])]
from dialogcheck._cli.main import main
try:
    main()
    code = 0
except SystemExit as exit:
    code = exit.code
sys.stderr.write("\\nPROBE " + json.dumps({"exit": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def probe(*args: str) -> tuple[int, str, str, set[str]]:
    """Exit code, stdout, stderr and the imported module names of `dialogcheck ARGS` in a fresh process (piped)."""
    env = plain_env()
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    stderr, report = done.stderr.rsplit("\nPROBE ", 1)
    report = json.loads(report)
    return report["exit"], done.stdout, stderr, set(report["modules"])


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_help_imports_neither_heavy_parts_nor_yaml_nor_rich():
    code, out, _, modules = probe("--help")
    assert code == 0
    assert "Commands:" in out and "validate" in out
    assert "click" in modules  # the probe sees what was imported
    assert top_level(modules).isdisjoint(HEAVY + ("rich",)), sorted(top_level(modules) & {*HEAVY, "rich"})
    assert "ruamel.yaml" not in modules
    assert {m for m in modules if m.startswith("dialogcheck")} == {"dialogcheck", "dialogcheck._cli", "dialogcheck._cli.main"}


def test_validate_of_the_example_imports_no_heavy_parts():
    code, out, _, modules = probe("validate", str(EXAMPLE))
    assert code == 0, out
    assert "17 files, 17 valid, 0 with problems" in out
    assert {"ruamel.yaml", "dialogcheck._cli.validate", "dialogcheck.scenario.load"} <= modules
    schemas = {"jsonschema"}  # the example's environment file: its tools' JSON Schemas are checked
    assert top_level(modules).isdisjoint(set(HEAVY) - schemas), sorted(top_level(modules) & (set(HEAVY) - schemas))
    assert "rich" not in top_level(modules)  # piped: plain text, no rich
    other_commands = {f"dialogcheck._cli.{module.split(':')[0]}" for module, _ in COMMANDS.values()} - {"dialogcheck._cli.validate"}
    assert modules.isdisjoint(other_commands), sorted(modules & other_commands)


def test_check_help_imports_no_heavy_parts():
    code, out, _, modules = probe("check", "--help")
    assert code == 0
    assert "Usage: dialogcheck check" in out
    assert top_level(modules).isdisjoint(HEAVY), sorted(top_level(modules) & set(HEAVY))


def test_validate_of_a_bad_file_still_reports_it(tmp_path):
    """The renderers, imported only when needed, still print `path:line:col: message` and JSON."""
    bad = tmp_path / "bad.yml"
    bad.write_text("scenario:\n  name: Bad\n  simulation_context: c\n  max_turns: 0\n")
    expected = f"{bad}:4:14: `max_turns` in `scenario` must be an integer from 1 to 1000, got 0"
    code, out, _, _ = probe("validate", str(bad))
    assert code == 2
    assert out.splitlines() == [expected, "1 file, 0 valid, 1 with problems"]
    code, out, _, _ = probe("validate", str(bad), "--format", "json")
    assert code == 2
    assert json.loads(out)["error"] == {"message": expected.split(": ", 1)[1], "file": str(bad), "line": 4, "column": 14}


@pytest.mark.parametrize("columns", ["80", "52"])
def test_lazy_command_list_is_what_click_prints_for_the_real_commands(columns):
    """The help lines kept in `COMMANDS` stay equal to each command's own, shortened the same way."""
    lazy = LazyGroup(name="dialogcheck", help=cli.help, params=cli.params, context_settings=cli.context_settings)
    eager = click.Group(name="dialogcheck", help=cli.help, params=cli.params, context_settings=cli.context_settings)
    for name in COMMANDS:
        eager.add_command(cli.get_command(click.Context(cli), name), name)
    env = {"COLUMNS": columns}
    lazy_help = CliRunner().invoke(lazy, ["--help"], env=env, prog_name="dialogcheck")
    eager_help = CliRunner().invoke(eager, ["--help"], env=env, prog_name="dialogcheck")
    assert lazy_help.exit_code == eager_help.exit_code == 0
    assert "Commands:" in lazy_help.output
    assert lazy_help.output == eager_help.output
    assert lazy.commands == {}  # the list came from the table, not from importing the commands


def test_every_command_in_the_table_loads():
    for name, (target, _) in COMMANDS.items():
        command = cli.get_command(click.Context(cli), name)
        assert isinstance(command, click.Command) and command.name == name, target


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    return done.stdout.strip()


def test_importing_the_package_imports_no_submodule():
    loaded = _python("import sys, dialogcheck; print(sorted(m for m in sys.modules if m.startswith('dialogcheck')))")
    assert loaded == "['dialogcheck']"


def test_public_names_resolve_on_first_use_and_are_listed():
    out = _python(
        "import dialogcheck\n"
        "from dialogcheck import evaluate, load_scenario, Outcome\n"
        "print(evaluate.__module__, load_scenario.__module__, Outcome.PASS.value, sep='\\n')\n"
        "print(set(dialogcheck.__all__) <= set(dir(dialogcheck)))"
    )
    assert out.splitlines() == ["dialogcheck.judging", "dialogcheck.scenario.load", "pass", "True"]


def test_no_module_is_named_like_a_public_name():
    """A submodule named like a public name would replace it on the package once imported (`evaluate` once did)."""
    import pkgutil

    import dialogcheck

    modules = {info.name for info in pkgutil.iter_modules(dialogcheck.__path__)}
    assert modules and not modules & set(dialogcheck.__all__)


def test_an_unknown_name_is_an_attribute_error():
    out = _python(
        "import dialogcheck\n"
        "try:\n    dialogcheck.no_such_name\nexcept AttributeError as err:\n    print(err)"
    )
    assert out == "module 'dialogcheck' has no attribute 'no_such_name'"



def test_a_mistyped_command_is_still_suggested():
    result = CliRunner().invoke(cli, ["vaildate", "x"])
    assert result.exit_code == 2
    assert "Error: No such command 'vaildate'. Did you mean 'validate'?" in result.output


def test_usage_errors_exit_with_the_bad_input_code():
    from dialogcheck._cli import main, output

    assert main.EXIT_BAD_INPUT == output.EXIT_BAD_INPUT == 2
