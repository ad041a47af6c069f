"""The public API is pinned, imports point one way through every part of the package, and no module imports itself back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dialogcheck

SRC = Path(dialogcheck.__file__).parent

#: Every top-level part of the package, lowest layer first. A part may import its own layer and those
#: below it, never one above: helpers with no domain, the conversation record, reading fields of YAML
#: files, the checks, the files
#: that define checks, the project's config with its LLM clients, the typed results, the judge, judging
#: one conversation, the engines that move data, the connectors and the simulated user, the library that runs
#: checks and simulations (which never renders: its callers hand it the renderer), the renderers, the library
#: function that runs scenarios with the one renderer of results folders, the commands as library functions
#: (what each says, which the CLI prints and the MCP server answers with), the pytest plugin, and the CLI.
LAYERS: list[set[str]] = [
    {"errors", "_paths", "_project_import", "_redact", "_safe_env", "_shown", "_yaml"},
    {"events"},
    {"_fields"},
    {"checks"},
    {"lone", "scenario", "sop", "subject", "pairing", "importers", "environment"},
    {"llm", "config", "definitions"},
    {"results"},
    {"compare"},
    {"judge"},
    {"judging", "calibration", "blame"},
    {"engines"},
    {"connectors", "simulate"},
    {"runner", "checking"},
    {"report"},
    {"batches"},
    {"commands"},
    {"testing", "_pytest_runs", "pytest_plugin"},
    {"_cli"},
]
LAYER_OF = {part: number for number, layer in enumerate(LAYERS) for part in layer}


def test_public_names_are_pinned():
    assert sorted(dialogcheck.__all__) == sorted(
        [
            "BatchResult",
            "CheckResult",
            "Comparison",
            "Conversation",
            "ConversationResult",
            "DialogcheckError",
            "JudgedResult",
            "LoadError",
            "Outcome",
            "Problem",
            "RunResult",
            "Scenario",
            "UnfinishedBatch",
            "__version__",
            "check_conversations",
            "compare_results",
            "evaluate",
            "evaluate_sop",
            "iter_conversations",
            "iter_results",
            "load_conversation",
            "load_scenario",
            "load_sop",
            "run_scenarios",
        ]
    )
    for name in dialogcheck.__all__:
        assert hasattr(dialogcheck, name), name


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The dialogcheck modules a module imports (at its top or inside a function), as dotted names from the package."""
    package = _module_name(path).split(".") if path.name == "__init__.py" else _module_name(path).split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            target = [*base, *(node.module.split(".") if node.module else [])]
            if node.module:
                found.add(".".join(target))
            else:
                found.update(".".join([*target, alias.name]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dialogcheck."):
            found.add(node.module.removeprefix("dialogcheck."))
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("dialogcheck.") for a in node.names if a.name.startswith("dialogcheck."))
    return {name for name in found if name}


#: Every module but the package's facade (`__init__.py` re-exports the public names lazily).
MODULES = {_module_name(path): path for path in SRC.rglob("*.py") if path != SRC / "__init__.py"}


def test_every_part_of_the_package_has_a_layer():
    parts = {name.split(".")[0] for name in MODULES}
    assert parts == set(LAYER_OF), f"parts without a layer: {sorted(parts - set(LAYER_OF))}; layers of no part: {sorted(set(LAYER_OF) - parts)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module):
    mine = LAYER_OF[module.split(".")[0]]
    above = sorted(name for name in _imports(MODULES[module]) if LAYER_OF.get(name.split(".")[0], -1) > mine)
    assert not above, f"{module} (layer {mine}) imports {above}, from layers above it"


def _resolve(name: str) -> str | None:
    """The module an imported name is: itself, or the module a `from package import name` reads it from."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A path of imports that comes back to where it started, or None."""
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> list[str] | None:
        if module in trail:
            return [*trail[trail.index(module):], module]
        if module in done:
            return None
        for target in sorted(graph.get(module, ())):
            found = visit(target, [*trail, module])
            if found:
                return found
        done.add(module)
        return None

    return next((found for module in sorted(graph) if (found := visit(module, []))), None)


def test_the_cycle_finder_finds_a_planted_cycle_and_passes_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_anywhere():
    graph = {module: {target for name in _imports(path) if (target := _resolve(name)) and target != module} for module, path in MODULES.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_the_built_wheel_holds_py_typed(tmp_path):
    """Type checkers read the package's annotations only when the installed package carries `py.typed`."""
    import subprocess
    import sys
    import zipfile

    root = SRC.parent.parent
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(root)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("dialogcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dialogcheck/py.typed" in names and "dialogcheck/checking.py" in names


def test_an_oserror_becomes_a_message_in_one_place():
    """`errors.os_reason` and `LoadError.of_os` say what the system refused; no module words it again."""
    import re

    from dialogcheck.errors import LoadError, os_reason

    err = PermissionError(13, "Permission denied", "/x/y.yml")
    assert os_reason(err) == "Permission denied" and os_reason(OSError("odd")) == "odd"
    assert str(LoadError.of_os("cannot read file", err).problems[0]) == "/x/y.yml:1:1: cannot read file: Permission denied"
    assert str(LoadError.of_os("cannot read", err, "z.json", 4).problems[0]) == "z.json:4:1: cannot read: Permission denied"
    worded = [str(p) for p in SRC.rglob("*.py") if re.search(r"strerror or ", p.read_text(encoding="utf-8")) and p.name != "errors.py"]
    assert worded == []


def test_every_error_dialogcheck_raises_to_a_caller_is_a_dialogcheck_error():
    from dialogcheck.checking import UnfinishedBatch
    from dialogcheck.connectors.base import AgentError, AgentSetupError
    from dialogcheck.engines.ray_engine import EngineError, RayUnavailable
    from dialogcheck.errors import DialogcheckError, LoadError
    from dialogcheck.judge.base import JudgeError
    from dialogcheck.llm.base import LLMError
    from dialogcheck.pairing import PairError

    for error in (LoadError, UnfinishedBatch, AgentError, AgentSetupError, EngineError, RayUnavailable, JudgeError, LLMError, PairError):
        assert issubclass(error, DialogcheckError), error
    assert issubclass(AgentSetupError, ValueError) and issubclass(PairError, ValueError)  # as callers caught them before
    assert dialogcheck.DialogcheckError is DialogcheckError
