"""Loading an environment file: every bad key or value is a load error at its file, line and column, all at once."""

from __future__ import annotations

import builtins
import textwrap
from pathlib import Path

import pytest

from dialogcheck._yaml import env_policy
from dialogcheck.environment import load_environment, project_of
from dialogcheck.environment.faults import Corrupt, Empty, Error, Latency, Malformed, Stale, Timeout
from dialogcheck.environment.tools import PythonCall, Read, Responses, Returns, Write
from dialogcheck.errors import LoadError

from .conftest import SHOP, with_faults, write_environment

TOOL_HEAD = """\
environment:
  tools:
    - name: ping
      description: Answers pong.
      parameters: {type: object, properties: {x: {type: string}}}
"""


def problems(path: Path, **options) -> list[str]:
    with pytest.raises(LoadError) as caught:
        load_environment(path, **options)
    return [str(problem) for problem in caught.value.problems]


def test_the_shop_loads_with_its_tools_state_and_behaviours(shop):
    assert [tool.name for tool in shop.tools] == ["get_order", "cancel_order"]
    assert isinstance(shop.tools[0].behaviour, Read) and isinstance(shop.tools[1].behaviour, Write)
    assert shop.state["orders"]["O1"]["status"] == "placed"
    assert shop.name == "shop" and shop.faults == ()


def test_the_project_of_a_file_in_eval_environments_is_the_folder_holding_eval(tmp_path):
    assert project_of(tmp_path / "eval" / "environments" / "x.yml") == tmp_path
    assert project_of(tmp_path / "elsewhere" / "x.yml") == tmp_path / "elsewhere"


def test_an_unknown_key_is_named_with_the_nearest_valid_one(tmp_path):
    path = write_environment(tmp_path, SHOP + "  fautls: []\n")
    assert problems(path) == [f"{path}:26:3: unknown field `fautls` in `environment` (did you mean `faults`?)"]


def test_two_behaviours_are_refused_at_the_second(tmp_path):
    path = write_environment(tmp_path, TOOL_HEAD + "      returns: pong\n      read: {path: x}\n")
    assert problems(path) == [f"{path}:7:7: tool `ping` has 2 behaviours (`returns`, `read`): give exactly one"]


def test_a_tool_without_behaviour_is_refused(tmp_path):
    path = write_environment(tmp_path, TOOL_HEAD)
    assert problems(path) == [
        f"{path}:3:7: tool `ping` needs a behaviour: one of `returns`, `responses`, `read`, `write`, `python`"
    ]


def test_parameters_that_are_no_json_schema_are_refused_with_the_schema_error(tmp_path):
    path = write_environment(tmp_path, TOOL_HEAD.replace("{type: string}", "{type: strin}") + "      returns: pong\n")
    assert problems(path) == [
        f"{path}:5:19: `parameters` of tool `ping` is not a valid JSON Schema at `properties/x/type`:"
        " 'strin' is not valid under any of the given schemas"
    ]


def test_parameters_must_describe_an_object_and_hold_no_outside_reference(tmp_path):
    path = write_environment(tmp_path, TOOL_HEAD.replace("{type: object, ", "{type: array, ") + "      returns: pong\n")
    assert problems(path) == [
        f"{path}:5:19: `parameters` of tool `ping` must describe an object (`type: object`): a tool's arguments are one JSON object"
    ]
    path = write_environment(tmp_path, TOOL_HEAD.replace("{type: string}", "{$ref: 'https://x.invalid/s.json'}") + "      returns: pong\n")
    assert problems(path) == [
        f"{path}:5:19: `parameters` of tool `ping` holds `$ref: https://x.invalid/s.json`, outside the schema:"
        " only references inside it (`#/...`) are read"
    ]


