"""The quick tier's list names tests that exist: a renamed or moved test must not drop into the quick tier unseen."""

from __future__ import annotations

import re

from tests.conftest import REPO
from tests.slow import SLOW_MODULES, SLOW_TESTS


def test_every_slow_module_exists():
    assert sorted(m for m in SLOW_MODULES if not (REPO / m).is_file()) == []


def test_every_slow_test_is_a_function_of_its_module():
    missing = []
    for entry in sorted(SLOW_TESTS):
        module, function = entry.split("::")
        path = REPO / module
        if not path.is_file() or not re.search(rf"^(async )?def {function}\(", path.read_text(encoding="utf-8"), re.M):
            missing.append(entry)
    assert missing == []
