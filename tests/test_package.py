"""The public API is pinned, and imports point one way: events <- checks <- loaders/evaluate <- report <- cli."""

import ast
from pathlib import Path

import dialogcheck

SRC = Path(dialogcheck.__file__).parent

# Which top-level parts of the package each layer may import from.
ALLOWED = {
    "events": {"events", "errors"},
    "checks": {"events", "checks", "errors"},
    "judge": {"events", "judge", "checks", "errors", "llm", "config"},
    "llm": {"llm", "config", "errors"},
}
NEVER_IMPORTS_CLI = {"events", "checks", "judge", "scenario", "sop", "report", "evaluate", "definitions"}


def test_public_names_are_pinned():
    assert sorted(dialogcheck.__all__) == sorted(
        [
            "CheckResult",
            "Conversation",
            "ConversationResult",
            "CriterionResult",
            "LoadError",
            "Outcome",
            "Problem",
            "Scenario",
            "__version__",
            "evaluate",
            "evaluate_sop",
            "iter_conversations",
            "iter_results",
            "load_conversation",
            "load_scenario",
            "load_sop",
        ]
    )
    for name in dialogcheck.__all__:
        assert hasattr(dialogcheck, name), name


def _imported_parts(path: Path) -> set[str]:
    """Top-level dialogcheck parts a module imports through relative imports."""
    parts = set()
    depth = len(path.relative_to(SRC).parts) - 1
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            up = node.level - 1
            if up > depth:
                continue
            base = list(path.relative_to(SRC).parts[:depth - up]) if up <= depth else []
            target = base + (node.module.split(".") if node.module else [])
            if target:
                parts.add(target[0].removesuffix(".py"))
            else:
                parts.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dialogcheck."):
            parts.add(node.module.split(".")[1])
    return parts


def test_imports_point_one_way():
    for layer, allowed in ALLOWED.items():
        for module in (SRC / layer).rglob("*.py"):
            imported = {p.lstrip("_") for p in _imported_parts(module)} - {"yaml", "fields", "redact", "paths"}
            assert imported <= allowed, f"{module.relative_to(SRC)} imports {sorted(imported - allowed)}"


def test_nothing_imports_the_cli():
    for module in SRC.rglob("*.py"):
        top = module.relative_to(SRC).parts[0].removesuffix(".py")
        if top in NEVER_IMPORTS_CLI:
            assert "_cli" not in _imported_parts(module), module
