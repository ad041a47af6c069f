"""Importing a module of a project (a Python agent, a `python:` tool) with the project folder first on the path.

The path is changed for the import only, under one lock, and a module of the same name cached from elsewhere
is dropped first when the project holds its own: module names are process-wide, and a second project whose
agent is also `agent.py` must not be handed the first one's.
"""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path
from typing import Any

_PATH_LOCK = threading.Lock()


def project_holds(module_name: str, root: Path) -> bool:
    """Whether the project folder has the top-level module or package of `module_name` itself."""
    top = module_name.split(".")[0]
    return (root / f"{top}.py").is_file() or (root / top / "__init__.py").is_file()


def _forget_foreign(module_name: str, root: Path) -> None:
    top = module_name.split(".")[0]
    cached = sys.modules.get(top)
    if cached is None or not project_holds(module_name, root):
        return
    origin = getattr(cached, "__file__", None)
    if origin is not None and Path(origin).resolve().is_relative_to(root.resolve()):
        return
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


def import_from_project(module_name: str, root: Path) -> Any:
    """`importlib.import_module(module_name)` with `root` first on `sys.path`; raises whatever the import raises."""
    entry = str(root)
    with _PATH_LOCK:
        _forget_foreign(module_name, root)
        added = entry not in sys.path
        if added:
            sys.path.insert(0, entry)
        try:
            return importlib.import_module(module_name)  # sys.modules caches it for every later import
        finally:
            if added and entry in sys.path:
                sys.path.remove(entry)
