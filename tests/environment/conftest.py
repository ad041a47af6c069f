"""A project folder with an environment file in it, written by each test; the shop environment most tests use."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dialogcheck.environment import Environment, load_environment

#: A shop: orders to read and cancel, and refunds a cancel appends to.
SHOP = """\
environment:
  state:
    orders:
      O1: {id: O1, status: placed, total: 30, paid: true}
      O2: {id: O2, status: shipped, total: 12, paid: true}
    refunds: []
  tools:
    - name: get_order
      description: Look up an order by its id.
      parameters:
        type: object
        properties: {order_id: {type: string}}
        required: [order_id]
      read: {path: "orders.{order_id}"}
    - name: cancel_order
      description: Cancel an order and refund it.
      parameters:
        type: object
        properties: {order_id: {type: string}, reason: {type: string}}
        required: [order_id, reason]
      write:
        changes:
          - {set: "orders.{order_id}.status", value: cancelled}
          - {append: refunds, value: {order_id: "{order_id}", note: "refund: {reason}"}}
        returns: {order_id: "{order_id}", status: cancelled}
"""


def write_environment(root: Path, text: str, name: str = "shop") -> Path:
    """`text` (dedented) as `eval/environments/NAME.yml` of the project at `root`."""
    path = root / "eval" / "environments" / f"{name}.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def with_faults(faults: str) -> str:
    """The shop with a `faults:` list (YAML lines, indented for `environment:`)."""
    return SHOP + "  faults:\n" + textwrap.indent(textwrap.dedent(faults), "    ")


class Sleeps:
    """An injected `sleep` that records the delays asked for and never waits."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def shop(tmp_path: Path) -> Environment:
    return load_environment(write_environment(tmp_path, SHOP))


#: For the served environment's tests: a bound on a hang (never a wait), and two runs' ids as `run` makes them.
HANG = 60.0
RUN_A = "sim-0b6f4c1e-2f4e-4a43-9a57-3f2d1c0e9a11"
RUN_B = "sim-7d1e2c3b-4a5f-4e6d-8c7b-9a0f1e2d3c4b"


@pytest.fixture
def server():
    """An environment server on a free loopback port, stopped after the test."""
    from dialogcheck.environment.serve import EnvironmentServer

    with EnvironmentServer() as serving:
        yield serving