def test_a_schema_of_an_unknown_draft_is_refused_and_a_known_draft_is_used(tmp_path):
    path = write_environment(tmp_path, TOOL_HEAD.replace("{type: object, ", "{$schema: 'https://x.invalid/draft', type: object, ") + "      returns: pong\n")
    assert problems(path) == [
        f"{path}:5:19: `parameters` of tool `ping` names `$schema: https://x.invalid/draft`, which is no JSON Schema draft jsonschema knows (draft 3 to 2020-12)"
    ]
    draft4 = TOOL_HEAD.replace("{type: object, ", "{$schema: 'http://json-schema.org/draft-04/schema#', type: object, ")
    run = load_environment(write_environment(tmp_path, draft4 + "      returns: pong\n")).start(seed=0)
    assert run.call("ping", {"x": 1}) == {"result": "invalid arguments at `x`: 1 is not of type 'string'", "is_error": True}


def test_a_bad_fault_kind_is_named_with_the_nearest_kind(tmp_path):
    path = write_environment(tmp_path, with_faults("- {tool: get_order, kind: timout}\n"))
    assert problems(path) == [
        f"{path}:27:31: unknown fault kind `timout` in fault 1 of `environment.faults` (did you mean `timeout`?)"
    ]


def test_a_rate_past_1_and_an_on_call_of_0_are_refused(tmp_path):
    path = write_environment(tmp_path, with_faults("- {tool: get_order, kind: error, rate: 1.5}\n- {tool: get_order, kind: error, on_call: 0}\n"))
    assert problems(path) == [
        f"{path}:27:44: `rate` in fault 1 of `environment.faults` must be a number from 0 to 1, got 1.5",
        f"{path}:28:47: `on_call` in fault 2 of `environment.faults` must be an integer from 1 to 10000, got 0",
    ]


def test_every_problem_of_the_file_is_reported_at_once(tmp_path):
    faults = """\
    - {tool: get_ordr, kind: error}
    - {tool: get_order, kind: timeout, status: 503}
    - {tool: cancel_order, kind: stale}
    - {tool: get_order, kind: empty, value: 0}
    - {tool: get_order, kind: corrupt, path: status}
    - {tool: get_order, kind: error, match: {id: O1}}
    - {tool: get_order, kind: latency, delay: 301}
    - {tool: get_order, kind: error, status: 200}
    """
    path = write_environment(tmp_path, with_faults(faults))
    assert problems(path) == [
        f"{path}:27:14: `tool` in fault 1 of `environment.faults` names `get_ordr`, which is not a tool of the environment (did you mean `get_order`?)",
        f"{path}:28:40: unknown field `status` in fault 2 of `environment.faults`",
        f"{path}:29:28: a `stale` fault needs a tool that reads the state (`read` or `python`), and `cancel_order` has `write`",
        f"{path}:30:45: `value` in fault 4 of `environment.faults` must be an empty value: null, \"\", [] or {{}}",
        f"{path}:31:7: fault 5 of `environment.faults` must have exactly one of `set: VALUE`, `delete: true` or `flip: true`, got 0",
        f"{path}:32:46: `match` in fault 6 of `environment.faults` names `id`, which is not a parameter of `get_order`",
        f"{path}:33:47: `delay` in fault 7 of `environment.faults` must be a number from 0 to 300, got 301",
        f"{path}:34:46: `status` in fault 8 of `environment.faults` must be an integer from 400 to 599, got 200",
    ]


def test_paths_and_values_must_name_parameters_and_tables_the_file_has(tmp_path):
    text = SHOP.replace('path: "orders.{order_id}"', 'path: "ordres.{order}"').replace('note: "refund: {reason}"', 'note: "refund: {reasn"')
    path = write_environment(tmp_path, text)
    assert problems(path) == [
        f"{path}:14:20: `{{order}}` in `path` in `read` of tool `get_order` names no parameter of the tool (did you mean `order_id`?)",
        f"{path}:14:20: `path` in `read` of tool `get_order` starts at `ordres`, a table the state does not have (did you mean `orders`?) (its tables: `orders`, `refunds`)",
        f"{path}:24:69: `value` in change 2 of `write` of tool `cancel_order`: a lone `{{` at character 9: write `{{{{` for a literal brace",
    ]


