"""The state checks are documented where a user looks for assertion keys (docs/checks-reference.md), and the example of the environment
reference's "Checking the end state" loads and fails, on the agent whose cancel timed out, with the details shown."""

from __future__ import annotations

import dataclasses
import re
from functools import partial

import orjson
import pytest

from dialogcheck._yaml import parse_yaml, plain
from dialogcheck.checks.state import STATE_CHECKS
from dialogcheck.environment import load_environment
from dialogcheck.events.model import World
from tests.conftest import REPO, bot, check_from_yaml, conv, user
from tests.environment.conftest import write_environment

CHECKS = (REPO / "docs" / "checks-reference.md").read_text(encoding="utf-8")
REFERENCE = (REPO / "docs" / "environment-reference.md").read_text(encoding="utf-8")
SECTION = REFERENCE.partition("\n## Checking the end state\n")[2].partition("\n## ")[0]
KEYS = [cls.key for cls in STATE_CHECKS]


@pytest.mark.parametrize("key", KEYS)
def test_each_state_key_has_a_row_in_the_assertions_table_and_in_the_reference(key):
    table = CHECKS.partition("\n## Assertions in short\n")[2].partition("\n## ")[0]
    assert f"\n| `{key}` |" in table
    assert f"\n| `{key}` |" in SECTION


def _example_checks():
    (block,) = [b for b in re.findall(r"^```yaml\n(.*?)^```", SECTION, re.S | re.M) if b.startswith("scenario:")]
    items = plain(parse_yaml(block, "example.yml"))["scenario"]["goals"]["assertions"]
    return [check_from_yaml(orjson.dumps(item).decode()) for item in items]


@pytest.fixture
def reference_environment(tmp_path):
    """The reference's first environment file (its fault times the first cancel out)."""
    block = re.findall(r"^```yaml\n(environment:.*?)^```", REFERENCE, re.S | re.M)[0]
    return load_environment(write_environment(tmp_path, block))


def _judged(environment, faults: bool):
    """Each example check on an agent that cancels O1 once and says it is cancelled, whatever it was answered."""
    run = environment.start(seed=0, faults=faults, sleep=lambda seconds: None)
    run.call("cancel_order", {"order_id": "O1", "reason": "late"})
    initial = orjson.dumps(run.initial_state)
    world = World(environment.name, initial, orjson.dumps(run.state), partial(environment.replay, initial))
    record = dataclasses.replace(conv(user("Cancel O1, it is late."), *run.events, bot("Your order O1 is cancelled.")), world=world)
    return {check.key: check.evaluate(record) for check in _example_checks()}


def test_the_example_passes_when_the_cancel_went_through(reference_environment):
    results = _judged(reference_environment, faults=False)
    assert sorted(results) == sorted(KEYS)
    assert all(result.passed for result in results.values()), {k: r.detail for k, r in results.items()}


def test_the_example_fails_with_the_details_the_reference_shows_when_the_cancel_timed_out(reference_environment):
    shown = dict(re.findall(r"^- `(state_[a-z_]+)`: `(.*)`$", SECTION, re.M))
    results = _judged(reference_environment, faults=True)
    failed = {key: result.detail for key, result in results.items() if not result.passed}
    assert failed == shown and len(shown) == 3


def test_the_missing_path_shown_is_what_state_equals_says(reference_environment):
    (shown,) = re.findall(r"^``(orders\.O9\.status: .*)``\.$", SECTION, re.M)
    check = check_from_yaml("state_equals: {path: orders.O9.status, value: cancelled}")
    run = reference_environment.start(seed=0, sleep=lambda seconds: None)
    record = dataclasses.replace(conv(user("hi")), world=World("shop", orjson.dumps(run.initial_state), orjson.dumps(run.state)))
    assert check.evaluate(record).detail == shown
