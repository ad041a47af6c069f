"""Load scenario files (docs/scenario-reference.md): the Mantle form plus dialogcheck's extensions."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from functools import partial
from pathlib import Path

from .._fields import Fields, Problems, file_body, load_definition_file
from .._yaml import Pos, YMap, YNode, YScalar, YSeq, describe, plain
from ..checks import ASSERTIONS, Check
from ..checks.load import Context, read_tagged
from ..checks.state import StateCheck, state_paths
from ..environment.catalog import Catalog
from ..environment.load_faults import parse_faults
from ..environment.model import Environment
from ..environment.state import parse_state
from ..errors import LoadError, did_you_mean
from ..events.model import FRAMEWORK_TOOLS
from .model import DEFAULT_MAX_TURNS, SCENARIO_TYPES, Goals, Scenario, UserProfile
from .traits import unknown_trait

#: The fields that describe the simulated user beyond its brief (`UserProfile`), each a string.
USER_FIELDS = ("persona", "known_info", "unknown_info", "user_instructions")
SCENARIO_FIELDS = ("name", "type", "simulation_context", "setup", "goals", "max_turns", "script", "tags", *USER_FIELDS, "personas", "environment")
GOALS_FIELDS = ("criteria", "assertions", "sop")
#: The fields of a scenario's `environment` when it is a mapping: which one, and what the scenario gives instead.
ENVIRONMENT_FIELDS = ("name", "state", "faults")


def parse_assertion(node: YNode, problems: Problems, index: int, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> Check | None:
    """One item of `goals.assertions`, `{key: ...}`: the check of that key in `ASSERTIONS`, read by its class's schema."""
    context = Context(framework_tools=framework_tools)
    return read_tagged(node, problems, f"assertion {index}", ASSERTIONS, "unknown assertion `{key}`{hint}", context)


