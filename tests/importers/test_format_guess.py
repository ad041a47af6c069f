"""A file read as the wrong format: one error naming the format it is in, instead of one per item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogcheck.errors import LoadError
from dialogcheck.importers import FORMAT_NAMES, IMPORTERS, guess_format, import_file

SAMPLE = Path(__file__).parent / "data" / "tau_bench_airline_sample.json"
MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def _lines(*items) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


#: A small file in each format, as its tool writes it, many items each.
FILES = {
    "rasa-tracker": ("native.jsonl", _lines(*[{"event": "user", "text": "hi"}, {"event": "bot", "text": "hello"}] * 30)),
    "rasa-proto": ("proto.jsonl", _lines(*({"conversation_id": "c", "sequence": i, "user": {"text": "hi"}} for i in range(30)))),
    "openai": ("openai.jsonl", _lines(*({"id": f"c{i}", "messages": MESSAGES} for i in range(30)))),
    "tau-bench": ("runs.json", json.dumps(json.loads(SAMPLE.read_text()) * 10, indent=2)),
    "tau2": ("results.json", json.dumps({"info": {}, "tasks": [], "simulations": [
        {"id": f"r{i}", "task_id": "1", "trial": i, "termination_reason": "user_stop", "messages": MESSAGES} for i in range(30)
    ]})),
    "otlp": ("trace.jsonl", _lines(*({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": "chat", "startTimeUnixNano": "1",
        "attributes": [{"key": "gen_ai.input.messages", "value": {"stringValue": '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]'}}],
    }]}]}]} for i in range(30)))),
}
assert FILES.keys() == IMPORTERS.keys()


@pytest.fixture
def files(tmp_path):
    found = {}
    for fmt, (name, text) in FILES.items():
        (tmp_path / name).write_text(text)
        found[fmt] = tmp_path / name
    return found


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_each_format_reads_its_own_file(files, fmt):
    assert len(list(import_file(files[fmt], fmt))) >= 1


@pytest.mark.parametrize("actual", sorted(FILES))
@pytest.mark.parametrize("given", sorted(FILES))
def test_the_wrong_format_gives_one_error_naming_the_right_one(files, actual, given):
    if actual == given:
        return
    try:
        list(import_file(files[actual], given))
    except LoadError as err:
        (problem,) = err.problems
        assert problem.message == (
            f"this looks like {FORMAT_NAMES[actual]}, not {FORMAT_NAMES[given]} (`{given}`): the format is `{actual}`"
        )
        assert problem.file == str(files[actual])
    else:  # some files read as another format too (OpenAI objects are tau2 runs without tau2's keys)
        assert (actual, given) in {("openai", "tau2"), ("rasa-tracker", "rasa-proto")}


@pytest.mark.parametrize(
    ("item", "fmt"),
    [
        ({"task_id": 1, "traj": []}, "tau-bench"),
        ({"simulations": []}, "tau2"),
        ({"id": "r", "messages": [], "termination_reason": "x"}, "tau2"),
        ({"messages": []}, "openai"),
        ({"role": "user", "content": "hi"}, "openai"),
        ([{"role": "user", "content": "hi"}], "openai"),
        ({"event": "user", "text": "hi"}, "rasa-tracker"),
        ({"sender_id": "c", "events": [{"event": "user"}]}, "rasa-tracker"),
        ([{"event": "user"}], "rasa-tracker"),
        ({"conversation_id": "c", "sequence": 0, "user": {}}, "rasa-proto"),
        ({"conversation_id": "c", "events": [{"sequence": "0", "bot": {}}]}, "rasa-proto"),
        ({"resourceSpans": []}, "otlp"),
        ({"whatever": 1}, None),
        ([], None),
        ("text", None),
    ],
)
def test_what_an_item_looks_like(item, fmt):
    assert guess_format(item) == fmt


def test_a_results_file_written_on_one_line_reads_as_its_runs(files):
    """`json.dump` without indent writes a tau2 results file on one line, which reads like JSONL of one object."""
    assert "\n" not in files["tau2"].read_text()
    assert [c.conversation_id for c in import_file(files["tau2"], "tau2")][:2] == ["task-1-trial-0", "task-1-trial-1"]


def test_check_with_the_wrong_input_format_says_it_once(files):
    from click.testing import CliRunner

    from dialogcheck._cli.main import cli
    from tests.conftest import EXAMPLE

    scenario = EXAMPLE / "eval" / "scenarios" / "card_replace_cancel.yml"
    result = CliRunner().invoke(cli, ["check", "--input-format", "openai", "--scenario", str(scenario), str(files["tau-bench"])])
    assert result.exit_code == 2
    assert result.stderr == (
        f"{files['tau-bench']}:2:3: this looks like tau-bench trajectories, not OpenAI chat messages (`openai`): the format is `tau-bench`\n"
    )