def test_a_change_needs_one_op_and_a_value_for_set(tmp_path):
    text = SHOP.replace("- {set: \"orders.{order_id}.status\", value: cancelled}", "- {set: \"orders.{order_id}.status\"}")
    path = write_environment(tmp_path, text.replace("- {append: refunds,", "- {delete: refunds, append: refunds,"))
    assert problems(path) == [
        f"{path}:23:13: change 1 of `write` of tool `cancel_order` is missing required field `value` (what `set` writes)",
        f"{path}:24:13: change 2 of `write` of tool `cancel_order` must name one path with exactly one of `set`, `append` or `delete`, got 2",
    ]


def test_a_state_file_outside_the_project_is_refused(tmp_path):
    project = tmp_path / "project"
    (tmp_path / "secrets.json").write_text('{"keys": {}}')
    path = write_environment(project, "environment:\n  state: ../secrets.json\n  tools: []\n")
    assert problems(path) == [
        f"{path}:2:10: `state` names the file '../secrets.json': this path is outside the project folder {project.resolve()}: only files inside it can be used",
        f"{path}:3:10: `tools` in `environment` must hold at least one item, got 0",
    ]


def test_a_state_file_linked_out_of_the_project_is_refused(tmp_path):
    project = tmp_path / "project"
    (tmp_path / "secrets.json").write_text('{"keys": {}}')
    (project / "data").mkdir(parents=True)
    (project / "data" / "state.json").symlink_to(tmp_path / "secrets.json")
    path = write_environment(project, TOOL_HEAD.replace("environment:\n", "environment:\n  state: data/state.json\n") + "      returns: pong\n")
    assert problems(path) == [
        f"{path}:2:10: `state` names the file 'data/state.json': this path is outside the project folder {project.resolve()}: only files inside it can be used"
    ]


def test_python_tools_are_refused_under_safe_env(tmp_path):
    (tmp_path / "shop_tools.py").write_text("def refund(state, arguments):\n    return 1\n")
    path = write_environment(tmp_path, TOOL_HEAD + "      python: shop_tools:refund\n")
    message = (
        f"{path}:6:15: `python` of tool `ping` runs code of the project (shop_tools:refund), which --safe-env refuses:"
        " declare the tool with `returns`, `responses`, `read` or `write`"
    )
    assert problems(path, safe_env=True) == [message]
    with env_policy(()):  # what `--safe-env` sets while files load
        assert problems(path) == [message]
    assert isinstance(load_environment(path).tools[0].behaviour, PythonCall)


def test_a_python_module_must_be_in_the_project(tmp_path):
    path = write_environment(tmp_path, TOOL_HEAD + "      python: json:dumps\n")
    assert problems(path) == [f"{path}:6:15: `python` of tool `ping` names the module `json`, which is not a module of the project folder {tmp_path}"]
    path = write_environment(tmp_path, TOOL_HEAD + "      python: not a target\n")
    assert problems(path) == [
        f"{path}:6:15: `python` of tool `ping` must name a function as `module:function` (like `tools.orders:cancel`), got 'not a target'"
    ]


def test_without_jsonschema_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_jsonschema(name, *args, **kwargs):
        if name == "jsonschema" or name.startswith("jsonschema."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jsonschema)
    path = write_environment(tmp_path, SHOP)
    assert problems(path) == [
        f"{path}:11:9: checking a tool's `parameters` needs the jsonschema package: it is one of dialogcheck's dependencies: pip install 'jsonschema>=4'"
    ]


