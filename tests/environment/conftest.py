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
