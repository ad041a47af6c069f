"""docs/sop-reference.md stays true: every example loads, and every type, field and op the loader takes is documented.

An evaluator's table is compared with its class's schema (`checks.schema`), the one place its fields are
declared: the names both ways, and what each row says a field is (its type, bounds, required or default).
A field added to a class without a line in the reference, documented but not read, or documented with
another type or bound, fails here.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from msgspec.structs import replace
from ruamel.yaml import YAML

from dialogcheck import load_scenario, load_sop
from dialogcheck.checks import patterns
from dialogcheck.checks.schema import SchemaField, item_type, schema
from dialogcheck.checks.sop import SOP_EVALUATORS
from dialogcheck.checks.sop_confirmation import DEFAULT_CONFIRMATION_TURNS
from dialogcheck.config import load_config
from dialogcheck.events.model import FRAMEWORK_TOOLS
from dialogcheck.sop.load import SOP_FIELDS, STEP_FIELDS
from tests.conftest import EXAMPLE, REPO, plain_env
from tests.sop.conftest import steps_from_yaml

DOC = REPO / "docs" / "sop-reference.md"
TEXT = DOC.read_text(encoding="utf-8")
YAML_BLOCKS = re.findall(r"^```yaml\n(.*?)^```", TEXT, re.S | re.M)


def _section(title: str) -> str:
    """The text under the heading `title`, up to the next heading of its level or above."""
    match = re.search(rf"^(#+) {re.escape(title)}$", TEXT, re.M)
    assert match is not None, f"no section {title!r} in {DOC.name}"
    body = TEXT[match.end() :]
    end = re.search(rf"^#{{1,{len(match.group(1))}}} ", body, re.M)
    return body[: end.start()] if end else body


def _rows(section: str) -> list[dict[str, str]]:
    """Each table of a section as {first column's name: second column} (the header and rule rows left out)."""
    tables, rows = [], []
    for line in section.splitlines() + [""]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]
            tables.append({re.fullmatch(r"`([^`]+)`", name).group(1): second for name, second, *_ in cells})
            rows = []
    return tables


def _tables(section: str) -> list[list[str]]:
    """The names in the first column of each table of a section."""
    return [list(table) for table in _rows(section)]


def _kind_of(field: SchemaField) -> str:
    """A field's type as the reference words it."""
    if field.spec.regex:
        return "regular expression"
    if field.spec.keyed_by:
        return "mapping"
    if item_type(field.type) is str:
        return "list of slugs" if field.spec.tool_slug else "list of strings"
    kinds = {str: "string", bool: "true or false", int: "integer", float: "number"}
    kind = kinds.get(field.type, "a string, a number or a boolean")
    return kind + (f" ≥ {field.spec.minimum:g}" if field.spec.minimum is not None else "")


def _described(field: SchemaField, default) -> str:
    """What an evaluator's table says of a field: its type and bound, then `required` or a default other than none."""
    if field.required:
        return f"{_kind_of(field)}, required"
    return _kind_of(field) + (f", default {default}" if default is not None else "")


def _takes(op) -> str:
    """What an op's row says it takes: each field with its type, or nothing."""
    fields = [field for field in schema(op) if field.attr != "path"]
    words = {"string": "a string", "number": "a number", "regular expression": "a regular expression", "list of strings": "a list of strings"}
    return ", ".join(f"`{f.key}`: {words.get(_kind_of(f), _kind_of(f))}" for f in fields) or "nothing"


def _kind(block: str) -> str:
    value = YAML(typ="safe").load(block)
    if isinstance(value, list):
        return "steps"
    return "sop" if "sop" in value else "scenario" if "scenario" in value else "config"


def test_the_reference_has_examples_of_every_kind():
    assert sorted({_kind(block) for block in YAML_BLOCKS}) == ["config", "scenario", "sop", "steps"]


@pytest.mark.parametrize("number", range(len(YAML_BLOCKS)))
def test_every_yaml_example_loads(tmp_path, number):
    block = YAML_BLOCKS[number]
    kind = _kind(block)
    if kind == "steps":
        assert steps_from_yaml(block).steps
    elif kind == "config":
        path = tmp_path / "eval" / "conftest.yml"
        path.parent.mkdir()
        path.write_text(block)
        load_config(path)
    else:
        path = tmp_path / f"example_{number}.yml"
        path.write_text(block)
        (load_sop if kind == "sop" else load_scenario)(path, environ={})


