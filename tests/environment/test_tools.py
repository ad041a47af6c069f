"""Each behaviour of a tool, answering and failing as the agent sees it."""

from __future__ import annotations

import textwrap

from dialogcheck.environment import load_environment

from .conftest import write_environment

TOOLS = """\
environment:
  state:
    orders:
      O1: {status: placed, items: [{sku: A}]}
      "7": {status: placed, items: []}
  tools:
    - name: ping
      description: Answers pong.
      parameters: {type: object}
      returns: {answer: pong}
    - name: weather
      description: The weather of a city.
      parameters: {type: object, properties: {city: {type: string}, days: {type: integer}}}
      responses:
        by: city
        values: {Paris: sunny, "*": unknown}
    - name: by_days
      description: Answers by a number.
      parameters: {type: object, properties: {days: {type: integer}}}
      responses: {by: days, values: {"3": three}}
    - name: get_order
      description: An order.
      parameters: {type: object, properties: {order_id: {type: [string, integer]}}, required: [order_id]}
      read: {path: "orders.{order_id}", not_found: "no order {order_id}"}
    - name: first_item
      description: An order's first item.
      parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
      read: {path: "orders.{order_id}.items.0"}
    - name: add_item
      description: Add an item.
      parameters: {type: object, properties: {order_id: {type: string}, sku: {type: string}, count: {type: integer}}, required: [order_id, sku, count]}
      write:
        changes:
          - {append: "orders.{order_id}.items", value: {sku: "{sku}", count: "{count}", label: "{count} x {sku} {{boxed}}"}}
          - {set: "orders.{order_id}.status", value: changed}
        returns: {added: "{sku}"}
    - name: drop_order
      description: Delete an order.
      parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
      write:
        changes: [{delete: "orders.{order_id}"}]
"""


def start(tmp_path, extra: str = ""):
    return load_environment(write_environment(tmp_path, TOOLS + textwrap.indent(textwrap.dedent(extra), "    "))).start(seed=1)


def test_returns_answers_the_same_copy_every_call(tmp_path):
    run = start(tmp_path)
    first = run.call("ping", {})
    first["result"]["answer"] = "changed by the agent"
    assert run.call("ping", {}) == {"result": {"answer": "pong"}, "is_error": False}


def test_responses_answer_by_the_argument_with_the_fallback_else_an_error(tmp_path):
    run = start(tmp_path)
    assert run.call("weather", {"city": "Paris"}) == {"result": "sunny", "is_error": False}
    assert run.call("weather", {"city": "Oslo"}) == {"result": "unknown", "is_error": False}
    assert run.call("weather", {}) == {"result": "unknown", "is_error": False}
    assert run.call("by_days", {"days": 3}) == {"result": "three", "is_error": False}  # a number matches by its text
    assert run.call("by_days", {"days": 4}) == {"result": "not found: no answer for `days` = 4", "is_error": True}
    assert run.call("by_days", {}) == {"result": "not found: no answer for `days` not given", "is_error": True}


def test_read_looks_up_a_record_and_a_missing_key_is_the_agents_error(tmp_path):
    run = start(tmp_path)
    assert run.call("get_order", {"order_id": "O1"}) == {"result": {"status": "placed", "items": [{"sku": "A"}]}, "is_error": False}
    assert run.call("get_order", {"order_id": 7}) == {"result": {"status": "placed", "items": []}, "is_error": False}
    assert run.call("get_order", {"order_id": "O9"}) == {"result": "no order O9", "is_error": True}
    assert run.call("first_item", {"order_id": "O1"}) == {"result": {"sku": "A"}, "is_error": False}
    assert run.call("first_item", {"order_id": "7"}) == {"result": "not found: orders.7.items.0", "is_error": True}


def test_an_argument_holding_dots_stays_one_step_of_the_path(tmp_path):
    run = start(tmp_path)
    assert run.call("first_item", {"order_id": "O1.items"}) == {"result": "not found: orders.O1.items", "is_error": True}


def test_write_makes_its_changes_with_values_from_the_arguments_and_returns(tmp_path):
    run = start(tmp_path)
    assert run.call("add_item", {"order_id": "O1", "sku": "B", "count": 2}) == {"result": {"added": "B"}, "is_error": False}
    assert run.state["orders"]["O1"] == {
        "status": "changed",
        "items": [{"sku": "A"}, {"sku": "B", "count": 2, "label": "2 x B {boxed}"}],  # `{count}` alone keeps its type
    }
    assert run.call("drop_order", {"order_id": "7"}) == {"result": None, "is_error": False}
    assert list(run.state["orders"]) == ["O1"]


def test_a_write_that_fails_halfway_changes_nothing(tmp_path):
    run = start(tmp_path, """\
    - name: half
      description: Sets one order, then a missing one.
      parameters: {type: object}
      write:
        changes:
          - {set: orders.O1.status, value: half}
          - {set: orders.O9.status, value: half}
    """)
    assert run.call("half", {}) == {"result": "not found: orders.O9", "is_error": True}
    assert run.state == run.initial_state
    assert run.call("drop_order", {"order_id": "O9"}) == {"result": "not found: orders.O9", "is_error": True}


def test_python_tools_get_the_state_and_arguments_and_their_exceptions_are_tool_errors(tmp_path):
    (tmp_path / "shop_tools.py").write_text(textwrap.dedent("""\
        def refund(state, arguments):
            order = state["orders"][arguments["order_id"]]
            order["status"] = "refunded"
            if arguments.get("fail"):
                raise ValueError("the bank said no")
            return {"refunded": arguments["order_id"]}

        def not_json(state, arguments):
            return {1, 2}

        def bad_state(state, arguments):
            state["orders"]["O1"]["tags"] = {"a set"}
            return "done"
    """))
    run = start(tmp_path, """\
    - name: refund
      description: Refund an order.
      parameters: {type: object, properties: {order_id: {type: string}, fail: {type: boolean}}}
      python: shop_tools:refund
    - name: not_json
      description: Answers a set.
      parameters: {type: object}
      python: shop_tools:not_json
    - name: bad_state
      description: Leaves a set in the state.
      parameters: {type: object}
      python: shop_tools:bad_state
    """)
    assert run.call("refund", {"order_id": "O1", "fail": True}) == {"result": "ValueError: the bank said no", "is_error": True}
    assert run.state["orders"]["O1"]["status"] == "placed"  # what it changed before raising is not kept
    assert run.call("refund", {"order_id": "O1"}) == {"result": {"refunded": "O1"}, "is_error": False}
    assert run.state["orders"]["O1"]["status"] == "refunded"
    assert run.call("refund", {"order_id": "O9"}) == {"result": "KeyError: 'O9'", "is_error": True}
    assert run.call("not_json", {}) == {"result": "the tool returned a value that is not JSON (a set)", "is_error": True}
    before = run.state
    assert run.call("bad_state", {}) == {"result": "the tool left the state holding a value that is not JSON: the change is not kept", "is_error": True}
    assert run.state == before


def test_a_python_tool_that_cannot_be_loaded_answers_an_error_on_its_call(tmp_path):
    (tmp_path / "broken_tools.py").write_text("raise RuntimeError('broken on import')\n")
    run = start(tmp_path, """\
    - name: broken
      description: Cannot load.
      parameters: {type: object}
      python: broken_tools:anything
    """)
    assert run.call("broken", {}) == {
        "result": "the tool's function `broken_tools:anything` could not be loaded: RuntimeError: broken on import",
        "is_error": True,
    }