def parse_assertions(node: YNode, problems: Problems, pos: Pos, framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> tuple[Check, ...]:
    """`goals.assertions`; `framework_tools` is the project's setting (which tools are never counted runs)."""
    seq = problems.expect_seq(node, "`goals.assertions`", pos)
    if seq is None:
        return ()
    checks = (parse_assertion(item, problems, i + 1, framework_tools) for i, item in enumerate(seq.items))
    return tuple(check for check in checks if check is not None)


def _goals(fields: Fields, problems: Problems, framework_tools: frozenset[str]) -> Goals:
    node = fields.get("goals")
    if node is None or (hasattr(node, "value") and node.value is None):
        return Goals()
    mapping = problems.expect_map(node, "`goals`", node.pos)
    if mapping is None:
        return Goals()
    goals = Fields(mapping, problems, "`goals`", GOALS_FIELDS)
    criteria = goals.strings("criteria") or ()
    assertions_node = goals.get("assertions")
    assertions = parse_assertions(assertions_node, problems, goals.pos("assertions"), framework_tools) if assertions_node else ()
    sop = None
    if goals.has("sop"):
        from ..sop.load import parse_steps

        node = goals.get("sop")
        if isinstance(node, YScalar) and isinstance(node.value, str):
            # Never opened: a scenario names no other file, so it cannot reach one outside the project.
            problems.add(
                f"`goals.sop` must be a list of steps written here, got the string {node.value!r}:"
                " it does not name an SOP file (apply an SOP file with `dialogcheck check --sop FILE`)",
                node.pos,
            )
        else:
            sop = parse_steps(node, problems, goals.pos("sop"), "`goals.sop`", framework_tools)
    return Goals(criteria, assertions, sop)


def _setup(fields: Fields, problems: Problems) -> dict:
    setup = fields.mapping("setup")
    if setup is None:
        return {}
    setup_fields = Fields(setup, problems, "`setup`", ("initial_slots",))
    slots = setup_fields.mapping("initial_slots")
    return plain(slots) if slots is not None else {}


def _personas(fields: Fields, problems: Problems) -> tuple[str, ...]:
    """`personas`: built-in trait names, each once; an unknown or repeated one is a problem at its item."""
    names = fields.strings("personas") or ()
    seq = fields.get("personas")
    items = [i for i in seq.items if isinstance(i, YScalar) and isinstance(i.value, str) and i.value.strip()] if isinstance(seq, YSeq) else []
    seen: set[str] = set()
    for name, item in zip(names, items):
        if (why := unknown_trait(name)) is not None:
            problems.add(f"{why} (in `personas` of `scenario`)", item.pos)
        elif name in seen:
            problems.add(f"`personas` in `scenario` names the trait {name!r} twice", item.pos)
        seen.add(name)
    return names


def _environment(node: YNode | None, problems: Problems, pos: Pos, catalog: Catalog, default: Environment | None) -> Environment | None:
    """`environment`: a name, or `{name, state?, faults?}` giving the scenario's own starting state or faults (read
    against the environment's tools, into a copy of it); `default` (the config's) when it has none."""
    if node is None or (isinstance(node, YScalar) and node.value is None):
        return default
    if isinstance(node, YScalar) and isinstance(node.value, str):
        return catalog.get(node.value, problems, node.pos, "`environment`")
    if not isinstance(node, YMap):
        problems.add(f"`environment` in `scenario` must be an environment's name or a mapping {{name, state, faults}}, got {describe(node)}", node.pos)
        return None
    fields = Fields(node, problems, "`environment`", ENVIRONMENT_FIELDS)
    name = fields.string("name", required=True)
    environment = catalog.get(name, problems, fields.pos("name"), "`environment.name`") if name is not None else None
    if environment is None:
        return None
    if fields.has("state"):
        state_json = parse_state(fields.get("state"), problems, fields.pos("state"), catalog.root)
        if state_json is not None:  # the digest covers the state the scenario gives, which its own file may not hold
            digest = hashlib.sha256(environment.digest.encode() + b"\0" + state_json).hexdigest()
            environment = replace(environment, state_json=state_json, digest=digest)
    if fields.has("faults"):
        tools = {tool.name: tool for tool in environment.tools}
        environment = replace(environment, faults=parse_faults(fields.get("faults"), problems, fields.pos("faults"), tools), faults_tested=True)
    return environment


def _refuse_state_checks_without(environment: Environment | None, goals: Goals, node: YNode | None, problems: Problems) -> None:
    """A problem at each state check of a scenario that names no environment (it could only ever error), and at each
    expected call of `state_matches_replay` naming a tool the environment does not have."""
    items = node.values["assertions"].items if isinstance(node, YMap) and isinstance(node.values.get("assertions"), YSeq) else []  # type: ignore[union-attr]  # a YSeq
    for number, (check, item) in enumerate(zip(goals.assertions, items), 1):
        if not isinstance(check, StateCheck):
            continue
        if environment is None:
            problems.add(
                f"assertion {number} (`{check.key}`) judges the state of the agent's environment, but this scenario names no"
                " `environment` (nor does eval/conftest.yml): add `environment: NAME` (eval/environments/NAME.yml)",
                item.pos,
            )
            continue
        tables = environment.state
        for path in state_paths(check):
            table = path.split(".", 1)[0]
            if path != "$" and table not in tables:
                known = ", ".join(tables) or "none"
                problems.add(
                    f"assertion {number} (`{check.key}`) names the path `{path}`, whose table `{table}`{did_you_mean(table, tables)}"
                    f" is not in the starting state of environment `{environment.name}` (its tables: {known})",
                    item.pos,
                )
        tools = {tool.name for tool in environment.tools}
        for index, call in enumerate(getattr(check, "calls", ()), 1):
            if call.tool not in tools:
                known = ", ".join(sorted(tools))
                problems.add(
                    f"call {index} of assertion {number} (`{check.key}`) names the tool `{call.tool}`{did_you_mean(call.tool, tools)},"
                    f" which environment `{environment.name}` does not have (its tools: {known})",
                    item.pos,
                )


def parse_scenario(
    root: YMap | None,
    problems: Problems,
    path: str,
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS,
    environments: Catalog | None = None,
    default_environment: Environment | None = None,
) -> Scenario | None:
    """A scenario file's tree; `framework_tools` is its project's setting (eval/conftest.yml), `FRAMEWORK_TOOLS` by default.
    `environments` finds what `environment:` names (default: the project the file is in); `default_environment` is
    the config's, for a scenario that names none."""
    body = file_body(root, problems, "scenario", "a scenario")
    if body is None:
        return None
    fields = Fields(body, problems, "`scenario`", SCENARIO_FIELDS)
    name = fields.string("name", required=True)
    context = fields.string("simulation_context", required=True)
    kind = fields.choice("type", SCENARIO_TYPES)
    max_turns = fields.integer("max_turns", minimum=1, maximum=1000)
    script = fields.strings("script")
    tags = fields.strings("tags") or ()
    user = UserProfile(*(fields.string(name) for name in USER_FIELDS))
    personas = _personas(fields, problems)
    initial_slots = _setup(fields, problems)
    goals = _goals(fields, problems, framework_tools)
    catalog = environments if environments is not None else Catalog.for_file(path)
    environment = _environment(fields.get("environment"), problems, fields.pos("environment"), catalog, default_environment)
    if not problems:
        _refuse_state_checks_without(environment, goals, fields.get("goals"), problems)
    if problems or name is None or context is None:
        return None
    return Scenario(
        slug=Path(path).stem,
        name=name,
        simulation_context=context,
        path=path,
        type=kind,
        initial_slots=initial_slots,
        goals=goals,
        max_turns=max_turns if max_turns is not None else DEFAULT_MAX_TURNS,
        script=script,
        tags=tags,
        user=user,
        personas=personas,
        framework_tools=framework_tools,
        environment=environment,
    )


def load_scenario(
    path: str | Path,
    environ: dict[str, str] | None = None,
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS,
    environments: Catalog | None = None,
    default_environment: Environment | None = None,
) -> Scenario:
    """Read and validate one scenario file; raises `LoadError` listing every problem.

    `framework_tools` is the project's setting (`ProjectConfig.framework_tools`): which tool names are never
    counted runs, for `tools_within_one_turn` and `goals.sop`. `environments` finds the environment the
    scenario names (default: in the project its file is in); `default_environment` is the one of a scenario
    that names none (its project's config's: `definitions.ProjectSettings.default_environment`). The problems
    of an environment file it names are raised with the scenario's, each at its own file.
    """
    catalog = environments if environments is not None else Catalog.for_file(path)
    parse = partial(parse_scenario, framework_tools=frozenset(framework_tools), environments=catalog, default_environment=default_environment)
    try:
        scenario = load_definition_file(path, parse, "a scenario", environ)
    except LoadError as err:
        raise LoadError([*err.problems, *catalog.take_file_problems()]) from None
    return scenario