def test_each_behaviour_and_fault_kind_is_read_into_its_class(tmp_path):
    text = SHOP.replace("    - name: cancel_order", """\
    - name: ping
      description: Answers pong.
      parameters: {type: object}
      returns: pong
    - name: lookup
      description: Answers by code.
      parameters: {type: object, properties: {code: {type: string}}}
      responses: {by: code, values: {a: 1, "*": 0}}
    - name: cancel_order""")
    faults = """\
    - {tool: get_order, kind: timeout, delay: 3}
    - {tool: get_order, kind: error, status: 503, message: busy}
    - {tool: get_order, kind: empty, value: []}
    - {tool: get_order, kind: malformed}
    - {tool: get_order, kind: corrupt, path: paid, flip: true}
    - {tool: get_order, kind: stale, behind: 2}
    - {tool: get_order, kind: latency, delay: 0.5, on_call: 2, rate: 0.25, match: {order_id: O1}}
    """
    environment = load_environment(write_environment(tmp_path, text + "  faults:\n" + textwrap.indent(textwrap.dedent(faults), "    ")))
    assert [type(tool.behaviour) for tool in environment.tools] == [Read, Returns, Responses, Write]
    assert environment.tools[2].behaviour == Responses("code", {"a": 1}, 0)
    effects = [fault.effect for fault in environment.faults]
    assert effects[:4] == [Timeout(3.0), Error(503, "busy"), Empty([]), Malformed(None)]
    assert isinstance(effects[4], Corrupt) and (effects[4].path.text, effects[4].action) == ("paid", "flip")
    assert effects[5:] == [Stale(2), Latency(0.5)]
    when = environment.faults[6].when
    assert (when.on_call, when.rate, when.match) == (2, 0.25, {"order_id": "O1"})


def test_a_pattern_past_the_bounds_of_the_pattern_engine_is_refused(tmp_path):
    path = write_environment(tmp_path, TOOL_HEAD.replace("{type: string}", "{type: string, pattern: 'a{100000}'}") + "      returns: pong\n")
    assert problems(path) == [
        f"{path}:5:19: `parameters` of tool `ping` holds the pattern /a{{100000}}/, which cannot be used:"
        " a repeat count of 100,000 is more than the limit of 1,000"
    ]


def test_a_python_module_linked_out_of_the_project_is_refused_and_a_package_module_is_read(tmp_path):
    project = tmp_path / "project"
    (tmp_path / "outside.py").write_text("def f(state, arguments):\n    return 1\n")
    (project / "tools").mkdir(parents=True)
    (project / "linked.py").symlink_to(tmp_path / "outside.py")
    (project / "tools" / "__init__.py").write_text("")
    (project / "tools" / "orders.py").write_text("def cancel(state, arguments):\n    return 'done'\n")
    path = write_environment(project, TOOL_HEAD + "      python: linked:f\n")
    assert problems(path) == [f"{path}:6:15: `python` of tool `ping` names the module `linked`, which is not a module of the project folder {project}"]
    path = write_environment(project, TOOL_HEAD + "      python: tools.orders:cancel\n")
    assert load_environment(path).start(seed=0).call("ping", {}) == {"result": "done", "is_error": False}


def test_every_problem_of_the_tools_is_reported_at_once(tmp_path):
    text = """\
    environment:
      tools:
        - name: ping
          description: Answers pong.
          parameters: {type: object}
          returns: pong
        - name: ping
          description: Again.
          parameters: {type: object}
          returns: pong
        - name: "has space"
          description: Bad name.
          parameters: {type: object}
          returns: pong
        - name: quiet
          parameters: {type: object}
          retruns: pong
        - name: weather
          description: By city.
          parameters: {type: object, properties: {city: {type: string}}}
          responses: {by: town, values: {Paris: sunny}}
    """
    path = write_environment(tmp_path, text)
    assert problems(path) == [
        f"{path}:7:7: tool 2 is named `ping`, like tool 1: tool names must differ",
        f"{path}:11:13: `name` in tool 3 of `environment.tools` must be 1 to 64 letters, digits, `_` or `-` (what LLM providers take), got 'has space'",
        f"{path}:17:7: unknown field `retruns` in tool 4 of `environment.tools` (did you mean `returns`?)",
        f"{path}:15:7: tool `quiet` is missing required field `description`",
        f"{path}:15:7: tool `quiet` needs a behaviour: one of `returns`, `responses`, `read`, `write`, `python`",
        f"{path}:21:23: `by` in `responses` of tool `weather` names `town`, which is not a parameter of the tool",
    ]