@pytest.mark.parametrize("kind", sorted(SOP_EVALUATORS))
def test_every_evaluator_has_its_section_with_exactly_the_fields_of_its_class(kind):
    cls = SOP_EVALUATORS[kind]
    section = _section(f"`{kind}`")
    fields, *ops = _rows(section)
    read = {field.key: field for field in schema(cls) if field.spec.setting is None}
    assert sorted(fields) == sorted(read)
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    assert {key: _described(field, defaults[field.attr]) for key, field in read.items()} == fields
    keyed = [field for field in read.values() if field.spec.keyed_by]
    if keyed:
        (field,) = keyed
        (op_rows,) = ops
        assert list(op_rows) == list(field.spec.tags)
        assert {name: _takes(op) for name, op in field.spec.tags.items()} == op_rows
    else:
        assert ops == []
    examples = re.findall(r"^```yaml\n(.*?)^```", section, re.S | re.M)
    assert [type(step.evaluator) for block in examples for step in steps_from_yaml(block).steps] == [cls]


def test_the_comparison_with_the_schema_sees_a_wrong_type_a_bound_and_required_ness():
    """The row check above fails when the reference and the class disagree on what a field is."""
    cls = SOP_EVALUATORS["confirmation_requested"]
    window = next(field for field in schema(cls) if field.key == "withinLastNTurns")
    assert _described(window, DEFAULT_CONFIRMATION_TURNS) == "integer ≥ 1, default 4"
    assert _described(replace(window, spec=replace(window.spec, minimum=0)), 4) != "integer ≥ 1, default 4"
    assert _described(replace(window, required=True), 4) == "integer ≥ 1, required"
    assert _described(replace(window, type=float), 4) == "number ≥ 1, default 4"


def test_the_seven_evaluators_are_all_there_is():
    headings = re.findall(r"^### `([a-z_]+)`$", TEXT, re.M)
    assert headings == list(SOP_EVALUATORS)


def test_the_sop_file_and_step_fields_are_the_loaders():
    (sop_fields,) = _tables(_section("An SOP file"))
    assert sorted(sop_fields) == sorted(SOP_FIELDS)
    (step_fields,) = _tables(_section("Steps"))
    assert step_fields == list(STEP_FIELDS)


def test_the_numbers_in_the_reference_are_the_codes():
    listed = re.search(r"its skills: (.*?)\. They never", TEXT, re.S).group(1)
    assert set(re.findall(r"`([a-z_]+)`", listed)) == FRAMEWORK_TOOLS
    assert f"integer ≥ 1, default {DEFAULT_CONFIRMATION_TURNS}" in TEXT
    limits = _section("Regular expressions")
    for number in (patterns.MAX_PATTERN_CHARS, patterns.MAX_REPEAT, patterns.MAX_NESTING, patterns.MAX_PARTS):
        assert f"{number:,}" in limits
    assert patterns.CHECK_BUDGET == 1.0 and "share one\n  second" in limits


def test_the_output_shown_is_what_the_command_prints():
    """Lines ending in `…` are cut in the reference: the command's line starts with what is shown."""
    block = re.search(r"^```text\n\$ (dialogcheck .*?)\n(.*?)^```", TEXT, re.S | re.M)
    command, shown = block.group(1).split(), block.group(2).splitlines()
    env = plain_env()
    done = subprocess.run([str(Path(sys.executable).parent / "dialogcheck"), *command[1:]], cwd=EXAMPLE,
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 1  # "and it exits with code 1"
    printed = done.stdout.splitlines()[: len(shown)]
    assert len(printed) == len(shown)
    for want, got in zip(shown, printed):
        assert got.startswith(want.removesuffix(" …")) if want.endswith(" …") else got == want


def test_the_pages_that_speak_of_sop_steps_and_framework_tools_link_the_reference():
    pages = [REPO / "docs" / "checks-reference.md", REPO / "docs" / "concepts.md"]
    links = [re.findall(r"\]\(sop-reference\.md(#[a-z0-9-]+)?\)", page.read_text(encoding="utf-8")) for page in pages]
    assert all(links), "each page links the reference"
    anchors = {"#" + re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-") for title in re.findall(r"^#+ (.*)$", TEXT, re.M)}
    assert {link for found in links for link in found if link} <= anchors
